from http_api.declare import op
from http_api.routing import Call, Reply
from kit.pagination import Page
from kit.shapes import page_of
from service.posts import importing, publishing, queue
from service.posts import ops as posts
from service.posts.shapes import (
    DeleteQuery,
    ImportCreated,
    ImportQuery,
    ImportReport,
    Post,
    PostDeleted,
    PostIn,
    PostingQueueRecord,
    PostQuery,
    PostUpdate,
    QueueIn,
)


def create(call: Call) -> Reply:
    return Reply(posts.create(actor=call.actor, **dict(call.body)), status=201)


def resume_create(call: Call, post_id: str) -> Reply:
    """A retry under the key of a request that died after storing its post: that post, never a second."""
    return Reply(posts.get(actor=call.actor, post_id=post_id), status=201)


def list_(call: Call) -> Page:
    return posts.list_posts(actor=call.actor, **dict(call.query))


def get(call: Call) -> Post:
    return posts.get(actor=call.actor, post_id=call.path["id"])


def update(call: Call) -> Post:
    return posts.update(actor=call.actor, post_id=call.path["id"], **dict(call.body))


def delete(call: Call) -> PostDeleted:
    return posts.delete(actor=call.actor, post_id=call.path["id"], from_platforms=call.query.from_platforms)


def retry(call: Call) -> Post:
    return publishing.retry(actor=call.actor, post_id=call.path["id"])


def import_csv(call: Call) -> Reply:
    result = importing.import_csv(actor=call.actor, csv_text=call.body, dry_run=call.query.dry_run)
    return Reply(result, status=200 if isinstance(result, ImportReport) else 201)


def resume_import(call: Call, post_id: str) -> Reply:
    """A retry under the key of an import that died after saving: its posts, never a second batch."""
    return Reply(importing.created_by_import(actor=call.actor, first_post_id=post_id), status=201)


def get_queue(call: Call) -> PostingQueueRecord:
    return queue.get(actor=call.actor, account_id=call.path["id"])


def put_queue(call: Call) -> PostingQueueRecord:
    return queue.put(actor=call.actor, account_id=call.path["id"], **dict(call.body))


_RULES = ("Targets are checked against their platforms before anything is saved (422, `details` per target, e.g. "
          "`targets[1].content`): X 280 as X counts (a link 23, CJK and emoji 2); Telegram 4,096 characters, 1,024 "
          "as a caption with media; LinkedIn 3,000; Instagram needs an image or a video (a carousel at most 10); "
          "TikTok and YouTube a video; TikTok `options.privacyLevel` one of the account's publish options "
          "(an unaudited TikTok app may only post `SELF_ONLY`). WhatsApp accounts do not publish posts.")

_IMPORT = op(
    "POST", "/posts/import", import_csv, summary="Import posts from a CSV file", tag="Posts",
    operation_id="importPosts", ok=201, answer=ImportCreated, query=ImportQuery, raw_body="text/csv", waits=True,
    resume=resume_import,
    description="The body is a `text/csv` file (UTF-8, at most 1 MiB) with a header row: `content` and `accounts` "
                "(account ids separated by spaces: the post's targets) are required, `scheduledFor`, `timezone` "
                "(as when creating a post; neither: a draft), `mediaUrls` (https URLs separated by spaces, imported "
                "into the media library) and `firstComment` are optional. At most 1,000 rows; rows are numbered "
                "from 1, the first after the header. Every row passes the rules of `POST /v1/posts`.\n\n"
                "`?dryRun=true` → 200 `{rows, valid, errors: [{row, field, message}]}` and nothing is saved (a dry "
                "run judges a media URL by its extension; the import reads the bytes). Without it → 201 "
                "`{created: [postId, ...]}` in the file's order: all rows or none. Any invalid row → 422 whose "
                "`error.errors` is that same list (and `details` names `rows[n].column`); a file that is not a "
                "CSV of these columns → 422 naming `body`; another Content-Type → 415. " + _RULES)
# The dry run's answer, beside the import's 201.
_IMPORT.responses[200] = ImportReport

OPERATIONS = [
    op("POST", "/posts", create, summary="Create a post: draft, scheduled or published now", tag="Posts",
       operation_id="createPost", ok=201, body=PostIn, answer=Post, transaction="own", errors=(409,),
       resume=resume_create,
       description="No `scheduledFor`, `publishNow` or `addToQueue` → `draft`. `scheduledFor` → `scheduled` "
                   "(`post.scheduled`), "
                   "published within a scheduler tick and a second of its time. `publishNow` → `publishing` at "
                   "once, every target in parallel. `addToQueue` → `scheduled`, each target at the next free slot "
                   "of its account's posting queue (no queue → 422 naming the target); `scheduledFor` shows the "
                   "first of them. Each target is published once: then `post.published`, "
                   "`post.partial` or `post.failed`. With an `Idempotency-Key`, one key is one post, also when the "
                   "first request died after storing it. " + _RULES),
    op("GET", "/posts", list_, summary="List posts, newest first", tag="Posts", operation_id="listPosts",
       query=PostQuery, answer=page_of(Post),
       description="`from` and `to` (instants with `Z` or an offset, either alone) keep the posts scheduled or "
                   "published in `[from, to)` (a target published in it counts): what a calendar shows. A bad "
                   "instant, one outside 1970-01-01..9999-12-30, or `to` not after `from` → 422 naming the field."),
    op("GET", "/posts/{id}", get, summary="Get a post", tag="Posts", operation_id="getPost", answer=Post,
       description="The shape of `post.*` event data."),
    op("PUT", "/posts/{id}", update, summary="Replace a draft or scheduled post", tag="Posts",
       operation_id="updatePost", body=PostUpdate, answer=Post, transaction="own", errors=(409,),
       description="Draft or scheduled only (else 409); the same fields and rules as creating. " + _RULES),
    op("DELETE", "/posts/{id}", delete, summary="Delete a post", tag="Posts", operation_id="deletePost",
       query=DeleteQuery, answer=PostDeleted, transaction="own", errors=(409,),
       description="A draft, scheduled (`post.cancelled`) or failed post is deleted. A published or partial post → "
                   "409, unless `?fromPlatforms=true`: it is then deleted on each platform that lets apps delete "
                   "posts (Instagram with Instagram Login does not: its entry says so) and here."),
    op("POST", "/posts/{id}/retry", retry, summary="Publish the failed targets again", tag="Posts",
       operation_id="retryPost", answer=Post, body=None, errors=(409,),
       description="Only `failed` targets (and `unknown` ones, which a person has checked are not live) are "
                   "published again; published targets are never published twice. None to retry → 409."),
    op("GET", "/accounts/{id}/queue", get_queue, summary="An account's posting queue", tag="Posts",
       operation_id="getPostingQueue", answer=PostingQueueRecord,
       description="Weekly slots (`weekday` 1 = Monday … 7, `time` HH:MM in `timezone`) that `addToQueue` fills, and "
                   "the next free ones as instants. An account never given slots answers an empty queue in UTC."),
    op("PUT", "/accounts/{id}/queue", put_queue, summary="Set an account's posting queue", tag="Posts",
       operation_id="putPostingQueue", body=QueueIn, answer=PostingQueueRecord,
       description="Replaces the slots (at most 100; duplicates dropped). Posts already in the queue keep their "
                   "times; new ones take the next slot that no queued post of the account holds. An unknown time "
                   "zone → 422."),
    _IMPORT,
]
