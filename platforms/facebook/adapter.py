"""Facebook Pages: Messenger Send API (`POST /{v}/{page-id}/messages`), comments
(`POST /{v}/{comment-id}/comments`), Page posts (`/{page-id}/feed`, `/photos`, `/videos`), webhooks
(`POST /{v}/{page-id}/subscribed_apps`). Connected with Facebook Login: the long-lived user token
gives the Page token (`GET /{v}/me/accounts`), which does not expire; refreshing exchanges the user
token again (`grant_type=fb_exchange_token`) and re-reads the Page token."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from platforms.base import (
    AccountContext,
    Capabilities,
    ConnectedIdentity,
    GrantChoice,
    MediaItem,
    PlatformFailure,
    PublishedPost,
    RecentPost,
    Rejected,
)
from platforms.facebook.rules import FacebookPostRules
from platforms.graph.adapter import FacebookLogin, MessengerStyle

WEBHOOK_FIELDS = [
    "messages",
    "messaging_postbacks",
    "message_echoes",
    "message_deliveries",
    "message_reads",
    "feed",
]


class FacebookAdapter(MessengerStyle, FacebookLogin):
    # None: the Page token a long-lived user token gives "has no expiration date"
    # (https://developers.facebook.com/docs/facebook-login/guides/access-tokens/get-long-lived), and
    # Meta documents no renewal of a long-lived user token by exchanging it again. The Page token is
    # what every call uses; a refused one is renewed then (`refresh_credentials`) or flags the account.
    lapsing_credentials: ClassVar[tuple[str, ...]] = ()
    webhook_fields = tuple(WEBHOOK_FIELDS)
    platform = "facebook"
    display_name = "Facebook"
    post_rules = FacebookPostRules()
    scopes = (
        "pages_show_list",
        "pages_messaging",
        "pages_manage_metadata",
        "pages_manage_posts",
        "pages_read_engagement",
        "pages_manage_engagement",
    )
    capabilities = Capabilities(
        dm=True,
        dm_text_limit=2000,
        post_text_limit=63206,
        post_media="optional",
        button="template",
        messaging_window_hours=24,
        comments=True,
        private_replies=True,
        publish=True,
        delete_post=True,
        oauth=True,
        inbound_webhooks=True,
        followers=True,
        post_listing=True,
        publish_settle_seconds=5.0,
    )

    def exchange_code(self, *, code: str, redirect_uri: str, state: str = "") -> ConnectedIdentity:
        user_token, user_expires = self._user_token(code=code, redirect_uri=redirect_uri)
        pages = self._graph_all("me/accounts", user_token, params={"fields": "id,name,username,access_token"})
        if not pages:
            raise Rejected("this Facebook user manages no Page", "no_page")
        page = pages[0]
        credentials = {
            "accessToken": str(page["access_token"]),
            "userAccessToken": user_token,
            "userExpiresAt": user_expires,
            "pageId": str(page["id"]),
        }
        account = AccountContext(str(page["id"]), credentials)
        fields = self.subscribe_webhooks(account)
        return ConnectedIdentity(
            str(page["id"]), page.get("username"), page.get("name"), credentials, tuple(fields)
        )

    def exchange_code_choices(self, *, code: str, redirect_uri: str, state: str = "") -> list[GrantChoice]:
        """Every Page the person manages (`GET /me/accounts`), each with its own Page token; none
        is subscribed to webhooks until it is chosen (`connect_choice`)."""
        user_token, user_expires = self._user_token(code=code, redirect_uri=redirect_uri)
        pages = self._graph_all("me/accounts", user_token, params={"fields": "id,name,username,access_token"})
        if not pages:
            raise Rejected("this Facebook user manages no Page", "no_page")
        return [
            GrantChoice("page", ConnectedIdentity(
                str(page["id"]), page.get("username"), page.get("name"),
                {"accessToken": str(page["access_token"]), "userAccessToken": user_token,
                 "userExpiresAt": user_expires, "pageId": str(page["id"])},
            ))
            for page in pages
        ]

    def connect_choice(self, identity: ConnectedIdentity) -> ConnectedIdentity:
        fields = self.subscribe_webhooks(AccountContext(identity.platform_account_id, identity.credentials))
        return dataclasses.replace(identity, subscribed_fields=tuple(fields))

    def refresh_credentials(self, account: AccountContext) -> dict[str, Any]:
        user_token = account.credentials.get("userAccessToken")
        if not isinstance(user_token, str):
            return dict(account.credentials)
        new_user, expires = self._exchange_user_token(user_token)
        page = self._graph(
            "GET",
            account.platform_account_id,
            new_user,
            secrets=account.secrets(),
            params={"fields": "access_token"},
        )
        new = dict(account.credentials)
        new.update(userAccessToken=new_user, userExpiresAt=expires, accessToken=str(page["access_token"]))
        return new

    def contact_profile(self, account: AccountContext, *, contact_id: str) -> dict[str, Any]:
        """Messenger's User Profile API: `GET /{psid}?fields=first_name,last_name,profile_pic`."""
        answer = self._graph(
            "GET",
            contact_id,
            self._token(account),
            secrets=account.secrets(),
            params={"fields": "first_name,last_name,profile_pic"},
        )
        name = " ".join(part for part in (answer.get("first_name"), answer.get("last_name")) if part)
        return {"id": contact_id, "username": None, "name": name or None, "profilePic": answer.get("profile_pic")}

    def publish_options(self, account: AccountContext) -> dict[str, Any]:
        return {
            "platform": self.platform,
            "mediaTypes": ["TEXT", "LINK", "PHOTO", "VIDEO"],
            "link": "optional",
            "firstComment": {"maxLength": 8000},  # options.firstComment: posted under the post once live
        }

    def publish_post(
        self, account: AccountContext, *, text: str, media: list[MediaItem], options: dict[str, Any]
    ) -> PublishedPost:
        page = account.platform_account_id
        token = self._token(account)
        secrets = account.secrets()
        videos = [m for m in media if m.is_video]
        images = [m for m in media if m.is_image]
        if videos and len(media) > 1:
            # `/videos` takes one video and no photos: never drop the rest silently.
            raise Rejected("a Facebook post takes one video alone, or images", "media_unsupported")
        if videos:
            answer = self._graph(
                "POST",
                f"{page}/videos",
                token,
                secrets=secrets,
                json={"file_url": videos[0].url, "description": text},
            )
            post_id = self._video_post(account, str(answer["id"]))
        elif len(images) == 1:
            answer = self._graph(
                "POST", f"{page}/photos", token, secrets=secrets, json={"url": images[0].url, "caption": text}
            )
            post_id = str(answer.get("post_id") or answer["id"])
        else:
            body: dict[str, Any] = {"message": text}
            if options.get("link"):
                body["link"] = options["link"]
            if images:
                attached = []
                for image in images:
                    photo = self._graph(
                        "POST",
                        f"{page}/photos",
                        token,
                        secrets=secrets,
                        json={"url": image.url, "published": False},
                    )
                    attached.append({"media_fbid": str(photo["id"])})
                body["attached_media"] = attached
            answer = self._graph("POST", f"{page}/feed", token, secrets=secrets, json=body)
            post_id = str(answer["id"])
        return PublishedPost(post_id, f"https://www.facebook.com/{post_id}")

    def _video_post(self, account: AccountContext, video_id: str) -> str:
        """The id of the Page post made for a video (`GET /{video-id}?fields=post_id`): `/videos` answers
        the Video's id, while `published_posts` (reconciliation) and a post's comments go by the post's.
        The video is published already: a failed lookup keeps the video's id rather than fail the
        publication (which would publish it again)."""
        try:
            node = self._graph("GET", video_id, self._token(account), secrets=account.secrets(),
                               params={"fields": "post_id"})
        except PlatformFailure:
            return video_id
        found = node.get("post_id") if isinstance(node, dict) else None
        return str(found) if found else video_id

    def recent_posts(self, account: AccountContext) -> list[RecentPost]:
        answer = self._graph(
            "GET",
            f"{account.platform_account_id}/published_posts",
            self._token(account),
            secrets=account.secrets(),
            params={"fields": "id,message,permalink_url,created_time", "limit": "25"},
        )
        return [RecentPost(str(item["id"]), item.get("message"), item.get("permalink_url"), item.get("created_time"))
                for item in answer.get("data") or []]

    def delete_post(self, account: AccountContext, *, platform_post_id: str) -> None:
        self._delete_node(account, platform_post_id)
