"""Instagram through the Instagram API with Instagram Login (graph.instagram.com).

Messaging: `POST /{v}/{ig-user-id}/messages` (Send API, button template, private replies by
`recipient.comment_id`); comments: `POST /{v}/{ig-comment-id}/replies`; publishing: containers
`POST /{v}/{ig-user-id}/media` then `POST /{v}/{ig-user-id}/media_publish`; connection:
`www.instagram.com/oauth/authorize`, `api.instagram.com/oauth/access_token`, then the long-lived
token (`GET /access_token?grant_type=ig_exchange_token`) refreshed with
`GET /refresh_access_token?grant_type=ig_refresh_token` (Instagram has no refresh token).
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from platforms._common import expires_at
from platforms._graph import MessengerStyle
from platforms.base import (
    AccountContext,
    Capabilities,
    ConnectedIdentity,
    MediaItem,
    PublishedPost,
    Rejected,
    RetryLater,
)
from platforms.http import json_body

SCOPES = (
    "instagram_business_basic",
    "instagram_business_manage_messages",
    "instagram_business_manage_comments",
    "instagram_business_content_publish",
)
WEBHOOK_FIELDS = ["messages", "messaging_postbacks", "messaging_seen", "comments"]


class InstagramAdapter(MessengerStyle):
    webhook_fields = tuple(WEBHOOK_FIELDS)
    platform = "instagram"
    capabilities = Capabilities(
        dm=True,
        dm_text_limit=1000,
        post_text_limit=2200,
        post_media="required_image_or_video",
        max_media=10,
        button="template",
        messaging_window_hours=24,
        comments=True,
        private_replies=True,
        publish=True,
        delete_post=True,
        oauth=True,
        inbound_webhooks=True,
        followers=True,
        conversations_listing=True,
    )
    lapsing_credentials: ClassVar[tuple[str, ...]] = ("expiresAt",)
    container_poll_seconds = 1.0
    container_poll_attempts = 60

    def _app_secret(self) -> str:
        # Instagram Login tokens are proven with the Instagram app's own secret.
        return self.config.instagram_app_secret or self.config.meta_app_secret

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
    def public_reply(self, account: AccountContext, *, comment_id: str, text: str) -> str:
        answer = self._graph(
            "POST",
            f"{comment_id}/replies",
            self._token(account),
            secrets=account.secrets(),
            json={"message": text},
        )
        return str(answer["id"])

    def contact_profile(self, account: AccountContext, *, contact_id: str) -> dict[str, Any]:
        answer = self._graph(
            "GET",
            contact_id,
            self._token(account),
            secrets=account.secrets(),
            params={"fields": "name,username"},
        )
        return {"id": contact_id, "username": answer.get("username"), "name": answer.get("name")}

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
            "mediaTypes": ["IMAGE", "REELS", "CAROUSEL"],
            "captionLimit": 2200,
            "maxCarouselItems": 10,
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

    def _wait_finished(self, account: AccountContext, container_id: str) -> None:
        for _ in range(self.container_poll_attempts):
            answer = self._graph(
                "GET",
                container_id,
                self._token(account),
                secrets=account.secrets(),
                params={"fields": "status_code"},
            )
            status = answer.get("status_code")
            if status in (None, "FINISHED", "PUBLISHED"):
                return
            if status in ("ERROR", "EXPIRED"):
                raise Rejected(f"Instagram could not process the media ({status})", str(status))
            time.sleep(self.container_poll_seconds)
        raise RetryLater("Instagram is still processing the media", 60.0)

    @staticmethod
    def _media_fields(item: MediaItem) -> dict[str, Any]:
        if item.is_video:
            return {"media_type": "REELS", "video_url": item.url}
        return {"image_url": item.url}

    def publish_post(
        self, account: AccountContext, *, text: str, media: list[MediaItem], options: dict[str, Any]
    ) -> PublishedPost:
        if not media:
            raise Rejected("Instagram needs an image or a video", "media_required")
        if len(media) == 1:
            container = self._container(account, {**self._media_fields(media[0]), "caption": text})
        else:
            children = []
            for item in media[:10]:
                fields = self._media_fields(item)
                if item.is_video:
                    fields["media_type"] = "VIDEO"
                children.append(self._container(account, {**fields, "is_carousel_item": True}))
            for child in children:
                self._wait_finished(account, child)
            container = self._container(
                account, {"media_type": "CAROUSEL", "children": ",".join(children), "caption": text}
            )
        self._wait_finished(account, container)
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

    def delete_post(self, account: AccountContext, *, platform_post_id: str) -> None:
        self._delete_node(account, platform_post_id)
