"""LinkedIn: OAuth 2.0 (`www.linkedin.com/oauth/v2/authorization`, `POST /oauth/v2/accessToken`),
OpenID `GET /v2/userinfo`, the versioned Posts API (`POST /rest/posts`, id in `x-restli-id`;
`DELETE /rest/posts/{urn}`), Images API (`POST /rest/images?action=initializeUpload` then `PUT`;
several make a `multiImage` post), Videos API (`POST /rest/videos?action=initializeUpload`, a `PUT`
per part, `finalizeUpload`, `GET /rest/videos/{urn}` until `AVAILABLE`) and
`GET /rest/memberFollowersCount?q=me`. Posts are made as the member (`urn:li:person:<sub>`).

Organizations are a separate product with an app of its own: LinkedIn's Community Management API
must be the only product of its app, so its consent (`organizations`) uses that app's client
(`SWITCHBOARD_LINKEDIN_ORG_CLIENT_ID`), asks only its scopes, and never calls `/v2/userinfo`: the
organizations come from `GET /rest/organizationAcls?q=roleAssignee`. Each posts as
`urn:li:organization:{id}` with that app's token."""

from __future__ import annotations

import datetime as dt
from typing import Any, ClassVar
from urllib.parse import quote

import httpx2

from platforms._common import BaseAdapter, counts_from_gains, expires_at, merge_refreshed, utc_today
from platforms.base import (
    AccountContext,
    Capabilities,
    ConnectedIdentity,
    FollowerPoint,
    GrantChoice,
    Indeterminate,
    MediaItem,
    PlatformFailure,
    PublishedPost,
    PublishPending,
    ReauthRequired,
    Rejected,
    RetryLater,
    Unsupported,
)
from platforms.http import generic_failure, json_body, redact, retry_after_seconds
from platforms.linkedin.rules import MAX_IMAGES, VIDEO_MAX_BYTES, VIDEO_MIN_BYTES, LinkedInPostRules

# LinkedIn reads `commentary` as "little text": these characters are markup (mentions, hashtags,
# templates), and an unescaped one cuts the post there while the API still answers 201.
LITTLE_TEXT_RESERVED = frozenset("\\|{}@[]()<>#*_~")


def escape_little_text(text: str) -> str:
    return "".join(f"\\{char}" if char in LITTLE_TEXT_RESERVED else char for char in text)


# The "Share on LinkedIn" product with OpenID Connect sign-in: what an ordinary app is granted.
# (`r_member_social` is closed to new apps; asking for it fails the whole consent.)
SCOPES = ("openid", "profile", "w_member_social")
# The Community Management API's permissions, asked by its own app only: page access (the member's
# roles on organizations, `organizationAcls`: `rw_organization_admin`), and posting and reading as
# the organization (`w_organization_social`, `r_organization_social`)
# (https://learn.microsoft.com/linkedin/marketing/community-management/community-management-api-migration-guide).
ORGANIZATION_SCOPES = ("rw_organization_admin", "w_organization_social", "r_organization_social")
ORGANIZATIONS = "organizations"  # the product's name; its app's client is `linkedin_org`
ORGANIZATION_CLIENT = "linkedin_org"
# Member analytics (the Community Management API), granted to approved apps only: without it the
# follower count is not available, and is not asked for.
ANALYTICS_SCOPE = "r_member_profileAnalytics"


def linkedin_classify(response: httpx2.Response, secrets: list[str]) -> PlatformFailure:
    body = json_body(response)
    status = response.status_code
    if not isinstance(body, dict):
        return generic_failure(response, secrets)
    if isinstance(body.get("error"), str):
        message = redact(str(body.get("error_description") or body["error"]), secrets)
        if body["error"] in ("invalid_grant", "invalid_request"):
            return ReauthRequired(message)
        return Rejected(message, str(body["error"]))
    message = redact(str(body.get("message") or "LinkedIn refused the request"), secrets)
    if status == 429:
        return RetryLater(message, retry_after_seconds(response.headers, 60.0))
    if status == 401:
        return ReauthRequired(message)
    if status >= 500:
        return RetryLater(message, 30.0)
    return Rejected(message, str(body.get("code") or body.get("serviceErrorCode") or status))


class LinkedInAdapter(BaseAdapter):
    platform = "linkedin"
    display_name = "LinkedIn"
    post_rules = LinkedInPostRules()
    # The member token lasts 60 days and, without a partner's refresh token, cannot be renewed: the
    # renewal kind flags the account a week before it lapses, while the token still works.
    lapsing_credentials: ClassVar[tuple[str, ...]] = ("expiresAt",)
    classify = staticmethod(linkedin_classify)
    capabilities = Capabilities(
        post_text_limit=3000,
        post_media="optional",
        max_media=MAX_IMAGES,
        publish=True,
        delete_post=True,
        oauth=True,
        followers=True,
        follower_history_days=365,  # an organization's time-bound follower statistics: 12 months
    )
    video_poll_seconds = 10.0
    products = (ORGANIZATIONS,)
    choice_kind = "member"

    def _headers(self, account: AccountContext) -> dict[str, str]:
        token = account.credentials.get("accessToken")
        if not isinstance(token, str) or not token:
            raise ReauthRequired("the account has no access token")
        return {
            "Authorization": f"Bearer {token}",
            "LinkedIn-Version": self.config.linkedin_version,
            "X-Restli-Protocol-Version": "2.0.0",
        }

    def _api(self, account: AccountContext, method: str, path: str, **kwargs: Any) -> httpx2.Response:
        return self._call(
            method,
            f"{self.endpoints.api}{path}",
            headers=self._headers(account),
            secrets=account.secrets(),
            **kwargs,
        )

    # -- connection ------------------------------------------------------------------------
    def authorize_url(self, *, state: str, redirect_uri: str) -> str:
        client = self.config.oauth_client(self.platform)
        return self._authorize(
            "/oauth/v2/authorization",
            {
                "response_type": "code",
                "client_id": client.client_id,
                "redirect_uri": redirect_uri,
                "state": state,
                "scope": " ".join(SCOPES),
            },
        )

    def product_authorize_url(self, product: str, *, state: str, redirect_uri: str) -> str:
        """The Community Management API app's consent: its client, its scopes alone."""
        if product != ORGANIZATIONS:
            raise Unsupported(f"LinkedIn has no {product} product here")
        client = self.config.oauth_client(ORGANIZATION_CLIENT)
        return self._authorize("/oauth/v2/authorization", {
            "response_type": "code", "client_id": client.client_id, "redirect_uri": redirect_uri, "state": state,
            "scope": " ".join(ORGANIZATION_SCOPES)})

    def _token(self, form: dict[str, str], secrets: list[str], app: str | None = None) -> dict[str, Any]:
        client = self.config.oauth_client(ORGANIZATION_CLIENT if app == ORGANIZATIONS else self.platform)
        response = self._call(
            "POST",
            f"{self.endpoints.oauth}/oauth/v2/accessToken",
            data={**form, "client_id": client.client_id, "client_secret": client.client_secret},
            secrets=[client.client_secret, *secrets],
        )
        return json_body(response) or {}

    def exchange_code(self, *, code: str, redirect_uri: str, state: str = "") -> ConnectedIdentity:
        answer = self._token(
            {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}, [code]
        )
        credentials: dict[str, Any] = {
            "accessToken": answer["access_token"],
            "refreshToken": answer.get("refresh_token"),
            "expiresAt": expires_at(answer.get("expires_in")),
            "refreshExpiresAt": expires_at(answer.get("refresh_token_expires_in")),
            "scope": answer.get("scope"),
        }
        me = json_body(self._api(AccountContext("", credentials), "GET", "/v2/userinfo")) or {}
        sub = str(me["sub"])
        credentials["authorUrn"] = f"urn:li:person:{sub}"
        return ConnectedIdentity(sub, me.get("email"), me.get("name"), credentials)

    def exchange_product_code(self, product: str, *, code: str, redirect_uri: str) -> list[GrantChoice]:
        """The organizations the member administers (`GET /rest/organizationAcls?q=roleAssignee` with
        `role=ADMINISTRATOR`, named by `GET /rest/organizations?ids=List(...)`), each an account
        posting as `urn:li:organization:{id}` with the Community Management app's token."""
        if product != ORGANIZATIONS:
            raise Unsupported(f"LinkedIn has no {product} product here")
        answer = self._token({"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri},
                             [code], ORGANIZATIONS)
        credentials: dict[str, Any] = {
            "accessToken": answer["access_token"],
            "refreshToken": answer.get("refresh_token"),
            "expiresAt": expires_at(answer.get("expires_in")),
            "refreshExpiresAt": expires_at(answer.get("refresh_token_expires_in")),
            "scope": answer.get("scope"),
            "app": ORGANIZATIONS,
        }
        context = AccountContext("", credentials)
        acls = json_body(self._api(context, "GET", "/rest/organizationAcls", params={
            "q": "roleAssignee", "role": "ADMINISTRATOR", "state": "APPROVED"})) or {}
        ids = [str(item["organization"]).rsplit(":", 1)[-1] for item in acls.get("elements") or []
               if isinstance(item, dict) and str(item.get("organization", "")).startswith("urn:li:organization:")]
        ids = [value for value in dict.fromkeys(ids) if value.isdigit()]
        if not ids:
            raise Rejected("the LinkedIn member administers no organization", "no_organizations")
        # Rest.li's list syntax, its parentheses and commas as they are.
        found = json_body(self._api(context, "GET", f"/rest/organizations?ids=List({','.join(ids)})")) or {}
        results = found.get("results") or {}
        choices = []
        for org_id in ids:
            org = results.get(org_id) or {}
            choices.append(GrantChoice("organization", ConnectedIdentity(
                org_id, org.get("vanityName"), org.get("localizedName"),
                {**credentials, "authorUrn": f"urn:li:organization:{org_id}"})))
        return choices

    def refresh_credentials(self, account: AccountContext) -> dict[str, Any]:
        refresh = account.credentials.get("refreshToken")
        if not isinstance(refresh, str) or not refresh:
            # Share on LinkedIn grants no refresh token: programmatic refresh is for LinkedIn's
            # approved partners (https://learn.microsoft.com/linkedin/shared/authentication/programmatic-refresh-tokens).
            raise ReauthRequired("LinkedIn grants this app no refresh token: a person must connect the account "
                                 "again before its 60-day token lapses")
        answer = self._token({"grant_type": "refresh_token", "refresh_token": refresh}, account.secrets(),
                             account.credentials.get("app"))
        return merge_refreshed(account.credentials, answer)

    # -- reading ---------------------------------------------------------------------------
    def follower_count(self, account: AccountContext) -> int:
        author = str(account.credentials.get("authorUrn", ""))
        if author.startswith("urn:li:organization:"):
            return self.organization_follower_count(account, author)
        granted = str(account.credentials.get("scope") or "").replace(",", " ").split()
        if ANALYTICS_SCOPE not in granted:
            raise Unsupported(f"LinkedIn shares a member's follower count only with apps granted {ANALYTICS_SCOPE}")
        answer = json_body(self._api(account, "GET", "/rest/memberFollowersCount", params={"q": "me"})) or {}
        elements = answer.get("elements") or [{}]
        return int(elements[0].get("memberFollowersCount", 0))

    def organization_follower_count(self, account: AccountContext, organization: str) -> int:
        """`GET /rest/networkSizes/{organization urn}?edgeType=COMPANY_FOLLOWED_BY_MEMBER`."""
        answer = json_body(self._api(account, "GET", f"/rest/networkSizes/{quote(organization, safe='')}",
                                     params={"edgeType": "COMPANY_FOLLOWED_BY_MEMBER"})) or {}
        return int(answer.get("firstDegreeSize", 0))

    def follower_history(self, account: AccountContext, *, days: int) -> list[FollowerPoint]:
        """An organization's time-bound follower statistics, a day each:
        `GET /rest/organizationalEntityFollowerStatistics?q=organizationalEntity&organizationalEntity=
        {urn}&timeIntervals=(timeRange:(start:{ms},end:{ms}),timeGranularityType:DAY)`, the followers
        gained each day (organic and paid), counted back from `networkSizes` now. LinkedIn gives none
        for a member."""
        author = str(account.credentials.get("authorUrn", ""))
        if not author.startswith("urn:li:organization:"):
            raise Unsupported("LinkedIn gives past follower counts for an organization, not for a member")
        days = max(1, min(days, self.capabilities.follower_history_days))
        today = utc_today()
        start = dt.datetime.combine(today - dt.timedelta(days=days - 1), dt.time(), dt.UTC)
        end = dt.datetime.combine(today, dt.time(), dt.UTC)
        # Rest.li 2.0's object syntax: its parentheses, colons and commas as they are, the URN encoded.
        intervals = (f"(timeRange:(start:{int(start.timestamp() * 1000)},end:{int(end.timestamp() * 1000)}),"
                     "timeGranularityType:DAY)")
        path = (f"/rest/organizationalEntityFollowerStatistics?q=organizationalEntity"
                f"&organizationalEntity={quote(author, safe='')}&timeIntervals={intervals}")
        answer = json_body(self._api(account, "GET", path)) or {}
        gains: dict[dt.date, int] = {}
        for element in answer.get("elements") or []:
            started = (element.get("timeRange") or {}).get("start") if isinstance(element, dict) else None
            if not isinstance(started, int):
                continue
            gained = element.get("followerGains") or {}
            day = dt.datetime.fromtimestamp(started / 1000, dt.UTC).date()
            gains[day] = int(gained.get("organicFollowerGain") or 0) + int(gained.get("paidFollowerGain") or 0)
        return counts_from_gains(self.organization_follower_count(account, author), gains, days)

    def publish_options(self, account: AccountContext) -> dict[str, Any]:
        return {"platform": self.platform, "visibility": ["PUBLIC", "CONNECTIONS"], "textLimit": 3000,
                "maxImages": MAX_IMAGES, "videoBytes": [VIDEO_MIN_BYTES, VIDEO_MAX_BYTES],
                "firstComment": {"maxLength": 1250}}

    # -- publishing ------------------------------------------------------------------------
    def _author(self, account: AccountContext) -> str:
        return str(account.credentials.get("authorUrn") or f"urn:li:person:{account.platform_account_id}")

    def _upload_image(self, account: AccountContext, item: MediaItem) -> str:
        init = (
            json_body(
                self._api(
                    account,
                    "POST",
                    "/rest/images",
                    params={"action": "initializeUpload"},
                    json={"initializeUploadRequest": {"owner": self._author(account)}},
                )
            )
            or {}
        )
        value = init["value"]
        self.http.request(
            "PUT",
            str(value["uploadUrl"]),
            classify=linkedin_classify,
            secrets=account.secrets(),
            content=self._read_media(item),
            headers={**self._headers(account), "Content-Type": item.content_type},
        )
        return str(value["image"])

    def publish_step(
        self, account: AccountContext, *, text: str, media: list[MediaItem], options: dict[str, Any],
        progress: dict[str, Any] | None,
    ) -> PublishedPost | PublishPending:
        """Images: each uploaded (initialize, PUT) then the post (one image, or `multiImage` of 2 to
        20). A video: `POST /rest/videos?action=initializeUpload` (its parts), one `PUT` per part (a
        step each, the part's `ETag` kept), `finalizeUpload`, status polls until `AVAILABLE`, then the
        post referencing it. Upload steps may run twice; the post may not (`repeatable=False`)."""
        video = next((m for m in media if m.is_video), None)
        if video is not None and len(media) > 1:
            raise Rejected("a LinkedIn post takes one video alone, or up to 20 images", "media_unsupported")
        if len(media) > MAX_IMAGES:
            raise Rejected(f"a LinkedIn post takes at most {MAX_IMAGES} images", "too_many_items")
        phase = (progress or {}).get("phase")
        if video is None or phase == "post":
            return self._post(account, text, media, options, video_urn=(progress or {}).get("video"))
        if progress is None:
            init = json_body(self._api(account, "POST", "/rest/videos", params={"action": "initializeUpload"}, json={
                "initializeUploadRequest": {"owner": self._author(account), "fileSizeBytes": video.size,
                                            "uploadCaptions": False, "uploadThumbnail": False}})) or {}
            value = init["value"]
            parts = [[str(i["uploadUrl"]), int(i["firstByte"]), int(i["lastByte"])]
                     for i in value.get("uploadInstructions") or []]
            return PublishPending({"phase": "parts", "video": str(value["video"]),
                                   "token": value.get("uploadToken", ""), "parts": parts, "etags": []}, poll_after=0.0)
        if phase == "parts":
            etags = list(progress["etags"])
            url, first, last = progress["parts"][len(etags)]
            response = self.http.request(
                "PUT", str(url), classify=linkedin_classify, secrets=account.secrets(),
                content=self._read_media(video, int(first), int(last) + 1),
                headers={**self._headers(account), "Content-Type": "application/octet-stream"})
            etags.append(response.headers.get("etag", ""))
            done = len(etags) == len(progress["parts"])
            return PublishPending({**progress, "etags": etags, "phase": "finalize" if done else "parts"},
                                  poll_after=0.0)
        if phase == "finalize":
            self._api(account, "POST", "/rest/videos", params={"action": "finalizeUpload"}, json={
                "finalizeUploadRequest": {"video": progress["video"], "uploadToken": progress["token"],
                                          "uploadedPartIds": progress["etags"]}})
            return PublishPending({**progress, "phase": "status", "polls": 0}, poll_after=0.0)
        answer = json_body(self._api(account, "GET", f"/rest/videos/{quote(str(progress['video']), safe='')}")) or {}
        status = answer.get("status")
        if status == "AVAILABLE":
            return PublishPending({**progress, "phase": "post"}, poll_after=0.0, repeatable=False)
        if status == "PROCESSING_FAILED":
            raise Rejected(f"LinkedIn could not process the video ({answer.get('processingFailureReason') or status})",
                           "media_processing_failed")
        polls = int(progress.get("polls", 0))
        return PublishPending({**progress, "polls": polls + 1},
                              poll_after=min(self.video_poll_seconds, 0.5 * 2 ** polls))

    def _post(self, account: AccountContext, text: str, media: list[MediaItem], options: dict[str, Any],
              video_urn: str | None) -> PublishedPost:
        body: dict[str, Any] = {
            "author": self._author(account),
            "commentary": escape_little_text(text),
            "visibility": options.get("visibility", "PUBLIC"),
            "distribution": {
                "feedDistribution": "MAIN_FEED",
                "targetEntities": [],
                "thirdPartyDistributionChannels": [],
            },
            "lifecycleState": "PUBLISHED",
            "isReshareDisabledByAuthor": False,
        }
        if video_urn:
            body["content"] = {"media": {"id": video_urn, "title": str(options.get("title") or "")}}
        elif len(media) == 1:
            body["content"] = {"media": {"id": self._upload_image(account, media[0]), "altText": ""}}
        elif media:
            body["content"] = {"multiImage": {"images": [
                {"id": self._upload_image(account, item), "altText": ""} for item in media]}}
        response = self._api(account, "POST", "/rest/posts", json=body)
        urn = response.headers.get("x-restli-id") or (json_body(response) or {}).get("id")
        if not urn:
            raise RetryLater("LinkedIn gave no post id", 30.0)
        return PublishedPost(str(urn), f"https://www.linkedin.com/feed/update/{urn}")

    def comment_on_post(self, account: AccountContext, *, platform_post_id: str, text: str) -> str:
        """`POST /rest/socialActions/{post-urn}/comments` (`actor`, `object`, `message.text`)."""
        response = self._api(account, "POST", f"/rest/socialActions/{quote(platform_post_id, safe='')}/comments",
                             json={"actor": self._author(account), "object": platform_post_id,
                                   "message": {"text": text}})
        found = response.headers.get("x-restli-id") or (json_body(response) or {}).get("id")
        if not found:
            raise Indeterminate("LinkedIn gave no comment id")
        return str(found)

    def delete_post(self, account: AccountContext, *, platform_post_id: str) -> None:
        try:
            self._api(account, "DELETE", f"/rest/posts/{quote(platform_post_id, safe='')}")
        except Rejected as failure:
            if failure.code not in ("404", "NOT_FOUND"):
                raise
