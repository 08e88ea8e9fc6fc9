"""YouTube Data API v3 with Google OAuth 2.0 (`accounts.google.com/o/oauth2/v2/auth`,
`POST oauth2.googleapis.com/token`, `access_type=offline`): `channels.list(mine=true)`,
`videos.insert` as a resumable upload (`POST /upload/youtube/v3/videos?uploadType=resumable`, then
`PUT` of the bytes read from the media URL; `status.publishAt` schedules it), `thumbnails.set` (a
custom thumbnail, after the upload), `videos.delete`, `comments.insert` (a reply under a
comment thread: how a conversation's message is sent), `commentThreads.list` (the threads on the
channel's videos, polled as conversations). Google returns no new refresh token on refresh: the stored one is kept."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

import httpx2

from platforms._common import BaseAdapter, granted_credentials, merge_refreshed, utc_today
from platforms.base import (
    AccountContext,
    Button,
    Capabilities,
    ConnectedIdentity,
    FollowerPoint,
    GrantChoice,
    MediaItem,
    PartlyPublished,
    PlatformFailure,
    PublishedPost,
    PublishPending,
    ReauthRequired,
    Rejected,
    RetryLater,
    SentMessage,
)
from platforms.http import generic_failure, json_body, redact, retry_after_seconds
from platforms.youtube.rules import THUMBNAIL_MAX_BYTES, YouTubeInboxRules, YouTubePostRules

SCOPES = (
    "https://www.googleapis.com/auth/youtube.upload",
    "https://www.googleapis.com/auth/youtube.force-ssl",
    "https://www.googleapis.com/auth/youtube.readonly",
)
RATE_REASONS = {"rateLimitExceeded", "userRateLimitExceeded"}


def google_classify(response: httpx2.Response, secrets: list[str]) -> PlatformFailure:
    body = json_body(response)
    if not isinstance(body, dict) or "error" not in body:
        return generic_failure(response, secrets)
    error = body["error"]
    if isinstance(error, str):  # the token endpoint: {"error": "invalid_grant", "error_description": ...}
        message = redact(str(body.get("error_description") or error), secrets)
        if error in ("invalid_grant", "unauthorized_client"):
            return ReauthRequired(message)
        return Rejected(message, error)
    message = redact(str(error.get("message") or "YouTube refused the request"), secrets)
    reasons = {str(item.get("reason")) for item in error.get("errors") or [] if isinstance(item, dict)}
    status = response.status_code
    if status == 429 or reasons & RATE_REASONS:
        return RetryLater(message, retry_after_seconds(response.headers, 60.0))
    if "quotaExceeded" in reasons:
        # The project's daily quotas (10,000 units by default; uploads their own 100 a day) reset
        # at midnight Pacific time: nothing goes through before.
        return RetryLater(message, seconds_to_quota_reset())
    if status == 401:
        return ReauthRequired(message)
    if status >= 500:
        return RetryLater(message, 30.0)
    return Rejected(message, next(iter(sorted(reasons)), str(status)))


PACIFIC = ZoneInfo("America/Los_Angeles")
# videos.insert has a quota bucket of its own: 100 calls a day by default, each costing 1 of it and
# none of the 10,000 units the other methods share (https://developers.google.com/youtube/v3/determine_quota_cost).
DEFAULT_DAILY_UPLOADS = 100


def seconds_to_quota_reset(now: dt.datetime | None = None) -> float:
    """Seconds until the next midnight Pacific time, when YouTube resets the daily quota."""
    moment = (now or dt.datetime.now(dt.UTC)).astimezone(PACIFIC)
    midnight = dt.datetime.combine(moment.date() + dt.timedelta(days=1), dt.time(), PACIFIC)
    return max(60.0, (midnight - moment).total_seconds())


def _resume_from(range_header: str | None) -> int:
    """The first byte a resumable session still needs: its 308 answers `Range: bytes=0-N` once it
    holds bytes 0..N, and no `Range` when it holds none
    (https://developers.google.com/youtube/v3/guides/using_resumable_upload_protocol)."""
    if not range_header or not range_header.startswith("bytes=0-"):
        return 0
    last = range_header.removeprefix("bytes=0-")
    return int(last) + 1 if last.isdigit() else 0


class YouTubeAdapter(BaseAdapter):
    platform = "youtube"
    display_name = "YouTube"
    post_rules = YouTubePostRules()
    inbox_rules = YouTubeInboxRules()
    classify = staticmethod(google_classify)
    capabilities = Capabilities(
        post_text_limit=5000,
        post_media="required_video",
        comments=True,
        publish=True,
        delete_post=True,
        oauth=True,
        followers=True,
        follower_history_days=1,  # no past counts: the subscriber count on the day of connection
        # A conversation is a comment thread under one of the channel's videos; a message sent to it
        # is a reply in the thread (`comments.insert`), of at most 10,000 characters.
        dm=True,
        dm_text_limit=10000,
        conversation_kind="comment_thread",
        inbound="poll",
    )

    def _headers(self, account: AccountContext) -> dict[str, str]:
        token = account.credentials.get("accessToken")
        if not isinstance(token, str) or not token:
            raise ReauthRequired("the account has no access token")
        return {"Authorization": f"Bearer {token}"}

    def _api(self, account: AccountContext, method: str, path: str, **kwargs: Any) -> httpx2.Response:
        headers = {**self._headers(account), **kwargs.pop("headers", {})}
        return self._call(
            method, f"{self.endpoints.api}{path}", headers=headers, secrets=account.secrets(), **kwargs
        )

    # -- connection ------------------------------------------------------------------------
    def authorize_url(self, *, state: str, redirect_uri: str) -> str:
        client = self.config.oauth_client(self.platform)
        return self._authorize(
            "/o/oauth2/v2/auth",
            {
                "client_id": client.client_id,
                "redirect_uri": redirect_uri,
                "response_type": "code",
                "scope": " ".join(SCOPES),
                "access_type": "offline",
                "prompt": "consent",
                "include_granted_scopes": "true",
                "state": state,
            },
        )

    def _token(self, form: dict[str, str], secrets: list[str]) -> dict[str, Any]:
        client = self.config.oauth_client(self.platform)
        response = self._call(
            "POST",
            f"{self.endpoints.oauth}/token",
            data={"client_id": client.client_id, "client_secret": client.client_secret, **form},
            secrets=[client.client_secret, *secrets],
        )
        return json_body(response) or {}

    def _channel(self, account: AccountContext) -> dict[str, Any]:
        answer = (
            json_body(
                self._api(
                    account,
                    "GET",
                    "/youtube/v3/channels",
                    params={"part": "snippet,statistics", "mine": "true"},
                )
            )
            or {}
        )
        items = answer.get("items") or []
        if not items:
            raise Rejected("this Google account has no YouTube channel", "no_channel")
        return dict(items[0])

    def _grant(self, code: str, redirect_uri: str) -> dict[str, Any]:
        """The credentials an authorization code is exchanged for."""
        answer = self._token(
            {"code": code, "redirect_uri": redirect_uri, "grant_type": "authorization_code"}, [code]
        )
        return granted_credentials(answer)

    def exchange_code(self, *, code: str, redirect_uri: str, state: str = "") -> ConnectedIdentity:
        credentials = self._grant(code, redirect_uri)
        channel = self._channel(AccountContext("", credentials))
        snippet = channel.get("snippet") or {}
        return ConnectedIdentity(
            str(channel["id"]), snippet.get("customUrl"), snippet.get("title"), credentials
        )

    def exchange_code_choices(self, *, code: str, redirect_uri: str, state: str = "") -> list[GrantChoice]:
        """Every channel the grant reaches (`channels.list` with `mine=true`), each an account of its own."""
        credentials = self._grant(code, redirect_uri)
        listed = json_body(self._api(AccountContext("", credentials), "GET", "/youtube/v3/channels",
                                     params={"part": "snippet", "mine": "true", "maxResults": "50"})) or {}
        channels = [item for item in listed.get("items") or [] if isinstance(item, dict) and item.get("id")]
        if not channels:
            raise Rejected("this Google account has no YouTube channel", "no_channel")
        return [
            GrantChoice("channel", ConnectedIdentity(
                str(item["id"]), (item.get("snippet") or {}).get("customUrl"), (item.get("snippet") or {}).get("title"),
                dict(credentials)))
            for item in channels
        ]

    def refresh_credentials(self, account: AccountContext) -> dict[str, Any]:
        refresh = account.credentials.get("refreshToken")
        if not isinstance(refresh, str) or not refresh:
            raise ReauthRequired("the account has no refresh token")
        answer = self._token({"refresh_token": refresh, "grant_type": "refresh_token"}, account.secrets())
        return merge_refreshed(account.credentials, answer)

    # -- reading ---------------------------------------------------------------------------
    def follower_count(self, account: AccountContext) -> int:
        return int((self._channel(account).get("statistics") or {}).get("subscriberCount", 0))

    def follower_history(self, account: AccountContext, *, days: int) -> list[FollowerPoint]:
        """YouTube keeps no past subscriber counts for an app to read: the channel's
        `statistics.subscriberCount` (`channels.list?part=snippet,statistics&mine=true`) is today's point,
        the first of the line the daily snapshots go on with."""
        return [FollowerPoint(utc_today(), self.follower_count(account))]

    def publish_options(self, account: AccountContext) -> dict[str, Any]:
        return {
            "platform": self.platform,
            # Until Google audits the API project, every upload is locked private.
            "privacyStatuses": ["public", "unlisted", "private"] if self.config.youtube_audited else ["private"],
            "appAudited": self.config.youtube_audited,
            # Uploads have their own daily bucket (100 unless Google granted more) across every channel
            # of the deployment; the other calls share 10,000 units.
            "quota": {"defaultDailyUploads": DEFAULT_DAILY_UPLOADS, "defaultDailyUnits": 10000,
                      "resetsAt": "00:00 America/Los_Angeles"},
            "titleLimit": 100,
            "descriptionLimit": 5000,
            "defaultCategoryId": "22",
            # options: publishAt (an ISO 8601 time ahead: the video stays private until then) and
            # thumbnailMediaId (a JPEG or PNG of at most 2 MB, set with thumbnails.set after the upload)
            "publishAt": "ISO 8601 time in the future",
            "thumbnail": {"contentTypes": ["image/jpeg", "image/png"], "maxBytes": THUMBNAIL_MAX_BYTES},
        }

    def public_reply(self, account: AccountContext, *, comment_id: str, text: str) -> str:
        body = {"snippet": {"parentId": comment_id, "textOriginal": text}}
        answer = json_body(
            self._api(account, "POST", "/youtube/v3/comments", params={"part": "snippet"}, json=body)
        )
        return str((answer or {})["id"])

    # -- conversations: comment threads --------------------------------------------------------
    def send_dm(
        self, account: AccountContext, *, recipient: str, text: str, button: Button | None = None
    ) -> SentMessage:
        """A message in a comment thread (`recipient`: the thread's id) is a reply under it:
        `comments.insert` with `snippet.parentId` (50 units of quota). Comments have no buttons: the
        URL goes after the text."""

        def reply(body_text: str) -> SentMessage:
            body = {"snippet": {"parentId": recipient, "textOriginal": body_text}}
            answer = json_body(
                self._api(account, "POST", "/youtube/v3/comments", params={"part": "snippet"}, json=body)
            )
            return SentMessage(str((answer or {})["id"]), False, body)

        return self._with_button_fallback(text, button, lambda _button: reply(text), reply)

    def inbox_page(self, account: AccountContext, *, page_token: str | None) -> dict[str, Any]:
        """`commentThreads.list` of every thread on the channel's videos, newest first, each with its
        top-level comment and replies (1 unit of quota a page)."""
        params = {
            "part": "snippet,replies",
            "allThreadsRelatedToChannelId": account.platform_account_id,
            "order": "time",
            "maxResults": "100",
            "textFormat": "plainText",
        }
        if page_token:
            params["pageToken"] = page_token
        return json_body(self._api(account, "GET", "/youtube/v3/commentThreads", params=params)) or {}

    def inbox_threads(self, account: AccountContext, *, thread_ids: list[str]) -> dict[str, Any]:
        """`commentThreads.list?id=` of up to 50 known threads with their replies (1 unit and 2 a part,
        as a page): the listing by channel orders threads by their top-level comment, so a new reply
        under an older thread is read here."""
        params = {"part": "snippet,replies", "id": ",".join(thread_ids), "textFormat": "plainText"}
        return json_body(self._api(account, "GET", "/youtube/v3/commentThreads", params=params)) or {}

    # -- publishing ------------------------------------------------------------------------
    def publish_step(
        self, account: AccountContext, *, text: str, media: list[MediaItem], options: dict[str, Any],
        progress: dict[str, Any] | None,
    ) -> PublishedPost | PublishPending:
        """A resumable upload in two durable steps: open the session (nothing is public yet), then
        send the bytes. The second step may run again after a crash: it first asks the session how far
        it got (`Content-Range: bytes */size`), and a finished session answers with its video instead
        of taking the bytes twice."""
        videos = [m for m in media if m.is_video]
        if not videos:
            raise Rejected("YouTube needs a video", "media_required")
        video = videos[0]
        if progress is None:
            return PublishPending({"phase": "upload", "location": self._session(account, text, video, options)},
                                  poll_after=0.0)
        if progress.get("phase") == "thumbnail":
            return self._thumbnail(account, str(progress["video"]), options)
        location = str(progress["location"])
        try:
            # 308 Resume Incomplete is the answer of a session still waiting for its bytes.
            status = self.http.client.request(
                "PUT", location, content=b"",
                headers={**self._headers(account), "Content-Range": f"bytes */{video.size}"})
        except httpx2.TransportError:
            raise RetryLater("YouTube could not be reached to resume the upload", 15.0) from None
        if status.status_code in (200, 201):
            return self._then_thumbnail(self._published(status), options)
        if status.status_code != 308:
            raise google_classify(status, account.secrets())
        start = _resume_from(status.headers.get("range"))
        return self._then_thumbnail(self._published(self._send_bytes(account, location, video, start)), options)

    @staticmethod
    def _then_thumbnail(video: PublishedPost, options: dict[str, Any]) -> PublishedPost | PublishPending:
        """With a custom thumbnail, `thumbnails.set` is the next step (it may run twice: it replaces)."""
        if not options.get("thumbnail"):
            return video
        return PublishPending({"phase": "thumbnail", "video": video.platform_post_id}, poll_after=0.0)

    def _thumbnail(self, account: AccountContext, video_id: str, options: dict[str, Any]) -> PublishedPost:
        """`POST /upload/youtube/v3/thumbnails/set?videoId=` with the image's bytes. The video is
        uploaded already: a refused thumbnail leaves it published, with the reason."""
        video = PublishedPost(video_id, f"https://www.youtube.com/watch?v={video_id}")
        thumbnail = options["thumbnail"]
        item = MediaItem(str(thumbnail["url"]), str(thumbnail["contentType"]), int(thumbnail["size"]))
        try:
            # The upload URI takes the bytes as a simple media upload: `uploadType=media` says so.
            self._api(account, "POST", "/upload/youtube/v3/thumbnails/set",
                      params={"videoId": video_id, "uploadType": "media"},
                      content=self._read_media(item), headers={"Content-Type": item.content_type})
        except RetryLater:
            raise
        except PlatformFailure as failure:
            raise PartlyPublished(f"the video is uploaded; its custom thumbnail was refused: {failure.message}",
                                  video.platform_post_id, video.url) from None
        return video

    def _session(self, account: AccountContext, text: str, video: MediaItem, options: dict[str, Any]) -> str:
        title = str(options.get("title") or (text.splitlines()[0] if text else "") or "Untitled")[:100]
        privacy = options.get("privacyStatus") or ("public" if self.config.youtube_audited else "private")
        if privacy != "private" and not self.config.youtube_audited:
            # Google locks an unaudited project's uploads private: refuse rather than post a video the
            # caller believes public (https://developers.google.com/youtube/v3/docs/videos/insert).
            raise Rejected("YouTube keeps every upload of an API project it has not audited private: publish it "
                           "private, or have the project audited (SWITCHBOARD_YOUTUBE_AUDITED=1)", "youtube_unaudited")
        metadata: dict[str, Any] = {
            "snippet": {
                "title": title,
                "description": text,
                "categoryId": str(options.get("categoryId", "22")),
            },
            "status": {
                "privacyStatus": privacy,
                "selfDeclaredMadeForKids": bool(options.get("madeForKids", False)),
            },
        }
        if options.get("publishAt"):
            # A scheduled video is private until YouTube makes it public at `publishAt`.
            metadata["status"].update(privacyStatus="private", publishAt=str(options["publishAt"]))
        started = self._api(
            account,
            "POST",
            "/upload/youtube/v3/videos",
            params={"uploadType": "resumable", "part": "snippet,status"},
            json=metadata,
            headers={"X-Upload-Content-Type": video.content_type, "X-Upload-Content-Length": str(video.size)},
        )
        location = started.headers.get("location")
        if not location:
            raise RetryLater("YouTube gave no upload location", 30.0)
        return str(location)

    def _send_bytes(self, account: AccountContext, location: str, video: MediaItem, start: int = 0
                    ) -> httpx2.Response:
        """The bytes from `start` on (what the session's `Range` says it lacks), with their
        `Content-Range` when resuming."""
        client = self.http.client
        if start:
            return self.http.request(
                "PUT", location, classify=google_classify, secrets=account.secrets(),
                content=self._read_media(video, start, video.size),
                headers={**self._headers(account), "Content-Type": video.content_type,
                         "Content-Range": f"bytes {start}-{video.size - 1}/{video.size}"},
            )
        try:
            with client.stream("GET", video.url) as source:
                if not source.is_success:
                    raise Rejected(
                        f"the media could not be read (HTTP {source.status_code})", "media_unreadable"
                    )
                return self.http.request(
                    "PUT",
                    location,
                    classify=google_classify,
                    secrets=account.secrets(),
                    content=source.iter_bytes(),
                    headers={
                        **self._headers(account),
                        "Content-Type": video.content_type,
                        "Content-Length": str(video.size),
                    },
                )
        except httpx2.TransportError:
            raise RetryLater("the media could not be read", 30.0) from None

    @staticmethod
    def _published(answer: httpx2.Response) -> PublishedPost:
        video_id = str((json_body(answer) or {})["id"])
        return PublishedPost(video_id, f"https://www.youtube.com/watch?v={video_id}")

    def delete_post(self, account: AccountContext, *, platform_post_id: str) -> None:
        try:
            self._api(account, "DELETE", "/youtube/v3/videos", params={"id": platform_post_id})
        except Rejected as failure:
            if failure.code != "videoNotFound":
                raise
