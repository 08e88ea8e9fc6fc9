"""TikTok: Login Kit (`www.tiktok.com/v2/auth/authorize/`, `POST /v2/oauth/token/`), Display API
(`GET /v2/user/info/`) and Content Posting API (`POST /v2/post/publish/creator_info/query/`,
`POST /v2/post/publish/video/init/` with `PULL_FROM_URL` from a domain verified for the app or else
`FILE_UPLOAD` and chunked `PUT`s to its `upload_url`, `POST /v2/post/publish/status/fetch/`,
`POST /v2/video/list/`), and Business Messaging on the Business API (`business-api.tiktok.com`:
`GET /open_api/v1.3/business/get/`, `POST /open_api/v1.3/business/message/send/` to a
`conversation_id`, the person having written first; its webhooks `im_receive_msg`/`im_send_msg`).
No comment API, no delete API. Unaudited clients may only post `SELF_ONLY`.

Business Messaging takes no Login Kit token: it is a second, separate grant (`messaging`), TikTok
API for Business's own authorization with an app of the business developer portal
(`business-api.tiktok.com/portal/auth`, `POST /open_api/v1.3/tt_user/oauth2/token/`, refreshed by
`/tt_user/oauth2/refresh_token/`), whose token goes in `Access-Token` and whose `open_id` is the
`business_id`. It is stored under `credentials["messaging"]`; its refusals concern it alone."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx2

from platforms._common import BaseAdapter, expires_at, merge_refreshed
from platforms.base import (
    AccountContext,
    Button,
    Capabilities,
    ConnectedIdentity,
    GrantRefused,
    GrantRequired,
    MediaItem,
    OutsideMessagingWindow,
    PlatformFailure,
    PublishedPost,
    PublishPending,
    ReauthRequired,
    RecentPost,
    Rejected,
    RetryLater,
    SentMessage,
)
from platforms.http import generic_failure, json_body, redact, retry_after_seconds
from platforms.inbound import InboundEvent, header
from platforms.tiktok import inbound
from platforms.tiktok.rules import TikTokInboxRules, TikTokPostRules

BUSINESS_API = "https://business-api.tiktok.com"
NOT_BUSINESS = "40002"  # the Business API's code for an account that is not a Business Account
WINDOW_CLOSED = "40016"  # its code for a reply after the 48-hour window
BUSINESS_RATE = {"40100", "50002"}
# A refused messaging grant: 40001 no permission for the call, 40104 no token, 40105 a token
# invalid, expired or revoked.
BUSINESS_AUTH = {"40104", "40105", "40001"}
MESSAGING = "messaging"  # the separate grant's name, and its key in the credentials
# TikTok API for Business's scopes for Business Messaging (the app's "TikTok Accounts" permissions).
BUSINESS_SCOPES = ("user.info.basic", "message.list.read", "message.list.send", "message.list.manage")
NO_GRANT = ("TikTok messaging is a separate grant of TikTok API for Business: connect it for this account "
            "(its publishing works without it)")
# `video.list`: reconciliation reads the creator's recent videos (`POST /v2/video/list/`) after a
# publish whose answer was lost; without it that call fails with `scope_not_authorized`.
SCOPES = ("user.info.basic", "user.info.profile", "user.info.stats", "video.publish", "video.list")
MB = 1024 * 1024
# The privacy levels TikTok has (creator_info offers the creator some of them:
# https://developers.tiktok.com/doc/content-posting-api-reference-query-creator-info).
PRIVACY_LEVELS = ("PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY")
AUTH_CODES = {"access_token_invalid", "scope_not_authorized", "invalid_grant", "token_expired"}


def tiktok_classify(response: httpx2.Response, secrets: list[str]) -> PlatformFailure:
    body = json_body(response)
    if not isinstance(body, dict) or "error" not in body:
        return generic_failure(response, secrets)
    error = body["error"]
    if isinstance(error, str):  # the OAuth endpoints: {"error": "invalid_grant", "error_description": ...}
        code, message = error, str(body.get("error_description") or error)
    else:
        code, message = str(error.get("code")), str(error.get("message") or error.get("code"))
    message = redact(message, secrets)
    status = response.status_code
    if code == "reached_active_user_cap":
        return Rejected("TikTok lets an app it has not audited have 5 users post in 24 hours, and that many have: "
                        "try again tomorrow, or have the app audited (SWITCHBOARD_TIKTOK_AUDITED=1)", code)
    if code == "rate_limit_exceeded" or status == 429:
        return RetryLater(message, retry_after_seconds(response.headers, 60.0))
    if code in AUTH_CODES or status == 401:
        return ReauthRequired(message)
    if status >= 500 or code == "internal_error":
        return RetryLater(message, 30.0)
    return Rejected(message, code)


def business_failure(code: Any, message: str, secrets: list[str]) -> PlatformFailure:
    """A Business API answer whose `code` is not 0 (it answers HTTP 200 with the error in the body).
    A refused token is the messaging grant's, never the account's Login Kit one."""
    code, message = str(code), redact(message, secrets)
    if code in BUSINESS_RATE:
        return RetryLater(message, 60.0)
    if code in BUSINESS_AUTH:
        return GrantRefused(message, MESSAGING)
    if code == WINDOW_CLOSED:
        return OutsideMessagingWindow(message, code)
    return Rejected(message, code)


def tiktok_chunks(size: int, chunk: int) -> tuple[int, int]:
    """`chunk_size` and `total_chunk_count` by TikTok's media transfer rules: a file of up to 64 MB
    goes whole (under 5 MB it must); a larger one in chunks of `chunk` bytes (5 to 64 MB), their count
    `size // chunk` rounded down, the last chunk taking the trailing bytes (at most 128 MB)
    (https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide)."""
    if size <= 64 * MB:
        return size, 1
    return chunk, size // chunk


class TikTokAdapter(BaseAdapter):
    platform = "tiktok"
    display_name = "TikTok"
    post_rules = TikTokPostRules()
    inbox_rules = TikTokInboxRules()
    classify = staticmethod(tiktok_classify)
    capabilities = Capabilities(
        post_text_limit=2200, post_media="required_video", publish=True, oauth=True, followers=True,
        post_listing=True, publish_settle_seconds=30.0,
        # Business Messaging: a person writes first; the business answers within 48 hours of their
        # last message, in text of at most 6,000 characters. Business Accounts only.
        dm=True, dm_text_limit=6000, messaging_window_hours=48, inbound="webhook",
    )
    status_poll_seconds = 2.0
    grants = (MESSAGING,)

    def verify_webhook(self, headers: Mapping[str, str], raw_body: bytes, query: Mapping[str, str]) -> bool:
        """Signed with the secret of the app whose webhook it is: Login Kit's, or (Business Messaging's
        events) TikTok API for Business's app's."""
        signature = header(headers, "TikTok-Signature")
        apps = [self.config.oauth_clients.get(name) for name in ("tiktok", "tiktok_business")]
        return any(inbound.verify(signature, raw_body, app.client_secret) for app in apps if app is not None)

    def parse_webhook(self, payload: dict[str, Any], query: Mapping[str, str]) -> list[InboundEvent]:
        return inbound.parse(payload)

    def _headers(self, account: AccountContext) -> dict[str, str]:
        token = account.credentials.get("accessToken")
        if not isinstance(token, str) or not token:
            raise ReauthRequired("the account has no access token")
        return {"Authorization": f"Bearer {token}", "Content-Type": "application/json; charset=UTF-8"}

    def _api(self, account: AccountContext, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        response = self._call(
            method,
            f"{self.endpoints.api}{path}",
            headers=self._headers(account),
            secrets=account.secrets(),
            **kwargs,
        )
        body = json_body(response) or {}
        error = body.get("error") or {}
        if isinstance(error, dict) and error.get("code") not in (None, "ok"):
            raise tiktok_classify(response, account.secrets())
        return body.get("data") or {}

    # -- connection ------------------------------------------------------------------------
    def authorize_url(self, *, state: str, redirect_uri: str) -> str:
        client = self.config.oauth_client(self.platform)
        return self._authorize(
            "/v2/auth/authorize/",
            {
                "client_key": client.client_id,
                "scope": ",".join(SCOPES),
                "response_type": "code",
                "redirect_uri": redirect_uri,
                "state": state,
            },
        )

    def _token(self, form: dict[str, str], secrets: list[str]) -> dict[str, Any]:
        client = self.config.oauth_client(self.platform)
        response = self._call(
            "POST",
            f"{self.endpoints.oauth}/v2/oauth/token/",
            data={"client_key": client.client_id, "client_secret": client.client_secret, **form},
            headers={"Cache-Control": "no-cache"},
            secrets=[client.client_secret, *secrets],
        )
        answer = json_body(response) or {}
        if "access_token" not in answer:
            raise tiktok_classify(response, [client.client_secret, *secrets])
        return answer

    def exchange_code(self, *, code: str, redirect_uri: str, state: str = "") -> ConnectedIdentity:
        answer = self._token(
            {"code": code, "grant_type": "authorization_code", "redirect_uri": redirect_uri}, [code]
        )
        credentials = {
            "accessToken": answer["access_token"],
            "refreshToken": answer.get("refresh_token"),
            "expiresAt": expires_at(answer.get("expires_in")),
            "refreshExpiresAt": expires_at(answer.get("refresh_expires_in")),
            "openId": answer.get("open_id"),
            "scope": answer.get("scope"),
        }
        account = AccountContext(str(answer.get("open_id")), credentials)
        user = self._api(
            account,
            "GET",
            "/v2/user/info/",
            params={"fields": "open_id,union_id,avatar_url,display_name,username"},
        ).get("user", {})
        open_id = str(user.get("open_id") or answer.get("open_id"))
        return ConnectedIdentity(open_id, user.get("username"), user.get("display_name"), credentials)

    def refresh_credentials(self, account: AccountContext) -> dict[str, Any]:
        refresh = account.credentials.get("refreshToken")
        if not isinstance(refresh, str) or not refresh:
            raise ReauthRequired("the account has no refresh token")
        answer = self._token({"grant_type": "refresh_token", "refresh_token": refresh}, account.secrets())
        return merge_refreshed(account.credentials, answer)

    # -- reading ---------------------------------------------------------------------------
    def follower_count(self, account: AccountContext) -> int:
        user = self._api(account, "GET", "/v2/user/info/", params={"fields": "open_id,follower_count"}).get(
            "user", {}
        )
        return int(user.get("follower_count", 0))


    # -- Business Messaging: its own grant -------------------------------------------------
    def _business_base(self) -> str:
        # The Business API has a host of its own in production; a configured base URL (the sandbox's)
        # serves both.
        return BUSINESS_API if self.endpoints.api == "https://open.tiktokapis.com" else self.endpoints.api

    def _business_client(self) -> Any:
        client = self.config.oauth_clients.get("tiktok_business")
        if client is None:
            raise GrantRequired("no TikTok API for Business app is configured (SWITCHBOARD_TIKTOK_BUSINESS_APP_ID "
                                "and SWITCHBOARD_TIKTOK_BUSINESS_APP_SECRET): TikTok messaging is off", MESSAGING)
        return client

    def grant_authorize_url(self, grant: str, *, state: str, redirect_uri: str) -> str:
        """TikTok API for Business's authorization page for a TikTok account holder (the business
        app's "Authorization URL", with its own app id)."""
        if grant != MESSAGING:
            raise self._unsupported(f"a {grant} grant")
        client = self._business_client()
        base = BUSINESS_API if self.endpoints.auth == "https://www.tiktok.com" else self.endpoints.auth
        params = {"app_id": client.client_id, "state": state, "redirect_uri": redirect_uri,
                  "scope": ",".join(BUSINESS_SCOPES)}
        return f"{base}/portal/auth?{urlencode(params)}"

    def _business_token(self, body: dict[str, str], path: str, secrets: list[str]) -> dict[str, Any]:
        client = self._business_client()
        hidden = [client.client_secret, *secrets]
        response = self._call("POST", f"{self._business_base()}/open_api/v1.3/tt_user/oauth2/{path}/",
                              json={"client_id": client.client_id, "client_secret": client.client_secret, **body},
                              secrets=hidden)
        answer = json_body(response)
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(answer, dict) or answer.get("code") != 0 or not isinstance(data, dict) \
                or not data.get("access_token"):
            code = answer.get("code") if isinstance(answer, dict) else response.status_code
            message = str(answer.get("message") if isinstance(answer, dict) else "") or "TikTok refused the grant"
            raise GrantRefused(redact(message, hidden) + f" ({code})", MESSAGING)
        return data

    @staticmethod
    def _grant_credentials(data: dict[str, Any], old: dict[str, Any] | None = None) -> dict[str, Any]:
        return {
            "accessToken": data["access_token"],
            "refreshToken": data.get("refresh_token") or (old or {}).get("refreshToken"),
            "expiresAt": expires_at(data.get("expires_in")),
            "refreshExpiresAt": expires_at(data.get("refresh_token_expires_in")),
            "businessId": str(data.get("open_id") or (old or {}).get("businessId") or ""),
            "scope": data.get("scope"),
        }

    def exchange_grant_code(
        self, grant: str, account: AccountContext, *, code: str, redirect_uri: str
    ) -> dict[str, Any]:
        """`tt_user/oauth2/token/`, then `GET /business/get/` with the new grant: a Business Account's
        must be the same TikTok account (its username, by Login Kit's `GET /v2/user/info/`)."""
        if grant != MESSAGING:
            raise self._unsupported(f"a {grant} grant")
        data = self._business_token({"grant_type": "authorization_code", "auth_code": code,
                                     "redirect_uri": redirect_uri}, "token", [code, *account.secrets()])
        granted = {**account.credentials, MESSAGING: self._grant_credentials(data)}
        context = AccountContext(account.platform_account_id, granted)
        try:
            profile = self._business(context, "GET", "/business/get/", params={
                "business_id": granted[MESSAGING]["businessId"], "fields": '["username","display_name"]'})
        except Rejected as failure:
            if failure.code == NOT_BUSINESS:
                # A personal account: stored all the same, its inbox says it has no messaging
                # (`business_messaging`), and becoming a Business Account later needs no new consent.
                return granted
            raise
        username = str(profile.get("username") or "")
        # The Login Kit identity of the account, by its own token: the two grants' ids differ (each
        # app has its own open_id), the TikTok username does not.
        user = self._api(account, "GET", "/v2/user/info/", params={"fields": "open_id,username"}).get("user", {})
        expected = str(user.get("username") or "")
        if not username or username.lower() != expected.lower():
            raise Rejected(f"the messaging grant is of another TikTok account (@{username}), not this one "
                           f"(@{expected})", "other_account")
        return granted

    def refresh_grant(self, grant: str, account: AccountContext) -> dict[str, Any]:
        """`tt_user/oauth2/refresh_token/`: the messaging grant's token lasts a day, its refresh token a year."""
        if grant != MESSAGING:
            raise self._unsupported(f"a {grant} grant")
        held = account.credentials.get(MESSAGING)
        refresh = held.get("refreshToken") if isinstance(held, dict) else None
        if not isinstance(refresh, str) or not refresh:
            raise GrantRefused("the messaging grant has no refresh token", MESSAGING)
        data = self._business_token({"grant_type": "refresh_token", "refresh_token": refresh}, "refresh_token",
                                    account.secrets())
        return {**account.credentials, MESSAGING: self._grant_credentials(data, held)}

    def grant_account_id(self, grant: str, credentials: dict[str, Any]) -> str | None:
        """The messaging grant's `open_id`: the `business_id`, and the `user_openid` of its webhooks."""
        held = credentials.get(grant)
        return str(held["businessId"]) if grant == MESSAGING and isinstance(held, dict) and held.get("businessId") \
            else None

    @staticmethod
    def _messaging(account: AccountContext) -> dict[str, Any]:
        held = account.credentials.get(MESSAGING)
        if not isinstance(held, dict) or not held.get("accessToken") or held.get("lapsed"):
            raise GrantRequired(NO_GRANT, MESSAGING)
        return held

    def _business(self, account: AccountContext, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        token = str(self._messaging(account)["accessToken"])
        response = self._call(method, f"{self._business_base()}/open_api/v1.3{path}",
                              headers={"Access-Token": token}, secrets=account.secrets(), **kwargs)
        body = json_body(response)
        if not isinstance(body, dict):
            raise tiktok_classify(response, account.secrets())
        code = body.get("code")
        if code is None and "error" in body:
            raise tiktok_classify(response, account.secrets())
        if code not in (0, None):
            raise business_failure(code, str(body.get("message") or "TikTok refused the request"), account.secrets())
        return body.get("data") or {}

    def business_messaging(self, account: AccountContext) -> bool:
        """`GET /business/get/`: a personal account is not a Business Account (no messaging API)."""
        try:
            self._business(account, "GET", "/business/get/", params={
                "business_id": self._messaging(account)["businessId"], "fields": '["username","display_name"]'})
        except Rejected as failure:
            if failure.code == NOT_BUSINESS:
                return False
            raise
        return True

    def send_dm(
        self, account: AccountContext, *, recipient: str, text: str, button: Button | None = None
    ) -> SentMessage:
        """`POST /business/message/send/` to the conversation (`recipient`: its `conversation_id`).
        TikTok messages have no buttons: the URL goes after the text."""

        def plain(body_text: str) -> SentMessage:
            payload = {"business_id": self._messaging(account)["businessId"], "recipient_type": "CONVERSATION",
                       "recipient": recipient, "message_type": "TEXT", "text": {"body": body_text}}
            data = self._business(account, "POST", "/business/message/send/", json=payload)
            return SentMessage(str((data.get("message") or {})["message_id"]), False, payload)

        return self._with_button_fallback(text, button, lambda _button: plain(text), plain)

    # -- publishing ------------------------------------------------------------------------
    CHUNK = 10 * MB  # for a file over 64 MB; TikTok takes chunks of 5 to 64 MB

    def publish_options(self, account: AccountContext) -> dict[str, Any]:
        data = self._api(account, "POST", "/v2/post/publish/creator_info/query/")
        levels = list(data.get("privacy_level_options") or [])
        blocked = None
        if not self.config.tiktok_audited:
            # Until TikTok audits the app, it takes only SELF_ONLY posts, from a creator whose account
            # is private (a public account is offered PUBLIC_TO_EVERYONE), and from 5 users a day.
            if "PUBLIC_TO_EVERYONE" in levels:
                levels = []
                blocked = ("TikTok lets an app it has not audited post only from a private account: make the "
                           "TikTok account private, or have the app audited (SWITCHBOARD_TIKTOK_AUDITED=1)")
            else:
                levels = [level for level in levels if level == "SELF_ONLY"]
        return {
            "platform": self.platform,
            "nickname": data.get("creator_nickname"),
            "username": data.get("creator_username"),
            "avatarUrl": data.get("creator_avatar_url"),
            "privacyLevels": levels,
            "appAudited": self.config.tiktok_audited,
            # Until the audit, TikTok lets 5 users of the app post in 24 hours.
            **({} if self.config.tiktok_audited else {"dailyPostingUsers": 5}),
            **({"blockedReason": blocked} if blocked else {}),
            "commentDisabled": bool(data.get("comment_disabled")),
            "duetDisabled": bool(data.get("duet_disabled")),
            "stitchDisabled": bool(data.get("stitch_disabled")),
            "maxVideoDurationSec": data.get("max_video_post_duration_sec"),
        }

    def _pull_allowed(self, url: str) -> bool:
        return (urlsplit(url).hostname or "").lower() in self.config.tiktok_verified_domains

    def publish_step(
        self, account: AccountContext, *, text: str, media: list[MediaItem], options: dict[str, Any],
        progress: dict[str, Any] | None,
    ) -> PublishedPost | PublishPending:
        """init → (FILE_UPLOAD: the bytes in chunks) → status polls until PUBLISH_COMPLETE.

        TikTok pulls a video only from a domain verified for the app (`url_ownership_unverified`
        otherwise): media served from any other host is sent by `FILE_UPLOAD`."""
        if progress is None:
            return self._init(account, text=text, media=media, options=options)
        publish_id = str(progress["publishId"])
        if progress.get("phase") == "upload":
            self._upload(account, str(progress["uploadUrl"]), progress)
            return PublishPending({**progress, "phase": "status"}, poll_after=0.0)
        status = self._api(account, "POST", "/v2/post/publish/status/fetch/", json={"publish_id": publish_id})
        if status.get("status") == "PUBLISH_COMPLETE":
            found = status.get("publicaly_available_post_id") or []
            return PublishedPost(str(found[0]) if found else publish_id, None)
        if status.get("status") == "FAILED":
            raise Rejected(f"TikTok could not publish the video: {status.get('fail_reason')}", "publish_failed")
        return PublishPending(progress, poll_after=self.status_poll_seconds)

    def _init(
        self, account: AccountContext, *, text: str, media: list[MediaItem], options: dict[str, Any]
    ) -> PublishPending:
        videos = [m for m in media if m.is_video]
        if not videos:
            raise Rejected("TikTok needs a video", "media_required")
        privacy = options.get("privacyLevel")
        if not privacy:
            raise Rejected("TikTok needs options.privacyLevel from its publish options", "missing_field")
        if privacy not in PRIVACY_LEVELS:
            # Not a level TikTok has at all: refused before the call, as creator_info would not offer it.
            raise Rejected(f"options.privacyLevel must be one of TikTok's levels: {', '.join(PRIVACY_LEVELS)}",
                           "privacy_level_option_mismatch")
        video = videos[0]
        if self._pull_allowed(video.url):
            source: dict[str, Any] = {"source": "PULL_FROM_URL", "video_url": video.url}
        else:
            chunk, count = tiktok_chunks(video.size, self.CHUNK)
            source = {"source": "FILE_UPLOAD", "video_size": video.size, "chunk_size": chunk,
                      "total_chunk_count": count}
        body = {
            "post_info": {
                "title": text,
                "privacy_level": privacy,
                "disable_duet": bool(options.get("disableDuet", False)),
                "disable_comment": bool(options.get("disableComment", False)),
                "disable_stitch": bool(options.get("disableStitch", False)),
                "video_cover_timestamp_ms": int(options.get("videoCoverTimestampMs", 1000)),
            },
            "source_info": source,
        }
        data = self._api(account, "POST", "/v2/post/publish/video/init/", json=body)
        progress: dict[str, Any] = {"publishId": str(data["publish_id"])}
        if source["source"] == "FILE_UPLOAD":
            progress.update(phase="upload", uploadUrl=str(data["upload_url"]), videoUrl=video.url,
                            size=video.size, chunk=source["chunk_size"], contentType=video.content_type)
            return PublishPending(progress, poll_after=0.0)
        # Pulled from the URL: the post is TikTok's from here on; only its status is left to learn.
        return PublishPending({**progress, "phase": "status"}, poll_after=0.0)

    def _upload(self, account: AccountContext, upload_url: str, progress: dict[str, Any]) -> None:
        """The video's bytes to TikTok's upload URL, chunk by chunk, each read from the media with a
        `Range` request as it goes (a video may be 4 GB: never whole in memory); a repeated chunk
        changes nothing."""
        size, chunk = int(progress["size"]), int(progress["chunk"])
        count = max(1, size // chunk)  # the last chunk takes the trailing bytes
        video = MediaItem(str(progress["videoUrl"]), str(progress.get("contentType") or "video/mp4"), size)
        for n in range(count):
            start = n * chunk
            end = size if n == count - 1 else start + chunk
            data = self._read_media(video, start, end)
            if len(data) != end - start:
                raise Rejected("the media could not be read whole (its size changed)", "media_unreadable")
            self._call("PUT", upload_url, content=data, secrets=account.secrets(), headers={
                "Content-Type": video.content_type,
                "Content-Range": f"bytes {start}-{end - 1}/{size}",
            })

    def recent_posts(self, account: AccountContext) -> list[RecentPost]:
        data = self._api(account, "POST", "/v2/video/list/", params={"fields": "id,title,share_url"},
                         json={"max_count": 20})
        return [RecentPost(str(v["id"]), v.get("title"), v.get("share_url")) for v in data.get("videos") or []]
