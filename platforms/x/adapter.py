"""X API v2 with OAuth 2.0 Authorization Code + PKCE (`x.com/i/oauth2/authorize`,
`POST /2/oauth2/token` with HTTP Basic client authentication; refresh tokens rotate):
`GET /2/users/me`, `POST /2/tweets` (posts and replies), `DELETE /2/tweets/:id`,
`POST /2/dm_conversations/with/:participant_id/messages`, `GET /2/dm_events` (the inbox, polled
where no Account Activity webhook is subscribed), `POST /2/media/upload` (images in one call), videos
in chunks (`POST /2/media/upload/initialize`, `/{id}/append`, `/{id}/finalize`, then
`GET /2/media/upload?command=STATUS` polls).

The PKCE verifier is derived from the OAuth `state` (HMAC with the client secret), so the two legs
of the flow need no shared storage: pass the same `state` to `exchange_code`. X has no buttons in
DMs: a button is always sent as text with its URL on its own line (`fallback_used`)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import httpx2

from platforms._common import BaseAdapter, granted_credentials, merge_refreshed, pkce_challenge, pkce_verifier
from platforms.base import (
    AccountContext,
    Button,
    Capabilities,
    ConnectedIdentity,
    MediaItem,
    PartlyPublished,
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
from platforms.inbound import InboundEvent
from platforms.x import inbound
from platforms.x.rules import MAX_THREAD_POSTS, XInboxRules, XPostRules
from platforms.x.text import MAX_WEIGHTED_LENGTH, weighted_length

SCOPES = ("tweet.read", "tweet.write", "users.read", "dm.read", "dm.write", "offline.access", "media.write")


def _rate_limit_wait(headers: Mapping[str, str]) -> float:
    """Seconds until X lets the call through again. The 15-minute window's reset is not enough when
    a 24-hour limit (per user or per app) is spent: then its own reset decides."""
    resets = []
    for scope in ("user", "app"):
        remaining = headers.get(f"x-{scope}-limit-24hour-remaining")
        reset = headers.get(f"x-{scope}-limit-24hour-reset")
        if remaining == "0" and reset and reset.isdigit():
            resets.append(float(reset))
    window = headers.get("x-rate-limit-reset")
    if not resets and window and window.isdigit():
        resets.append(float(window))
    if not resets:
        return retry_after_seconds(headers, 60.0)
    return max(1.0, max(resets) - time.time())


def x_classify(response: httpx2.Response, secrets: list[str]) -> PlatformFailure:
    body = json_body(response)
    status = response.status_code
    if status == 429:
        return RetryLater("X rate limit reached", _rate_limit_wait(response.headers))
    if not isinstance(body, dict):
        return generic_failure(response, secrets)
    if isinstance(body.get("error"), str):  # token endpoint
        message = redact(str(body.get("error_description") or body["error"]), secrets)
        if body["error"] in ("invalid_grant", "invalid_request", "invalid_client"):
            return ReauthRequired(message)
        return Rejected(message, str(body["error"]))
    found = body.get("detail") or body.get("title")
    if not found and isinstance(body.get("errors"), list) and body["errors"]:
        found = body["errors"][0].get("message")
    message = redact(str(found or "X refused the request"), secrets)
    if status == 401:
        return ReauthRequired(message)
    if status >= 500:
        return RetryLater(message, 30.0)
    return Rejected(message, str(body.get("title") or status))


def _status_url(post_id: str) -> str:
    return f"https://x.com/i/web/status/{post_id}"


class XAdapter(BaseAdapter):
    platform = "x"
    display_name = "X"
    post_rules = XPostRules()
    inbox_rules = XInboxRules()
    webhook_check_refused = "No crc_token, or no X consumer secret is configured."
    classify = staticmethod(x_classify)
    capabilities = Capabilities(
        dm=True,
        dm_text_limit=10000,
        post_text_limit=280,
        post_media="optional",
        max_media=4,
        post_listing=True,
        publish_settle_seconds=5.0,
        comments=True,
        publish=True,
        delete_post=True,
        oauth=True,
        followers=True,
        inbound="webhook_or_poll",
    )
    chunk_bytes = 4 * 1024 * 1024  # X takes APPEND chunks of at most 5 MB
    status_poll_seconds = 10.0  # the longest wait between two STATUS polls of a processing video

    def webhook_check(self, params: Mapping[str, str]) -> str | dict[str, str] | None:
        return inbound.x_crc_response(params, self.config.x_consumer_secret)

    def verify_webhook(self, headers: Mapping[str, str], raw_body: bytes, query: Mapping[str, str]) -> bool:
        return inbound.verify(headers, raw_body, self.config.x_consumer_secret)

    def parse_webhook(self, payload: dict[str, Any], query: Mapping[str, str]) -> list[InboundEvent]:
        return inbound.parse(payload)

    def _headers(self, account: AccountContext) -> dict[str, str]:
        token = account.credentials.get("accessToken")
        if not isinstance(token, str) or not token:
            raise ReauthRequired("the account has no access token")
        return {"Authorization": f"Bearer {token}"}

    def _api(self, account: AccountContext, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        response = self._call(
            method,
            f"{self.endpoints.api}{path}",
            headers=self._headers(account),
            secrets=account.secrets(),
            **kwargs,
        )
        return json_body(response) or {}

    # -- connection ------------------------------------------------------------------------
    def authorize_url(self, *, state: str, redirect_uri: str) -> str:
        client = self.config.oauth_client(self.platform)
        verifier = pkce_verifier(client.client_secret, state)
        return self._authorize(
            "/i/oauth2/authorize",
            {
                "response_type": "code",
                "client_id": client.client_id,
                "redirect_uri": redirect_uri,
                "scope": " ".join(SCOPES),
                "state": state,
                "code_challenge": pkce_challenge(verifier),
                "code_challenge_method": "S256",
            },
        )

    def _token(self, form: dict[str, str], secrets: list[str]) -> dict[str, Any]:
        client = self.config.oauth_client(self.platform)
        response = self._call(
            "POST",
            f"{self.endpoints.oauth}/2/oauth2/token",
            data=form,
            auth=(client.client_id, client.client_secret),
            secrets=[client.client_secret, *secrets],
        )
        return json_body(response) or {}

    def _me(self, account: AccountContext) -> dict[str, Any]:
        me: dict[str, Any] = self._api(account, "GET", "/2/users/me", params={"user.fields": "public_metrics"}).get(
            "data", {}
        )
        return me

    def exchange_code(self, *, code: str, redirect_uri: str, state: str = "") -> ConnectedIdentity:
        client = self.config.oauth_client(self.platform)
        verifier = pkce_verifier(client.client_secret, state)
        answer = self._token(
            {
                "code": code,
                "grant_type": "authorization_code",
                "redirect_uri": redirect_uri,
                "code_verifier": verifier,
                "client_id": client.client_id,
            },
            [code, verifier],
        )
        credentials = granted_credentials(answer)
        me = self._me(AccountContext("", credentials))
        applied = self.subscribe_webhooks(AccountContext(str(me["id"]), credentials))
        return ConnectedIdentity(str(me["id"]), me.get("username"), me.get("name"), credentials, tuple(applied))

    def subscribe_webhooks(self, account: AccountContext) -> list[str]:
        """`POST /2/account_activity/webhooks/{webhook_id}/subscriptions/all` with the account's own
        token (https://docs.x.com/x-api/account-activity/introduction): its DMs then come by the app's
        webhook. Without a webhook configured, or refused (an access tier without Account Activity),
        nothing is subscribed and the DMs are polled (`inbox_page`); the connection still stands."""
        webhook = self.config.x_webhook_id
        if not webhook:
            return []
        try:
            self._api(account, "POST", f"/2/account_activity/webhooks/{webhook}/subscriptions/all", json={})
        except Rejected:
            return []
        return ["account_activity"]

    def refresh_credentials(self, account: AccountContext) -> dict[str, Any]:
        refresh = account.credentials.get("refreshToken")
        if not isinstance(refresh, str) or not refresh:
            raise ReauthRequired("the account has no refresh token")
        client = self.config.oauth_client(self.platform)
        answer = self._token(
            {"refresh_token": refresh, "grant_type": "refresh_token", "client_id": client.client_id},
            account.secrets(),
        )
        return merge_refreshed(account.credentials, answer)

    # -- messaging -------------------------------------------------------------------------
    def send_dm(
        self, account: AccountContext, *, recipient: str, text: str, button: Button | None = None
    ) -> SentMessage:
        def plain(body: str) -> SentMessage:
            payload = {"text": body}
            answer = self._api(
                account, "POST", f"/2/dm_conversations/with/{recipient}/messages", json=payload
            )
            return SentMessage(str(answer["data"]["dm_event_id"]), False, payload)

        return self._with_button_fallback(text, button, lambda _button: plain(text), plain)

    def inbox_page(self, account: AccountContext, *, page_token: str | None) -> dict[str, Any]:
        """`GET /2/dm_events`: the account's DM events of the last 30 days, newest first, with the
        senders' users expanded; `pagination_token` is the previous page's `meta.next_token`."""
        params = {
            "event_types": "MessageCreate",
            "dm_event.fields": "id,text,event_type,created_at,dm_conversation_id",
            "expansions": "sender_id",
            "user.fields": "username,name",
            "max_results": "100",
        }
        if page_token:
            if len(page_token) < 16:
                # X's tokens are base32hex of 16 characters or more (its OpenAPI document's `minLength`):
                # a shorter one was never X's, refused before the call.
                raise Rejected("the page token is not one X issued", "invalid_page_token")
            params["pagination_token"] = page_token
        return self._api(account, "GET", "/2/dm_events", params=params)

    def public_reply(self, account: AccountContext, *, comment_id: str, text: str) -> str:
        answer = self._api(
            account, "POST", "/2/tweets", json={"text": text, "reply": {"in_reply_to_tweet_id": comment_id}}
        )
        return str(answer["data"]["id"])

    def comment_on_post(self, account: AccountContext, *, platform_post_id: str, text: str) -> str:
        """On X a comment is a reply: `POST /2/tweets` with `reply.in_reply_to_tweet_id`."""
        return self.public_reply(account, comment_id=platform_post_id, text=text)

    def follower_count(self, account: AccountContext) -> int:
        return int((self._me(account).get("public_metrics") or {}).get("followers_count", 0))

    def publish_options(self, account: AccountContext) -> dict[str, Any]:
        return {
            "platform": self.platform,
            "textLimit": 280,
            "maxImages": 4,
            # "everyone" is X's default and not a value it accepts: it means leaving the field out.
            "replySettings": ["everyone", "following", "mentionedUsers", "subscribers", "verified"],
            "maxVideos": 1,
            # `thread`: the posts that follow the first, each a reply to the previous one.
            "thread": {"maxPosts": MAX_THREAD_POSTS, "weightedLimit": MAX_WEIGHTED_LENGTH},
            "firstComment": {"weightedLimit": MAX_WEIGHTED_LENGTH},  # a reply under the post, once it is live
        }

    # -- publishing ------------------------------------------------------------------------
    def _upload_image(self, account: AccountContext, item: MediaItem) -> str:
        answer = self._api(
            account,
            "POST",
            "/2/media/upload",
            files={"media": ("media", self._read_media(item), item.content_type)},
            data={"media_category": "tweet_image"},
        )
        return str(answer["data"]["id"])

    def _check(self, text: str, media: list[MediaItem], options: dict[str, Any]) -> None:
        videos = [m for m in media if m.is_video]
        if videos and len(media) > 1:
            raise Rejected("an X post takes one video, or up to 4 images", "media_unsupported")
        for part in [text, *(options.get("thread") or [])]:
            if weighted_length(part) > MAX_WEIGHTED_LENGTH:
                raise Rejected(f"a post weighs {weighted_length(part)} of X's {MAX_WEIGHTED_LENGTH} (links count 23, "
                               "most non-Latin characters and emoji 2)", "text_too_long")

    def publish_step(
        self, account: AccountContext, *, text: str, media: list[MediaItem], options: dict[str, Any],
        progress: dict[str, Any] | None,
    ) -> PublishedPost | PublishPending:
        """A video goes up in chunks (initialize, one append per chunk, finalize, then STATUS polls while X
        processes it), each a durable step; then the post; then each post of a `thread`, replying to
        the previous one. Upload steps may run twice (an APPEND of the same segment replaces it, and
        nothing is public); the posts may not (`repeatable=False`)."""
        phase = (progress or {}).get("phase")
        if progress is None:
            self._check(text, media, options)
            video = next((m for m in media if m.is_video), None)
            if video is None:
                return self._tweet(account, text=text, media=media, options=options, video_id=None)
            answer = self._api(account, "POST", "/2/media/upload/initialize", json={
                "media_type": video.content_type, "total_bytes": video.size, "media_category": "tweet_video"})
            return PublishPending({"phase": "append", "media": str(answer["data"]["id"]), "segment": 0}, poll_after=0.0)
        if phase in ("append", "finalize", "status"):
            return self._video_step(account, media, progress)
        if phase == "tweet":
            return self._tweet(account, text=text, media=media, options=options, video_id=progress.get("media"))
        if phase == "thread":
            return self._thread_step(account, options, progress)
        raise Rejected("the publish's stored progress is not understood; retry the post", "bad_progress")

    def _video_step(self, account: AccountContext, media: list[MediaItem], progress: dict[str, Any]
                    ) -> PublishPending:
        video = next(m for m in media if m.is_video)
        media_id = str(progress["media"])
        phase = progress["phase"]
        if phase == "append":
            segment = int(progress["segment"])
            start = segment * self.chunk_bytes
            end = min(start + self.chunk_bytes, video.size)
            self._api(account, "POST", f"/2/media/upload/{media_id}/append",
                      files={"media": ("chunk", self._read_media(video, start, end), "application/octet-stream")},
                      data={"segment_index": str(segment)})
            if end < video.size:
                return PublishPending({**progress, "segment": segment + 1}, poll_after=0.0)
            return PublishPending({**progress, "phase": "finalize"}, poll_after=0.0)
        if phase == "finalize":
            answer = self._api(account, "POST", f"/2/media/upload/{media_id}/finalize")
        else:
            answer = self._api(account, "GET", "/2/media/upload", params={"command": "STATUS", "media_id": media_id})
        info = (answer.get("data") or {}).get("processing_info") or {}
        state = info.get("state", "succeeded")
        if state == "failed":
            error = info.get("error") or {}
            raise Rejected(f"X could not process the video ({error.get('message') or error.get('name') or 'failed'})",
                           "media_processing_failed")
        if state == "succeeded":
            # The post comes next: it must not run twice.
            return PublishPending({**progress, "phase": "tweet"}, poll_after=0.0, repeatable=False)
        wait = float(info.get("check_after_secs") or 1)
        return PublishPending({**progress, "phase": "status"}, poll_after=min(max(wait, 0.2), self.status_poll_seconds))

    def _tweet(self, account: AccountContext, *, text: str, media: list[MediaItem], options: dict[str, Any],
               video_id: str | None) -> PublishedPost | PublishPending:
        body: dict[str, Any] = {"text": text}
        if video_id:
            body["media"] = {"media_ids": [video_id]}
        elif media:
            body["media"] = {"media_ids": [self._upload_image(account, item) for item in media[:4]]}
        if options.get("replySettings") and options["replySettings"] != "everyone":
            body["reply_settings"] = options["replySettings"]
        answer = self._api(account, "POST", "/2/tweets", json=body)
        post_id = str(answer["data"]["id"])
        if options.get("thread"):
            # `live`: what is public already, so a worker lost from here on leaves it published.
            return PublishPending({"phase": "thread", "ids": [post_id], "live": [post_id, _status_url(post_id)]},
                                  poll_after=0.0, repeatable=False)
        return PublishedPost(post_id, _status_url(post_id))

    def _thread_step(self, account: AccountContext, options: dict[str, Any], progress: dict[str, Any]
                     ) -> PublishedPost | PublishPending:
        """The next post of the thread, a reply to the previous one. Once the first is live, a refusal
        leaves the target published (`PartlyPublished`), never publishing the first again."""
        ids = [str(i) for i in progress["ids"]]
        parts = list(options.get("thread") or [])
        head = ids[0]
        if len(ids) > len(parts):
            return PublishedPost(head, _status_url(head))
        try:
            answer = self._api(account, "POST", "/2/tweets", json={
                "text": parts[len(ids) - 1], "reply": {"in_reply_to_tweet_id": ids[-1]}})
        except RetryLater:
            raise
        except PlatformFailure as failure:
            raise PartlyPublished(f"the thread stopped after {len(ids)} of {len(parts) + 1} posts: {failure.message}",
                                  head, _status_url(head)) from None
        ids.append(str(answer["data"]["id"]))
        if len(ids) > len(parts):
            return PublishedPost(head, _status_url(head))
        return PublishPending({**progress, "ids": ids}, poll_after=0.0, repeatable=False)

    def recent_posts(self, account: AccountContext) -> list[RecentPost]:
        answer = self._api(account, "GET", f"/2/users/{account.platform_account_id}/tweets",
                           params={"max_results": "20", "tweet.fields": "created_at"})
        return [RecentPost(str(t["id"]), t.get("text"), _status_url(str(t["id"])))
                for t in answer.get("data") or []]

    def delete_post(self, account: AccountContext, *, platform_post_id: str) -> None:
        try:
            self._api(account, "DELETE", f"/2/tweets/{platform_post_id}")
        except Rejected as failure:
            if failure.code not in ("Not Found Error", "404"):
                raise
