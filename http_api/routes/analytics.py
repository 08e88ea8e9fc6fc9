from http_api.declare import op
from http_api.routing import Call
from service.analytics import ops as analytics
from service.analytics.shapes import FollowerAnalytics, FollowersQuery


def followers(call: Call) -> FollowerAnalytics:
    return analytics.follower_analytics(actor=call.actor, **dict(call.query))


OPERATIONS = [
    op("GET", "/analytics/followers", followers, summary="Follower counts over time, per account",
       tag="Analytics", operation_id="getFollowerAnalytics", query=FollowersQuery, answer=FollowerAnalytics,
       description="One entry per account of the workspace that the filters and the key's profiles leave, "
                   "oldest account first (disconnected accounts keep their history). Counts come from a "
                   "snapshot taken once a UTC day of every connected account (first a minute after it is "
                   "connected; `switchboard analytics snapshot` takes one at once); platforms that do not "
                   "share the count (WhatsApp, Meta Ads, LinkedIn without member analytics) have none. "
                   "`series` has one point per day, week (dated its Monday) "
                   "or month (dated its first day) of the window `fromDate`..`toDate` (both included, at most "
                   "366 days): the last count taken in the bucket's days of the window, or null when none was. "
                   "`change` is the difference from the latest earlier point that has a count. `growth` runs "
                   "from the window's first count to its last (`currentFollowers`); `growthPercent` is it as a "
                   "percentage of the first count, rounded to 2 decimals, null when that count is 0 or unknown. "
                   "`posts` counts the account's posts published in the window, of the `source` asked. "
                   "`fromDate` after `toDate`, a longer window, or a value that is not valid → 422 naming the "
                   "field; an `accountId` of another workspace → 404, outside the key's profiles → 403."),
]
