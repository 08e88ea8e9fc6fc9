"""Instagram through the Instagram API with Instagram Login (graph.instagram.com).

Messaging: `POST /{v}/{ig-user-id}/messages` (Send API, button template, private replies by
`recipient.comment_id`); comments: `POST /{v}/{ig-comment-id}/replies`; publishing: containers
`POST /{v}/{ig-user-id}/media` then `POST /{v}/{ig-user-id}/media_publish`; connection:
`www.instagram.com/oauth/authorize`, `api.instagram.com/oauth/access_token`, then the long-lived
token (`GET /access_token?grant_type=ig_exchange_token`) refreshed with
`GET /refresh_access_token?grant_type=ig_refresh_token` (Instagram has no refresh token).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, ClassVar

from platforms._common import counts_from_gains, expires_at, utc_today
from platforms.base import (
    AccountContext,
    Capabilities,
    ConnectedIdentity,
    FollowerPoint,
    Indeterminate,
    MediaItem,
    PublishedPost,
    PublishPending,
    RecentPost,
    Rejected,
    Unsupported,
)
from platforms.graph.adapter import MessengerStyle
from platforms.http import json_body
from platforms.instagram.rules import InstagramPostRules

SCOPES = (
    "instagram_business_basic",
    "instagram_business_manage_messages",
    "instagram_business_manage_comments",
    "instagram_business_content_publish",
    "instagram_business_manage_insights",  # the past follower counts read after connecting (insights)
)
WEBHOOK_FIELDS = ["messages", "messaging_postbacks", "messaging_seen", "comments"]


class InstagramAdapter(MessengerStyle):
    webhook_fields = tuple(WEBHOOK_FIELDS)
    platform = "instagram"
    display_name = "Instagram"
    reply_edge = "replies"  # a reply to a comment: `POST /{ig-comment-id}/replies`
    post_rules = InstagramPostRules()
    capabilities = Capabilities(
        dm=True,
        dm_text_limit=1000,
        post_text_limit=2200,
        post_media="required_image_or_video",
        max_media=10,
        post_listing=True,
        publish_settle_seconds=30.0,
        button="template",
        messaging_window_hours=24,
        comments=True,
        private_replies=True,
        publish=True,
        delete_post=False,  # not offered by the Instagram API with Instagram Login
        oauth=True,
        inbound_webhooks=True,
        followers=True,
        follower_history_days=30,  # insights' follower_count: the last 30 days
        conversations_listing=True,
    )

    lapsing_credentials: ClassVar[tuple[str, ...]] = ("expiresAt",)
    max_items = 10  # a carousel's children
    image_poll_seconds = 1.0
    video_poll_seconds = 10.0  # video containers take minutes: one status poll every 10 s

    def _webhook_secrets(self) -> list[str]:
        # Webhooks of an Instagram Login app are signed with that app's own secret, those of a
        # Facebook Login app with the Meta app's: either is accepted.
        return [self.config.meta_app_secret, self.config.instagram_app_secret]

    def _app_secret(self) -> str:
        # Instagram Login tokens are issued to the Instagram app: a proof can only be made with its
        # own secret. Meta's Instagram Login pages document no `appsecret_proof` on graph.instagram.com;
        # a proof made with the Meta app's secret would be wrong wherever it is checked, so without the
        # Instagram app's secret none is sent.
        return self.config.instagram_app_secret

    # -- connection ------------------------------------------------------------------------
    def authorize_url(self, *, state: str, redirect_uri: str) -> str:
        client = self.config.oauth_client(self.platform)
        return self._authorize(
            "/oauth/authorize",
            {
                "client_id": client.client_id,
                "redirect_uri": redirect_uri,
                "response_type": "code",
                "scope": ",".join(SCOPES),
                "state": state,
            },
        )

    def exchange_code(self, *, code: str, redirect_uri: str, state: str = "") -> ConnectedIdentity:
        client = self.config.oauth_client(self.platform)
        response = self._call(
            "POST",
            f"{self.endpoints.oauth}/oauth/access_token",
            data={
                "client_id": client.client_id,
                "client_secret": client.client_secret,
                "grant_type": "authorization_code",
                "redirect_uri": redirect_uri,
                "code": code,
            },
            secrets=[client.client_secret, code],
        )
        answer = json_body(response) or {}
        if isinstance(answer.get("data"), list) and answer["data"]:
            answer = answer["data"][0]
        short = str(answer["access_token"])
        response = self._call(
            "GET",
            f"{self.endpoints.api}/access_token",
            params={
                "grant_type": "ig_exchange_token",
                "client_secret": client.client_secret,
                "access_token": short,
            },
            secrets=[client.client_secret, short],
        )
        long = json_body(response) or {}
        token = str(long["access_token"])
        me = self._graph("GET", "me", token, params={"fields": "user_id,username,name"})
        account_id = str(me.get("user_id") or me.get("id") or answer.get("user_id"))
        credentials = {
            "accessToken": token,
            "expiresAt": expires_at(long.get("expires_in")),
            "userId": account_id,
        }
        fields = self.subscribe_webhooks(AccountContext(account_id, credentials))
        return ConnectedIdentity(account_id, me.get("username"), me.get("name"), credentials, tuple(fields))

    def refresh_credentials(self, account: AccountContext) -> dict[str, Any]:
        token = self._token(account)
        response = self._call(
            "GET",
            f"{self.endpoints.api}/refresh_access_token",
            params={"grant_type": "ig_refresh_token", "access_token": token},
            secrets=account.secrets(),
        )
        answer = json_body(response) or {}
        new = dict(account.credentials)
        new["accessToken"] = str(answer["access_token"])
        new["expiresAt"] = expires_at(answer.get("expires_in"))
        return new

    # -- comments, profile, conversations --------------------------------------------------
    def contact_profile(self, account: AccountContext, *, contact_id: str) -> dict[str, Any]:
        """The User Profile API for messaging: `GET /{igsid}?fields=name,username,profile_pic`
        (the person must have messaged the account)."""
        answer = self._graph(
            "GET",
            contact_id,
            self._token(account),
            secrets=account.secrets(),
            params={"fields": "name,username,profile_pic"},
        )
        return {"id": contact_id, "username": answer.get("username"), "name": answer.get("name"),
                "profilePic": answer.get("profile_pic")}

    def list_conversations(self, account: AccountContext) -> list[dict[str, Any]]:
        conversations = self._graph_all(
            f"{account.platform_account_id}/conversations",
            self._token(account),
            secrets=account.secrets(),
            params={"platform": "instagram", "fields": "participants,updated_time"},
        )
        return [
            {
                "id": str(item["id"]),
                "updatedTime": item.get("updated_time"),
                "participants": [
                    {"id": str(p.get("id")), "username": p.get("username")}
                    for p in (item.get("participants") or {}).get("data", [])
                ],
            }
            for item in conversations
        ]

    # -- publishing ------------------------------------------------------------------------
    def publish_options(self, account: AccountContext) -> dict[str, Any]:
        return {
            "platform": self.platform,
            "mediaTypes": ["IMAGE", "REELS", "CAROUSEL", "STORIES"],
            # options: mediaType STORIES (one image or video) or REELS (one video, with coverUrl, shareToFeed)
            "mediaType": ["STORIES", "REELS"],
            "reels": {"coverUrl": "an image URL", "shareToFeed": "true (default) or false"},
            "captionLimit": 2200,
            "maxCarouselItems": 10,
            "firstComment": {"maxLength": 2200},  # options.firstComment: posted under the post once live
        }

    def _container(self, account: AccountContext, body: dict[str, Any]) -> str:
        answer = self._graph(
            "POST",
            f"{account.platform_account_id}/media",
            self._token(account),
            secrets=account.secrets(),
            json=body,
        )
        return str(answer["id"])

    def _status(self, account: AccountContext, container_id: str) -> str:
        answer = self._graph(
            "GET",
            container_id,
            self._token(account),
            secrets=account.secrets(),
            params={"fields": "status_code"},
        )
        return str(answer.get("status_code") or "FINISHED")

    @staticmethod
    def _media_fields(item: MediaItem) -> dict[str, Any]:
        if item.is_video:
            return {"media_type": "REELS", "video_url": item.url}
        return {"image_url": item.url}

    def publish_step(
        self, account: AccountContext, *, text: str, media: list[MediaItem], options: dict[str, Any],
        progress: dict[str, Any] | None,
    ) -> PublishedPost | PublishPending:
        """Containers (and a carousel's children) → status polls until FINISHED → `media_publish`.

        A video container takes minutes to process: each poll is a step of its own, due
        `video_poll_seconds` later, never a sleep. The `status` step may safely run twice: a
        container already published answers PUBLISHED, and its media is then found among the
        account's recent media rather than published again."""
        if progress is None:
            return self._create(account, text=text, media=media, options=options)
        # Polls back off: soon at first (an image is ready at once), every `video_poll_seconds` at most.
        polls = int(progress.get("polls", 0))
        progress = {**progress, "polls": polls + 1}
        poll = min(self.video_poll_seconds if progress.get("video") else self.image_poll_seconds, 0.5 * 2 ** polls)
        if progress.get("phase") == "children":
            statuses = [self._status(account, child) for child in progress["children"]]
            failed = [s for s in statuses if s in ("ERROR", "EXPIRED")]
            if failed:
                raise Rejected(f"Instagram could not process a carousel item ({failed[0]})", failed[0])
            if any(s != "FINISHED" for s in statuses):
                return PublishPending(progress, poll_after=poll)
            container = self._container(account, {"media_type": "CAROUSEL", "children": ",".join(progress["children"]),
                                                  "caption": text})
            return PublishPending({**progress, "phase": "status", "container": container}, poll_after=0.0)
        container = str(progress["container"])
        status = self._status(account, container)
        if status in ("ERROR", "EXPIRED"):
            raise Rejected(f"Instagram could not process the media ({status})", status)
        if status == "PUBLISHED":
            for recent in self.recent_posts(account):
                if (recent.text or "") == text:
                    return PublishedPost(recent.platform_post_id, recent.url)
            raise Indeterminate("Instagram says the container is published but its media is not listed yet")
        if status != "FINISHED":
            return PublishPending(progress, poll_after=poll)
        answer = self._graph(
            "POST",
            f"{account.platform_account_id}/media_publish",
            self._token(account),
            secrets=account.secrets(),
            json={"creation_id": container},
        )
        media_id = str(answer["id"])
        permalink = self._graph(
            "GET", media_id, self._token(account), secrets=account.secrets(), params={"fields": "permalink"}
        ).get("permalink")
        return PublishedPost(media_id, permalink)

    def _create(self, account: AccountContext, *, text: str, media: list[MediaItem], options: dict[str, Any]
                ) -> PublishPending:
        if not media:
            raise Rejected("Instagram needs an image or a video", "media_required")
        kind = options.get("mediaType")
        if kind in ("STORIES", "REELS"):
            return self._story_or_reel(account, kind, text=text, media=media, options=options)
        if len(media) > self.max_items:
            raise Rejected(f"an Instagram carousel takes at most {self.max_items} items",
                           "too_many_items")
        video = any(item.is_video for item in media)
        if len(media) == 1:
            container = self._container(account, {**self._media_fields(media[0]), "caption": text})
            return PublishPending({"phase": "status", "container": container, "video": video}, poll_after=0.0)
        children = []
        for item in media:
            fields = self._media_fields(item)
            if item.is_video:
                fields["media_type"] = "VIDEO"
            children.append(self._container(account, {**fields, "is_carousel_item": True}))
        return PublishPending({"phase": "children", "children": children, "video": video}, poll_after=0.0)

    def _story_or_reel(self, account: AccountContext, kind: str, *, text: str, media: list[MediaItem],
                       options: dict[str, Any]) -> PublishPending:
        """`media_type=STORIES` (one image or video, no caption: a story shows none) or `REELS` (one
        video with its caption, `cover_url` and `share_to_feed`)."""
        if len(media) != 1 or (kind == "REELS" and not media[0].is_video):
            raise Rejected("a reel is one video" if kind == "REELS" else "a story is one image or video",
                           "media_unsupported")
        item = media[0]
        body: dict[str, Any] = {"media_type": kind, ("video_url" if item.is_video else "image_url"): item.url}
        if kind == "REELS":
            body["caption"] = text
            if options.get("coverUrl"):
                body["cover_url"] = options["coverUrl"]
            if "shareToFeed" in options:
                body["share_to_feed"] = bool(options["shareToFeed"])
        container = self._container(account, body)
        return PublishPending({"phase": "status", "container": container, "video": item.is_video}, poll_after=0.0)

    def recent_posts(self, account: AccountContext) -> list[RecentPost]:
        answer = self._graph(
            "GET",
            f"{account.platform_account_id}/media",
            self._token(account),
            secrets=account.secrets(),
            params={"fields": "id,caption,permalink,timestamp", "limit": "25"},
        )
        return [RecentPost(str(item["id"]), item.get("caption"), item.get("permalink"), item.get("timestamp"))
                for item in answer.get("data") or []]

    def follower_history(self, account: AccountContext, *, days: int) -> list[FollowerPoint]:
        """The account's insights: `GET /{ig-user-id}/insights?metric=follower_count&period=day` with
        `since` and `until` (Unix times), the followers gained each day of the last 30 (today not
        among them), counted back from `followers_count` now. Instagram keeps 30 days of it."""
        days = max(1, min(days, self.capabilities.follower_history_days))
        today = utc_today()
        since = dt.datetime.combine(today - dt.timedelta(days=days - 1), dt.time(), dt.UTC)
        until = dt.datetime.combine(today, dt.time(), dt.UTC)
        answer = self._graph(
            "GET",
            f"{account.platform_account_id}/insights",
            self._token(account),
            secrets=account.secrets(),
            params={"metric": "follower_count", "period": "day", "since": str(int(since.timestamp())),
                    "until": str(int(until.timestamp()))},
        )
        gains: dict[dt.date, int] = {}
        for metric in answer.get("data") or []:
            if not isinstance(metric, dict) or metric.get("name") != "follower_count":
                continue
            for value in metric.get("values") or []:
                try:  # `end_time` ends the day it counts
                    ended = dt.datetime.fromisoformat(str(value["end_time"]).replace("+0000", "+00:00"))
                    gains[(ended - dt.timedelta(days=1)).date()] = int(value.get("value") or 0)
                except (KeyError, TypeError, ValueError):
                    continue
        return counts_from_gains(self.follower_count(account), gains, days)

    def delete_post(self, account: AccountContext, *, platform_post_id: str) -> None:
        # The Instagram API with Instagram Login offers no way to delete media (only the app does).
        raise Unsupported("the Instagram API with Instagram Login has no endpoint to delete a post; delete it in "
                          "the Instagram app")
