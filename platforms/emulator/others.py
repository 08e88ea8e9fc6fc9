"""Telegram Bot API, TikTok, YouTube Data API, X API v2 and LinkedIn emulation."""

from __future__ import annotations

import datetime as dt
import re
import time
import uuid
from typing import Any
from urllib.parse import unquote, urlencode, urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from platforms.emulator.core import (
    Call,
    EmulatorBase,
    bad_button_url,
    google_error,
    linkedin_error,
    oauth_error,
    telegram_error,
    tiktok_error,
    x_error,
)
from platforms.emulator.state import Account, random_token
from platforms.x_text import MAX_WEIGHTED_LENGTH, weighted_length

X_VIDEO_TYPES = ("video/mp4", "video/quicktime", "video/webm")
X_VIDEO_MAX_BYTES = 512 * 1024 * 1024
X_CHUNK_MAX_BYTES = 5 * 1024 * 1024


def x_invalid(detail: str) -> JSONResponse:
    return x_error(400, "Invalid Request", detail, kind="https://api.twitter.com/2/problems/invalid-request")


LI_VIDEO_MIN_BYTES = 75 * 1024
LI_VIDEO_MAX_BYTES = 500 * 1024 * 1024
LI_VIDEO_PART_BYTES = 4 * 1024 * 1024
REPLY_SETTINGS = ("following", "mentionedUsers", "subscribers", "verified")
# The sandbox LinkedIn app has "Share on LinkedIn", "Sign In with LinkedIn using OpenID Connect" and
# member analytics (so both sides of the follower count can be tried).
LINKEDIN_APP_SCOPES = ("openid", "profile", "email", "w_member_social", "r_member_profileAnalytics")
# LinkedIn keeps a version active for about a year after its release.
LINKEDIN_VERSION_LIFETIME_MONTHS = 12


def little_text_as_shown(commentary: str) -> str:
    """What LinkedIn shows of a post's commentary: escapes undone, and the text cut at the first
    unescaped reserved character (LinkedIn answers 201 all the same)."""
    shown: list[str] = []
    escaped = False
    for char in commentary:
        if escaped:
            shown.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in "|{}@[]()<>#*_~":
            break
        else:
            shown.append(char)
    return "".join(shown)


def linkedin_version_active(version: str, today: dt.date | None = None) -> bool:
    today = today or dt.datetime.now(dt.UTC).date()
    year, month = int(version[:4]), int(version[4:])
    age = (today.year - year) * 12 + (today.month - month)
    return 1 <= month <= 12 and 0 <= age <= LINKEDIN_VERSION_LIFETIME_MONTHS

SECRET_TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,256}$")
PRIVACY_LEVELS = ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"]


class OtherEmulators(EmulatorBase):
    def other_routes(self) -> list[Route]:
        return [
            Route("/telegram/bot{token}/{method}", self.telegram, methods=["GET", "POST"]),
            Route("/tiktok/v2/auth/authorize/", self.tt_authorize, methods=["GET"]),
            Route("/tiktok/v2/oauth/token/", self.tt_token, methods=["POST"]),
            Route("/tiktok/v2/user/info/", self.tt_user, methods=["GET"]),
            Route("/tiktok/v2/post/publish/creator_info/query/", self.tt_creator, methods=["POST"]),
            Route("/tiktok/v2/post/publish/video/init/", self.tt_init, methods=["POST"]),
            Route("/tiktok/v2/post/publish/status/fetch/", self.tt_status, methods=["POST"]),
            Route("/tiktok/upload/{publish_id}", self.tt_upload, methods=["PUT"]),
            Route("/tiktok/v2/video/list/", self.tt_videos, methods=["POST"]),
            Route("/youtube/o/oauth2/v2/auth", self.yt_authorize, methods=["GET"]),
            Route("/youtube/token", self.yt_token, methods=["POST"]),
            Route("/youtube/youtube/v3/channels", self.yt_channels, methods=["GET"]),
            Route("/youtube/upload/youtube/v3/videos", self.yt_upload, methods=["POST", "PUT"]),
            Route("/youtube/youtube/v3/videos", self.yt_delete, methods=["DELETE"]),
            Route("/youtube/upload/youtube/v3/thumbnails/set", self.yt_thumbnail, methods=["POST"]),
            Route("/youtube/youtube/v3/comments", self.yt_comment, methods=["POST"]),
            Route("/x/i/oauth2/authorize", self.x_authorize, methods=["GET"]),
            Route("/x/2/oauth2/token", self.x_token, methods=["POST"]),
            Route("/x/2/users/me", self.x_me, methods=["GET"]),
            Route("/x/2/tweets", self.x_tweet, methods=["POST"]),
            Route("/x/2/tweets/{id}", self.x_delete, methods=["DELETE"]),
            Route("/x/2/users/{id}/tweets", self.x_timeline, methods=["GET"]),
            Route("/x/2/dm_conversations/with/{participant}/messages", self.x_dm, methods=["POST"]),
            Route("/x/2/media/upload", self.x_media, methods=["GET", "POST"]),
            Route("/linkedin/oauth/v2/authorization", self.li_authorize, methods=["GET"]),
            Route("/linkedin/oauth/v2/accessToken", self.li_token, methods=["POST"]),
            Route("/linkedin/v2/userinfo", self.li_userinfo, methods=["GET"]),
            Route("/linkedin/rest/posts", self.li_post, methods=["POST"]),
            Route("/linkedin/rest/posts/{urn}", self.li_delete, methods=["DELETE"]),
            Route("/linkedin/rest/images", self.li_images, methods=["POST"]),
            Route("/linkedin/rest/videos", self.li_videos, methods=["POST"]),
            Route("/linkedin/rest/socialActions/{urn}/comments", self.li_comment, methods=["POST"]),
            Route("/linkedin/rest/videos/{urn}", self.li_video, methods=["GET"]),
            Route("/linkedin/videoupload/{video}/{part}", self.li_video_part, methods=["PUT"]),
            Route("/linkedin/rest/memberFollowersCount", self.li_followers, methods=["GET"]),
            Route("/linkedin/upload/{image}", self.li_upload, methods=["PUT"]),
        ]

    # -- accounts ----------------------------------------------------------------------------
    def new_other_account(
        self, platform: str, username: str | None = None, name: str | None = None
    ) -> Account:
        n = self.state.next_number()
        if platform == "telegram":
            bot_id = str(7000000000 + n)
            account = Account(platform, bot_id, username or f"sandbox_{n}_bot", name or f"Sandbox Bot {n}")
        elif platform == "tiktok":
            account = Account(
                platform, f"-000{random_token(28)}", username or f"sandbox.tt{n}", name or f"Sandbox TT {n}"
            )
        elif platform == "youtube":
            account = Account(
                platform,
                f"UC{random_token(22)}",
                username or f"@sandboxchannel{n}",
                name or f"Sandbox Channel {n}",
            )
        elif platform == "x":
            account = Account(
                platform, str(1500000000000000000 + n), username or f"sandbox_x_{n}", name or f"Sandbox X {n}"
            )
        else:
            account = Account(
                platform,
                random_token(10),
                username or f"sandbox{n}@example.com",
                name or f"Sandbox Member {n}",
            )
        return self.state.add_account(account)

    def other_credentials(self, account: Account) -> dict[str, Any]:
        platform = account.platform
        if platform == "telegram":
            token = account.extra.get("bot_token")
            if not token or self.state.token("telegram", token) is None:
                token = f"{account.id}:AA{random_token(33)}"
                self.state.issue("telegram", account.id, "access", None, value=token)
                account.extra["bot_token"] = token
            return {"botToken": token}
        ttl = {"tiktok": 86400, "youtube": 3599, "x": 7200, "linkedin": 5184000}[platform]
        # A test account is granted everything the sandbox app has.
        scope = {"extra": {"scope": " ".join(LINKEDIN_APP_SCOPES)}} if platform == "linkedin" else {}
        access = self.state.issue(
            platform,
            account.id,
            "access",
            ttl,
            prefix={"youtube": "ya29.", "tiktok": "act."}.get(platform, ""),
            **scope.get("extra", {}),
        )
        credentials: dict[str, Any] = {"accessToken": access.value, "expiresAt": None}
        if platform == "linkedin":
            credentials["scope"] = " ".join(LINKEDIN_APP_SCOPES)
        refresh = self.state.issue(
            platform,
            account.id,
            "refresh",
            365 * 86400,
            prefix={"youtube": "1//", "tiktok": "rft."}.get(platform, ""),
        )
        credentials["refreshToken"] = refresh.value
        if platform == "tiktok":
            credentials["openId"] = account.id
        if platform == "linkedin":
            credentials["authorUrn"] = f"urn:li:person:{account.id}"
        return credentials

    # -- Telegram ----------------------------------------------------------------------------
    async def telegram(self, request: Request) -> Response:
        token_value = request.path_params["token"]
        return await self.api("telegram", request, self._telegram, token_value=token_value)

    async def _telegram(self, call: Call) -> Response:
        account = call.account
        assert account is not None
        method = call.request.path_params["method"]
        params = call.params()
        bot = {
            "id": int(account.id),
            "is_bot": True,
            "first_name": account.display_name,
            "username": account.username,
        }
        if method == "getMe":
            return JSONResponse(
                {
                    "ok": True,
                    "result": {
                        **bot,
                        "can_join_groups": True,
                        "can_read_all_group_messages": False,
                        "supports_inline_queries": False,
                    },
                }
            )
        if method == "setWebhook":
            url = params.get("url")
            secret = params.get("secret_token")
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                return telegram_error(
                    400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook"
                )
            if secret is not None and not SECRET_TOKEN.match(str(secret)):
                return telegram_error(400, "Bad Request: secret token contains unallowed characters")
            account.webhook_url, account.webhook_secret = url, secret
            account.subscribed_fields = list(params.get("allowed_updates") or ["message"])
            return JSONResponse({"ok": True, "result": True, "description": "Webhook was set"})
        if method == "deleteWebhook":
            account.webhook_url = account.webhook_secret = None
            return JSONResponse({"ok": True, "result": True, "description": "Webhook was deleted"})
        if method == "getWebhookInfo":
            return JSONResponse(
                {
                    "ok": True,
                    "result": {
                        "url": account.webhook_url or "",
                        "has_custom_certificate": False,
                        "pending_update_count": 0,
                    },
                }
            )
        if method in ("sendMessage", "sendPhoto", "sendVideo"):
            return self._tg_send(call, account, method, params, bot)
        if method == "deleteMessage":
            key = f"{params.get('chat_id')}:{params.get('message_id')}"
            if account.posts.pop(key, None) is None:
                return telegram_error(400, "Bad Request: message to delete not found")
            self.record(call, "delete_post", key, None, key)
            return JSONResponse({"ok": True, "result": True})
        if method == "getChatMemberCount":
            return JSONResponse({"ok": True, "result": account.followers})
        return telegram_error(404, "Not Found")

    def _tg_send(
        self, call: Call, account: Account, method: str, params: dict[str, Any], bot: dict[str, Any]
    ) -> Response:
        if self.rate_limits and self.state.over_rate("telegram", account.id, 30):
            return telegram_error(429, "Too Many Requests: retry after 1", 1)
        chat_id = str(params.get("chat_id", ""))
        channel = chat_id.startswith("@") or chat_id.startswith("-100")
        contact = account.contacts.get(chat_id)
        if not channel and contact is None:
            return telegram_error(400, "Bad Request: chat not found")
        text = params.get("text") if method == "sendMessage" else params.get("caption")
        if method == "sendMessage" and (not isinstance(text, str) or not text.strip()):
            return telegram_error(400, "Bad Request: message text is empty")
        if method == "sendMessage" and isinstance(text, str) and len(text) > 4096:
            return telegram_error(400, "Bad Request: message is too long")
        if method != "sendMessage" and isinstance(text, str) and len(text) > 1024:
            return telegram_error(400, "Bad Request: message caption is too long")
        if method != "sendMessage" and not params.get("photo" if method == "sendPhoto" else "video"):
            return telegram_error(400, "Bad Request: there is no photo in the request")
        markup = params.get("reply_markup")
        if markup is not None:
            rows = markup.get("inline_keyboard") if isinstance(markup, dict) else None
            if not isinstance(rows, list):
                return telegram_error(400, "Bad Request: can't parse reply keyboard markup JSON object")
            for row in rows:
                for button in row if isinstance(row, list) else []:
                    if not isinstance(button, dict) or not button.get("text"):
                        return telegram_error(400, "Bad Request: BUTTON_TEXT_INVALID")
                    if "url" in button and bad_button_url(button["url"]):
                        return telegram_error(400, "Bad Request: BUTTON_URL_INVALID")
        message_id = self.state.serial()
        if channel:
            chat: dict[str, Any] = {
                "id": int(chat_id) if chat_id.lstrip("-").isdigit() else -1001000000000 - message_id,
                "title": "Sandbox Channel",
                "type": "channel",
            }
            if chat_id.startswith("@"):
                chat["username"] = chat_id[1:]
        else:
            assert contact is not None
            chat = {
                "id": int(chat_id) if chat_id.lstrip("-").isdigit() else chat_id,
                "first_name": contact.name or "",
                "username": contact.handle,
                "type": "private",
            }
        result: dict[str, Any] = {
            "message_id": message_id,
            "from": bot,
            "chat": chat,
            "date": int(time.time()),
        }
        if method == "sendMessage":
            result["text"] = text
        elif text:
            result["caption"] = text
        if markup is not None:
            result["reply_markup"] = markup
        if channel:
            account.posts[f"{chat_id}:{message_id}"] = {"text": text}
            self.record(call, "post", chat_id, text, f"{chat_id}:{message_id}")
        else:
            self.record(call, "dm", chat_id, text, str(message_id))
        return JSONResponse({"ok": True, "result": result})

    # -- TikTok ------------------------------------------------------------------------------
    async def tt_authorize(self, request: Request) -> Response:
        return self.authorize(
            "tiktok",
            request,
            client_param="client_key",
            new_account=lambda hint: self.new_other_account("tiktok", hint),
        )

    async def tt_token(self, request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        if not self.client_ok("tiktok", form.get("client_key"), form.get("client_secret")):
            return oauth_error("invalid_client", "Client key or secret is incorrect.", 401)
        grant = form.get("grant_type")
        if grant == "authorization_code":
            entry = self.redeem("tiktok", form.get("code"), form.get("redirect_uri"))
            if entry is None:
                return oauth_error("invalid_grant", "Authorization code is expired.")
            account_id, scope = entry.account_id, entry.scope
        elif grant == "refresh_token":
            old = self.state.token("tiktok", form.get("refresh_token"), ("refresh",))
            if old is None:
                return oauth_error("invalid_grant", "Refresh token is invalid or expired.")
            old.revoked = True
            account_id, scope = old.account_id, old.extra.get("scope", "")
        else:
            return oauth_error("invalid_request", "Unsupported grant_type.")
        access = self.state.issue("tiktok", account_id, "access", 86400, prefix="act.")
        refresh = self.state.issue("tiktok", account_id, "refresh", 31536000, prefix="rft.", scope=scope)
        return JSONResponse(
            {
                "access_token": access.value,
                "expires_in": 86400,
                "open_id": account_id,
                "refresh_expires_in": 31536000,
                "refresh_token": refresh.value,
                "scope": scope,
                "token_type": "Bearer",
            }
        )

    @staticmethod
    def _tt_ok(data: dict[str, Any]) -> JSONResponse:
        return JSONResponse(
            {"data": data, "error": {"code": "ok", "message": "", "log_id": random_token(24)}}
        )

    async def tt_user(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            user = {
                "open_id": account.id,
                "union_id": f"union{account.id[-8:]}",
                "display_name": account.display_name,
                "username": account.username,
                "avatar_url": f"https://p16.tiktokcdn.example/{account.id}.jpeg",
                "follower_count": account.followers,
            }
            fields = call.query.get("fields", "open_id").split(",")
            return self._tt_ok({"user": {k: v for k, v in user.items() if k in fields}})

        return await self.api("tiktok", request, handle)

    async def tt_creator(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            # TikTok allows 20 creator_info queries a minute per user token.
            if self.rate_limits and self.state.over_rate("tiktok", f"creator_info:{account.id}", 20, seconds=60):
                return tiktok_error(429, "rate_limit_exceeded", "The API rate limit was exceeded.",
                                    headers={"Retry-After": "60"})
            return self._tt_ok(
                {
                    "creator_avatar_url": f"https://p16.tiktokcdn.example/{account.id}.jpeg",
                    "creator_username": account.username,
                    "creator_nickname": account.display_name,
                    "privacy_level_options": PRIVACY_LEVELS,
                    "comment_disabled": False,
                    "duet_disabled": False,
                    "stitch_disabled": True,
                    "max_video_post_duration_sec": 600,
                }
            )

        return await self.api("tiktok", request, handle)

    async def tt_init(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            body = call.body_json()
            info = body.get("post_info") or {}
            source = body.get("source_info") or {}
            if info.get("privacy_level") not in PRIVACY_LEVELS:
                return tiktok_error(
                    400, "privacy_level_option_mismatch", "privacy_level is not one of the creator's options."
                )
            if not self.config.tiktok_audited and info.get("privacy_level") != "SELF_ONLY":
                return tiktok_error(
                    403, "unaudited_client_can_only_post_to_private_accounts",
                    "Unaudited clients can only post with privacy_level SELF_ONLY.",
                )
            if len(str(info.get("title", ""))) > 2200:
                return tiktok_error(400, "invalid_params", "title is longer than 2200 characters.")
            publish_id = f"v_pub_{'url' if source.get('source') == 'PULL_FROM_URL' else 'file'}~v2."
            publish_id += f"{self.state.serial()}{random_token(12)}"
            if source.get("source") == "PULL_FROM_URL" and source.get("video_url"):
                host = (urlsplit(str(source["video_url"])).hostname or "").lower()
                if host not in self.config.tiktok_verified_domains:
                    return tiktok_error(
                        403, "url_ownership_unverified",
                        "The domain or URL prefix of video_url is not verified for this app.",
                    )
                self._tt_publish(call, account, publish_id, info)
                return self._tt_ok({"publish_id": publish_id})
            if source.get("source") == "FILE_UPLOAD":
                size, chunk, count = (source.get("video_size"), source.get("chunk_size"),
                                      source.get("total_chunk_count"))
                if not all(isinstance(v, int) and v > 0 for v in (size, chunk, count)):
                    return tiktok_error(400, "invalid_params", "video_size, chunk_size and total_chunk_count are "
                                        "required for FILE_UPLOAD.")
                assert isinstance(size, int) and isinstance(chunk, int) and isinstance(count, int)
                if count != max(1, size // chunk) or (size > chunk and chunk < 5 * 1024 * 1024):
                    return tiktok_error(400, "invalid_params", "The chunk_size and total_chunk_count do not "
                                        "describe video_size (chunks of 5 to 64 MB; a file under 5 MB in one).")
                account.uploads[publish_id] = {"status": "PROCESSING_UPLOAD", "size": size, "received": 0,
                                               "info": info, "payload": body}
                here = str(call.request.url).split("?")[0]
                upload_url = here.removesuffix("/v2/post/publish/video/init/") + f"/upload/{publish_id}"
                return self._tt_ok({"publish_id": publish_id, "upload_url": upload_url})
            return tiktok_error(400, "invalid_params",
                                "source_info: PULL_FROM_URL with a video_url, or FILE_UPLOAD, is required.")

        return await self.api("tiktok", request, handle)

    def _tt_publish(self, call: Call, account: Account, publish_id: str, info: dict[str, Any]) -> None:
        post_id = str(7300000000000000000 + self.state.serial())
        account.uploads[publish_id] = {**account.uploads.get(publish_id, {}), "post_id": post_id,
                                       "status": "PUBLISH_COMPLETE"}
        account.posts[post_id] = {"text": info.get("title")}
        self.record(call, "post", post_id, info.get("title"), post_id,
                    account.uploads[publish_id].get("payload") or call.payload())

    async def tt_upload(self, request: Request) -> Response:
        """The upload URL of a FILE_UPLOAD: chunks with `Content-Range: bytes a-b/total`; the video is
        published once the last byte is in."""
        publish_id = request.path_params["publish_id"]

        async def handle(call: Call) -> Response:
            found = self.state.accounts_where("tiktok", lambda a: publish_id in a.uploads)
            if not found:
                return tiktok_error(404, "invalid_publish_id", "The upload does not exist.")
            account = found[0]
            self.state.touch(account)
            upload = account.uploads[publish_id]
            match = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+)", request.headers.get("content-range", ""))
            if match is None or int(match[3]) != upload["size"] or int(match[2]) - int(match[1]) + 1 != len(call.raw):
                return tiktok_error(400, "invalid_params", "Content-Range does not describe the chunk.")
            if upload.get("post_id"):
                return Response(status_code=201)  # complete already: a repeated chunk changes nothing
            upload["received"] = max(upload["received"], int(match[2]) + 1)
            if upload["received"] < upload["size"]:
                return Response(status_code=206)
            upload["status"] = "PUBLISH_COMPLETE"
            owner = Call(call.request, "tiktok", None, account, b"")
            self._tt_publish(owner, account, publish_id, upload["info"])
            return Response(status_code=201)

        return await self.api("tiktok", request, handle, auth=False)

    async def tt_videos(self, request: Request) -> Response:
        """`POST /v2/video/list/`: the creator's posts, newest first."""

        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            videos = [{"id": pid, "title": post.get("text"), "share_url": f"https://www.tiktok.com/@{account.username}"
                       f"/video/{pid}"} for pid, post in reversed(list(account.posts.items()))][:20]
            return self._tt_ok({"videos": videos, "cursor": 0, "has_more": False})

        return await self.api("tiktok", request, handle)

    async def tt_status(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            upload = account.uploads.get(str(call.body_json().get("publish_id")))
            if upload is None:
                return tiktok_error(400, "invalid_publish_id", "The publish_id does not exist.")
            if not upload.get("post_id"):
                return self._tt_ok({"status": upload.get("status", "PROCESSING_UPLOAD"),
                                    "uploaded_bytes": upload.get("received", 0)})
            return self._tt_ok(
                {
                    "status": "PUBLISH_COMPLETE",
                    "publicaly_available_post_id": [int(upload["post_id"])],
                    "uploaded_bytes": upload.get("size", 0),
                }
            )

        return await self.api("tiktok", request, handle)

    # -- YouTube -----------------------------------------------------------------------------
    async def yt_authorize(self, request: Request) -> Response:
        return self.authorize(
            "youtube", request, new_account=lambda hint: self.new_other_account("youtube", hint)
        )

    async def yt_token(self, request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        if not self.client_ok("youtube", form.get("client_id"), form.get("client_secret")):
            return oauth_error("invalid_client", "The OAuth client was not found.", 401)
        grant = form.get("grant_type")
        access_ttl = 3599
        if grant == "authorization_code":
            entry = self.redeem("youtube", form.get("code"), form.get("redirect_uri"))
            if entry is None:
                return oauth_error("invalid_grant", "Bad Request")
            access = self.state.issue("youtube", entry.account_id, "access", access_ttl, prefix="ya29.")
            refresh = self.state.issue(
                "youtube", entry.account_id, "refresh", None, prefix="1//", scope=entry.scope
            )
            return JSONResponse(
                {
                    "access_token": access.value,
                    "expires_in": access_ttl,
                    "refresh_token": refresh.value,
                    "scope": entry.scope,
                    "token_type": "Bearer",
                }
            )
        if grant == "refresh_token":
            old = self.state.token("youtube", form.get("refresh_token"), ("refresh",))
            if old is None:
                return oauth_error("invalid_grant", "Token has been expired or revoked.")
            access = self.state.issue("youtube", old.account_id, "access", access_ttl, prefix="ya29.")
            return JSONResponse(
                {
                    "access_token": access.value,
                    "expires_in": access_ttl,
                    "scope": old.extra.get("scope", ""),
                    "token_type": "Bearer",
                }
            )
        return oauth_error("unsupported_grant_type", "Invalid grant_type.")

    async def yt_channels(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            if call.query.get("mine") != "true" or not call.query.get("part"):
                return google_error(
                    400, "missingRequiredParameter", "No filter selected. Expected one of: mine, id."
                )
            item = {
                "kind": "youtube#channel",
                "etag": random_token(12),
                "id": account.id,
                "snippet": {"title": account.display_name, "description": "", "customUrl": account.username},
                "statistics": {
                    "viewCount": "0",
                    "subscriberCount": str(account.followers),
                    "hiddenSubscriberCount": False,
                    "videoCount": str(len(account.posts)),
                },
            }
            return JSONResponse(
                {
                    "kind": "youtube#channelListResponse",
                    "pageInfo": {"totalResults": 1, "resultsPerPage": 5},
                    "items": [item],
                }
            )

        return await self.api("youtube", request, handle)

    async def yt_upload(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            if call.request.method == "POST":
                if call.query.get("uploadType") != "resumable":
                    return google_error(400, "invalidValue", "Only resumable uploads are supported here.")
                metadata = call.body_json()
                title = (metadata.get("snippet") or {}).get("title")
                if not isinstance(title, str) or not 1 <= len(title) <= 100:
                    return google_error(
                        400,
                        "invalidTitle",
                        "The request metadata specifies an invalid video title.",
                        domain="youtube.video",
                    )
                refused = self._yt_publish_at(metadata.get("status") or {})
                if refused is not None:
                    return refused
                if len(str((metadata.get("snippet") or {}).get("description", ""))) > 5000:
                    return google_error(
                        400,
                        "invalidDescription",
                        "The request metadata specifies an invalid video description.",
                        domain="youtube.video",
                    )
                upload_id = random_token(30)
                account.uploads[upload_id] = {
                    "metadata": metadata,
                    "length": call.request.headers.get("x-upload-content-length"),
                }
                location = str(
                    call.request.url.replace_query_params(
                        uploadType="resumable", upload_id=upload_id, part=call.query.get("part", "snippet")
                    )
                )
                return Response(
                    status_code=200, headers={"Location": location, "X-GUploader-UploadID": upload_id}
                )
            upload = account.uploads.get(call.query.get("upload_id", ""))
            if upload is None:
                return google_error(404, "notFound", "The upload session does not exist.")
            content_range = call.request.headers.get("content-range", "")
            if content_range.startswith("bytes */"):
                # A status query of the session (how an interrupted upload resumes): done → the video.
                if upload.get("video_id"):
                    return self._yt_video(upload)
                return Response(status_code=308)
            if upload.get("video_id"):
                return self._yt_video(upload)  # sent again after it completed: the same video, not another
            if upload["length"] is not None and str(len(call.raw)) != upload["length"]:
                return google_error(
                    400, "badContent", "The uploaded size does not match X-Upload-Content-Length."
                )
            video_id = random_token(11)
            upload["video_id"] = video_id
            metadata = upload["metadata"]
            account.posts[video_id] = {"text": (metadata.get("snippet") or {}).get("description")}
            self.record(
                call,
                "post",
                video_id,
                (metadata.get("snippet") or {}).get("description"),
                video_id,
                {**metadata, "uploadedBytes": len(call.raw)},
            )
            return self._yt_video(upload)

        return await self.api("youtube", request, handle)

    def _yt_publish_at(self, status: dict[str, Any]) -> Response | None:
        """`status.publishAt`: only on a private video, an ISO 8601 time in the future."""
        if "publishAt" not in status:
            return None
        try:
            moment = dt.datetime.fromisoformat(str(status["publishAt"]).replace("Z", "+00:00"))
        except ValueError:
            moment = None
        if (status.get("privacyStatus") != "private" or moment is None or moment.tzinfo is None
                or moment.timestamp() <= self.now()):
            return google_error(400, "invalidPublishAt",
                                "The request metadata specifies an invalid scheduled publishing time.",
                                domain="youtube.video")
        return None

    async def yt_thumbnail(self, request: Request) -> Response:
        """`POST /upload/youtube/v3/thumbnails/set?videoId=`: a JPEG or PNG of at most 2 MB for a video
        of the channel; setting it again replaces it."""

        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            video_id = call.query.get("videoId", "")
            if video_id not in account.posts:
                return google_error(404, "videoNotFound", "The video that you are trying to update cannot be found.",
                                    domain="youtube.thumbnail")
            kind = call.request.headers.get("content-type", "").split(";")[0].strip()
            if kind not in ("image/jpeg", "image/png") or not call.raw:
                return google_error(400, "invalidImage", "The provided image content is invalid.",
                                    domain="youtube.thumbnail")
            if len(call.raw) > 2 * 1024 * 1024:
                return google_error(400, "mediaBodyTooBig", "The thumbnail image file is too large (2 MB at most).")
            account.posts[video_id]["thumbnail"] = len(call.raw)
            self.record(call, "thumbnail", video_id, None, video_id, {"videoId": video_id, "contentType": kind,
                                                                      "bytes": len(call.raw)})
            return JSONResponse({"kind": "youtube#thumbnailSetResponse", "items": [
                {"default": {"url": f"https://i.ytimg.example/vi/{video_id}/default.jpg", "width": 120,
                             "height": 90}}]})

        return await self.api("youtube", request, handle)

    @staticmethod
    def _yt_video(upload: dict[str, Any]) -> JSONResponse:
        metadata = upload["metadata"]
        return JSONResponse(
            {
                "kind": "youtube#video",
                "id": upload["video_id"],
                "snippet": metadata.get("snippet"),
                "status": {**(metadata.get("status") or {}), "uploadStatus": "uploaded"},
            }
        )

    async def yt_delete(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            video_id = call.query.get("id", "")
            if account.posts.pop(video_id, None) is None:
                return google_error(
                    404,
                    "videoNotFound",
                    "The video that you are trying to delete cannot be found.",
                    domain="youtube.video",
                )
            self.record(call, "delete_post", video_id, None, video_id)
            return Response(status_code=204)

        return await self.api("youtube", request, handle)

    async def yt_comment(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            snippet = call.body_json().get("snippet") or {}
            parent, text = snippet.get("parentId"), snippet.get("textOriginal")
            if not parent or not isinstance(text, str) or not text:
                return google_error(
                    400,
                    "invalidCommentMetadata",
                    "The request metadata is invalid.",
                    domain="youtube.comment",
                )
            comment_id = f"{parent}.{random_token(22)}"
            self.record(call, "public_reply", parent, text, comment_id)
            return JSONResponse(
                {"kind": "youtube#comment", "id": comment_id, "snippet": {**snippet, "textDisplay": text}}
            )

        return await self.api("youtube", request, handle)

    # -- X -----------------------------------------------------------------------------------
    async def x_authorize(self, request: Request) -> Response:
        return self.authorize(
            "x", request, challenge=True, new_account=lambda hint: self.new_other_account("x", hint)
        )

    async def x_token(self, request: Request) -> Response:
        import base64

        form = {k: str(v) for k, v in (await request.form()).items()}
        header = request.headers.get("authorization", "")
        client_id = form.get("client_id")
        secret = None
        if header.lower().startswith("basic "):
            try:
                client_id, _, secret = base64.b64decode(header[6:]).decode().partition(":")
            except ValueError:
                return oauth_error("invalid_client", "Invalid client credentials.", 401)
        if not self.client_ok("x", client_id, secret if secret is not None else ""):
            return oauth_error("unauthorized_client", "Missing valid authorization header", 401)
        grant = form.get("grant_type")
        if grant == "authorization_code":
            entry = self.redeem("x", form.get("code"), form.get("redirect_uri"), form.get("code_verifier"))
            if entry is None:
                return oauth_error("invalid_request", "Value passed for the authorization code was invalid.")
            account_id, scope = entry.account_id, entry.scope
        elif grant == "refresh_token":
            old = self.state.token("x", form.get("refresh_token"), ("refresh",))
            if old is None:
                return oauth_error("invalid_request", "Value passed for the token was invalid.")
            old.revoked = True
            account_id, scope = old.account_id, old.extra.get("scope", "")
        else:
            return oauth_error("invalid_request", "Unsupported grant_type.")
        access = self.state.issue("x", account_id, "access", 7200)
        refresh = self.state.issue("x", account_id, "refresh", 180 * 86400, scope=scope)
        return JSONResponse(
            {
                "token_type": "bearer",
                "expires_in": 7200,
                "access_token": access.value,
                "scope": scope,
                "refresh_token": refresh.value,
            }
        )

    async def x_me(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            data: dict[str, Any] = {
                "id": account.id,
                "name": account.display_name,
                "username": account.username,
            }
            if "public_metrics" in call.query.get("user.fields", ""):
                data["public_metrics"] = {
                    "followers_count": account.followers,
                    "following_count": 0,
                    "tweet_count": len(account.posts),
                    "listed_count": 0,
                }
            return JSONResponse({"data": data})

        return await self.api("x", request, handle)

    async def x_tweet(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            body = call.body_json()
            text = body.get("text")
            media_ids = (body.get("media") or {}).get("media_ids") or []
            if (not isinstance(text, str) or not text) and not media_ids:
                return x_error(
                    400,
                    "Invalid Request",
                    "One or more parameters to your request was invalid.",
                    kind="https://api.twitter.com/2/problems/invalid-request",
                )
            if body.get("reply_settings") is not None and body["reply_settings"] not in REPLY_SETTINGS:
                return x_error(
                    400,
                    "Invalid Request",
                    "One or more parameters to your request was invalid.",
                    kind="https://api.twitter.com/2/problems/invalid-request",
                )
            if isinstance(text, str) and weighted_length(text) > MAX_WEIGHTED_LENGTH:
                return x_error(
                    403,
                    "Forbidden",
                    "You are not permitted to create a Tweet with more than 280 characters.",
                    kind="about:blank",
                )
            chunked = [account.uploads[m] for m in media_ids if account.uploads.get(m, {}).get("chunked")]
            if any(u["state"] != "succeeded" for u in chunked) or (chunked and len(media_ids) > 1):
                # X: a video is usable once STATUS says it succeeded, and a post takes one video alone.
                return x_invalid("Your media IDs are invalid.")
            if any(m not in account.uploads for m in media_ids):
                return x_error(
                    400,
                    "Invalid Request",
                    "Your media IDs are invalid.",
                    kind="https://api.twitter.com/2/problems/invalid-request",
                )
            tweet_id = str(1800000000000000000 + self.state.serial())
            reply_to = (body.get("reply") or {}).get("in_reply_to_tweet_id")
            if reply_to:
                self.record(call, "public_reply", str(reply_to), text, tweet_id)
            else:
                account.posts[tweet_id] = {"text": text}
                self.record(call, "post", tweet_id, text, tweet_id)
            return JSONResponse(
                {"data": {"id": tweet_id, "text": text, "edit_history_tweet_ids": [tweet_id]}},
                status_code=201,
            )

        return await self.api("x", request, handle)

    async def x_delete(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            tweet_id = call.request.path_params["id"]
            if account.posts.pop(tweet_id, None) is None:
                return x_error(
                    404,
                    "Not Found Error",
                    f"Could not find tweet with id: [{tweet_id}].",
                    kind="https://api.twitter.com/2/problems/resource-not-found",
                )
            self.record(call, "delete_post", tweet_id, None, tweet_id)
            return JSONResponse({"data": {"deleted": True}})

        return await self.api("x", request, handle)

    async def x_timeline(self, request: Request) -> Response:
        """`GET /2/users/{id}/tweets`: the user's own posts, newest first."""

        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            if call.request.path_params["id"] != account.id:
                return x_error(404, "Not Found Error", "Could not find user.",
                               kind="https://api.twitter.com/2/problems/resource-not-found")
            tweets = [{"id": pid, "text": post.get("text")} for pid, post in reversed(list(account.posts.items()))]
            limit = int(call.query.get("max_results", "10") or 10)
            return JSONResponse({"data": tweets[:limit], "meta": {"result_count": min(len(tweets), limit)}})

        return await self.api("x", request, handle)

    async def x_dm(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            participant = call.request.path_params["participant"]
            text = call.body_json().get("text")
            if not participant.isdigit() or participant == account.id:
                return x_error(
                    400,
                    "Invalid Request",
                    "participant_id must be another user's id.",
                    kind="https://api.twitter.com/2/problems/invalid-request",
                )
            if not isinstance(text, str) or not text or len(text) > 10000:
                return x_error(
                    400,
                    "Invalid Request",
                    "text must be 1 to 10000 characters.",
                    kind="https://api.twitter.com/2/problems/invalid-request",
                )
            low, high = sorted((int(account.id), int(participant)))
            event_id = str(1900000000000000000 + self.state.serial())
            self.record(call, "dm", participant, text, event_id)
            return JSONResponse(
                {"data": {"dm_conversation_id": f"{low}-{high}", "dm_event_id": event_id}}, status_code=201
            )

        return await self.api("x", request, handle)

    async def x_media(self, request: Request) -> Response:
        """`POST /2/media/upload`: an image in one call, or a video in chunks (`command` INIT, APPEND,
        FINALIZE; `GET ...?command=STATUS`), with X's rules: chunks of at most 5 MB in order, the
        declared size met at FINALIZE, and a video usable in a post only once processed."""

        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            form = await call.request.form() if call.request.method == "POST" else call.request.query_params
            command = form.get("command")
            if command is not None:
                return self._x_chunked(call, account, str(command), form)
            media = form.get("media")
            if media is None or isinstance(media, str):
                return x_invalid("media is required.")
            content = await media.read()
            media_id = str(1700000000000000000 + self.state.serial())
            account.uploads[media_id] = {"size": len(content)}
            return JSONResponse(
                {
                    "data": {
                        "id": media_id,
                        "media_key": f"3_{media_id}",
                        "size": len(content),
                        "expires_after_secs": 86400,
                    }
                }
            )

        return await self.api("x", request, handle)

    def _x_chunked(self, call: Call, account: Account, command: str, form: Any) -> Response:
        media_id = str(form.get("media_id") or "")
        upload = account.uploads.get(media_id) if media_id else None
        if command == "INIT":
            media_type = str(form.get("media_type") or "")
            total = str(form.get("total_bytes") or "")
            if media_type not in X_VIDEO_TYPES or not total.isdigit() or not 0 < int(total) <= X_VIDEO_MAX_BYTES:
                return x_invalid("media_type must be a video type X takes and total_bytes at most 512 MB.")
            media_id = str(1700000000000000000 + self.state.serial())
            account.uploads[media_id] = {"chunked": True, "type": media_type, "total": int(total), "segments": {},
                                         "state": "uploading", "category": form.get("media_category")}
            self.record(call, "media_upload", None, None, media_id, {"command": "INIT", "media_type": media_type,
                                                                     "total_bytes": int(total)})
            return JSONResponse({"data": {"id": media_id, "media_key": f"7_{media_id}",
                                          "expires_after_secs": 86400}}, status_code=202)
        if upload is None or not upload.get("chunked"):
            return x_invalid("media_id is not a chunked upload of this user.")
        if command == "APPEND":
            if upload["state"] != "uploading":
                return x_invalid("The upload is finalized already.")
            segment = str(form.get("segment_index") or "")
            media = form.get("media")
            if not segment.isdigit() or int(segment) > len(upload["segments"]) or int(segment) > 999:
                return x_invalid("segment_index must be the next segment (0 to 999).")
            if media is None or isinstance(media, str):
                return x_invalid("media is required.")
            size = len(media.file.read())
            if size > X_CHUNK_MAX_BYTES:
                return x_invalid("A chunk must be at most 5 MB.")
            upload["segments"][int(segment)] = size
            self.record(call, "media_upload", None, None, media_id, {"command": "APPEND",
                                                                     "segment_index": int(segment), "bytes": size})
            return Response(status_code=204)
        if command == "FINALIZE":
            received = sum(upload["segments"].values())
            if received != upload["total"]:
                return x_invalid(f"File size mismatch: {received} bytes received of {upload['total']} declared.")
            if upload["state"] == "uploading":
                upload["state"] = "processing"
                upload["ready_at"] = self.now() + self.processing_seconds.get("x", 0.0)
            self.record(call, "media_upload", None, None, media_id, {"command": "FINALIZE"})
            return JSONResponse({"data": {"id": media_id, "size": received, "expires_after_secs": 86400,
                                          "processing_info": self._x_processing(upload)}})
        if command == "STATUS":
            if upload["state"] == "uploading":
                return x_invalid("The upload is not finalized.")
            self.record(call, "media_upload", None, None, media_id, {"command": "STATUS"})
            return JSONResponse({"data": {"id": media_id, "processing_info": self._x_processing(upload, status=True)}})
        return x_invalid("command must be INIT, APPEND, FINALIZE or STATUS.")

    def _x_processing(self, upload: dict[str, Any], status: bool = False) -> dict[str, Any]:
        if upload["state"] == "processing" and status and self.now() >= upload["ready_at"]:
            upload["state"] = "succeeded"
        if upload["state"] == "succeeded":
            return {"state": "succeeded", "progress_percent": 100}
        return {"state": "in_progress" if status else "pending", "check_after_secs": 1, "progress_percent": 0}

    # -- LinkedIn ----------------------------------------------------------------------------
    async def li_authorize(self, request: Request) -> Response:
        refused = [s for s in request.query_params.get("scope", "").split() if s not in LINKEDIN_APP_SCOPES]
        redirect_uri = request.query_params.get("redirect_uri")
        if refused and redirect_uri and self.client_ok("linkedin", request.query_params.get("client_id")):
            # As LinkedIn does: the whole consent fails on a scope the app's products do not grant.
            params = {"error": "unauthorized_scope_error",
                      "error_description": f'Scope "{refused[0]}" is not authorized for your application',
                      "state": request.query_params.get("state", "")}
            return RedirectResponse(f"{redirect_uri}?{urlencode(params)}", status_code=302)
        return self.authorize(
            "linkedin", request, new_account=lambda hint: self.new_other_account("linkedin", hint)
        )

    async def li_token(self, request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        if not self.client_ok("linkedin", form.get("client_id"), form.get("client_secret")):
            return oauth_error("invalid_client", "Client authentication failed", 401)
        grant = form.get("grant_type")
        if grant == "authorization_code":
            entry = self.redeem("linkedin", form.get("code"), form.get("redirect_uri"))
            if entry is None:
                return oauth_error(
                    "invalid_request", "Unable to retrieve access token: authorization code not found"
                )
            refresh = self.state.issue("linkedin", entry.account_id, "refresh", 31536000, scope=entry.scope)
            account_id, scope = entry.account_id, entry.scope
        elif grant == "refresh_token":
            found = self.state.token("linkedin", form.get("refresh_token"), ("refresh",))
            if found is None:
                return oauth_error(
                    "invalid_request", "The provided authorization grant or refresh token is invalid"
                )
            refresh, account_id, scope = found, found.account_id, found.extra.get("scope", "")
        else:
            return oauth_error("unsupported_grant_type", "Invalid grant_type.")
        access = self.state.issue("linkedin", account_id, "access", 5184000, scope=scope)
        remaining = int((refresh.expires_at or time.time()) - time.time())
        return JSONResponse(
            {
                "access_token": access.value,
                "expires_in": 5184000,
                "refresh_token": refresh.value,
                "refresh_token_expires_in": remaining,
                "scope": scope,
            }
        )

    async def li_userinfo(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            given, _, family = account.display_name.partition(" ")
            return JSONResponse(
                {
                    "sub": account.id,
                    "email_verified": True,
                    "name": account.display_name,
                    "given_name": given,
                    "family_name": family,
                    "email": account.username,
                    "locale": {"country": "US", "language": "en"},
                    "picture": f"https://media.licdn.example/{account.id}.jpg",
                }
            )

        return await self.api("linkedin", request, handle)

    def _li_version(self, call: Call) -> Response | None:
        version = call.request.headers.get("linkedin-version", "")
        if not re.fullmatch(r"\d{6}", version):
            return linkedin_error(
                400,
                "A version must be present. Please specify a version by adding the LinkedIn-Version header.",
                "VERSION_MISSING",
            )
        if not linkedin_version_active(version):
            return linkedin_error(426, f"Requested version {version} is not active", "NONEXISTENT_VERSION")
        return None

    async def li_post(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            refused = self._li_version(call)
            if refused is not None:
                return refused
            body = call.body_json()
            if body.get("author") != f"urn:li:person:{account.id}":
                return linkedin_error(
                    403, "Not enough permissions to post as this author", "ACCESS_DENIED", 100
                )
            text = body.get("commentary")
            if not isinstance(text, str) or len(text) > 3000 or body.get("lifecycleState") != "PUBLISHED":
                return linkedin_error(
                    422,
                    "commentary must be at most 3000 characters; lifecycleState PUBLISHED",
                    "UNPROCESSABLE_ENTITY",
                )
            content = body.get("content") or {}
            media = (content.get("media") or {}).get("id")
            images = [(i or {}).get("id") for i in (content.get("multiImage") or {}).get("images") or []]
            if media and images:
                return linkedin_error(422, "content takes media or multiImage, not both", "UNPROCESSABLE_ENTITY")
            if "multiImage" in content and not 2 <= len(images) <= 20:
                return linkedin_error(422, "multiImage takes 2 to 20 images", "UNPROCESSABLE_ENTITY")
            for urn in [media, *images] if media else images:
                upload = account.uploads.get(str(urn))
                if upload is None or not upload.get("uploaded"):
                    return linkedin_error(422, f"Media {urn} is not uploaded", "UNPROCESSABLE_ENTITY")
                if images and not str(urn).startswith("urn:li:image:"):
                    return linkedin_error(422, f"multiImage takes images only: {urn}", "UNPROCESSABLE_ENTITY")
                if str(urn).startswith("urn:li:video:") and upload.get("status") != "AVAILABLE":
                    # The emulator's reading of "post once the video is processed".
                    return linkedin_error(422, f"Video {urn} is not AVAILABLE", "UNPROCESSABLE_ENTITY")
            text = little_text_as_shown(text)
            urn = f"urn:li:share:{7100000000000000000 + self.state.serial()}"
            account.posts[urn] = {"text": text}
            self.record(call, "post", urn, text, urn)
            return Response(status_code=201, headers={"x-restli-id": urn})

        return await self.api("linkedin", request, handle)

    async def li_delete(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            urn = unquote(call.request.path_params["urn"])
            if account.posts.pop(urn, None) is None:
                return linkedin_error(404, f"Post {urn} does not exist", "NOT_FOUND")
            self.record(call, "delete_post", urn, None, urn)
            return Response(status_code=204)

        return await self.api("linkedin", request, handle)

    async def li_images(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            if call.query.get("action") != "initializeUpload":
                return linkedin_error(400, "Unsupported action", "BAD_REQUEST")
            image_id = uuid.uuid4().hex[:16]
            base = str(call.request.url).split("/rest/images", 1)[0]
            account.uploads[f"urn:li:image:{image_id}"] = {"uploaded": False}
            return JSONResponse(
                {
                    "value": {
                        "uploadUrlExpiresAt": int(time.time() * 1000) + 3600_000,
                        "uploadUrl": f"{base}/upload/{image_id}",
                        "image": f"urn:li:image:{image_id}",
                    }
                }
            )

        return await self.api("linkedin", request, handle)

    async def li_upload(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            key = f"urn:li:image:{call.request.path_params['image']}"
            if key not in account.uploads:
                return linkedin_error(404, "Upload not found", "NOT_FOUND")
            account.uploads[key] = {"uploaded": True, "size": len(call.raw)}
            return Response(status_code=201)

        return await self.api("linkedin", request, handle)

    async def li_comment(self, request: Request) -> Response:
        """`POST /rest/socialActions/{urn}/comments`: the member comments under a post of theirs."""

        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            refused = self._li_version(call)
            if refused is not None:
                return refused
            urn = unquote(call.request.path_params["urn"])
            body = call.body_json()
            text = (body.get("message") or {}).get("text")
            if urn not in account.posts:
                return linkedin_error(404, f"Post {urn} does not exist", "NOT_FOUND")
            if body.get("actor") != f"urn:li:person:{account.id}" or body.get("object") != urn:
                return linkedin_error(403, "actor must be the member and object the post", "ACCESS_DENIED")
            if not isinstance(text, str) or not text.strip() or len(text) > 1250:
                return linkedin_error(422, "message.text must be 1 to 1250 characters", "UNPROCESSABLE_ENTITY")
            comment_urn = f"urn:li:comment:({urn},{7200000000000000000 + self.state.serial()})"
            self.record(call, "comment", urn, text, comment_urn)
            return JSONResponse({"id": comment_urn, "object": urn, "message": {"text": text}}, status_code=201,
                                headers={"x-restli-id": comment_urn})

        return await self.api("linkedin", request, handle)

    async def li_videos(self, request: Request) -> Response:
        """`POST /rest/videos?action=initializeUpload` (75 KB to 500 MB, in parts of 4 MB) and
        `?action=finalizeUpload` (every part's ETag, in order)."""

        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            refused = self._li_version(call)
            if refused is not None:
                return refused
            body = call.body_json()
            action = call.query.get("action")
            if action == "initializeUpload":
                request_body = body.get("initializeUploadRequest") or {}
                size = request_body.get("fileSizeBytes")
                if request_body.get("owner") != f"urn:li:person:{account.id}":
                    return linkedin_error(403, "Not enough permissions to upload as this owner", "ACCESS_DENIED")
                if not isinstance(size, int) or not LI_VIDEO_MIN_BYTES <= size <= LI_VIDEO_MAX_BYTES:
                    return linkedin_error(400, "fileSizeBytes must be 75 KB to 500 MB", "BAD_REQUEST")
                video_id = uuid.uuid4().hex[:16]
                urn = f"urn:li:video:{video_id}"
                base = str(call.request.url).split("/rest/videos", 1)[0]
                parts = [(first, min(first + LI_VIDEO_PART_BYTES, size) - 1)
                         for first in range(0, size, LI_VIDEO_PART_BYTES)]
                token = random_token(12)
                account.uploads[urn] = {"size": size, "parts": {}, "count": len(parts), "token": token,
                                        "status": "WAITING_UPLOAD", "ranges": parts}
                self.record(call, "media_upload", None, None, urn)
                return JSONResponse({"value": {
                    "uploadUrlsExpireAt": int(time.time() * 1000) + 3600_000, "video": urn, "uploadToken": token,
                    "uploadInstructions": [{"uploadUrl": f"{base}/videoupload/{video_id}/{n}", "firstByte": first,
                                            "lastByte": last} for n, (first, last) in enumerate(parts)]}})
            if action == "finalizeUpload":
                request_body = body.get("finalizeUploadRequest") or {}
                upload = account.uploads.get(str(request_body.get("video")))
                if upload is None or "parts" not in upload:
                    return linkedin_error(404, "Video not found", "NOT_FOUND")
                expected = [upload["parts"].get(n) for n in range(upload["count"])]
                if request_body.get("uploadToken", "") != upload["token"] or request_body.get(
                        "uploadedPartIds") != expected or None in expected:
                    return linkedin_error(400, "uploadedPartIds must be every part's ETag, in order",
                                          "BAD_REQUEST")
                upload.update(uploaded=True, status="PROCESSING",
                              ready_at=self.now() + self.processing_seconds.get("linkedin", 0.0))
                self.record(call, "media_upload", None, None, str(request_body.get("video")), body)
                return Response(status_code=200)
            return linkedin_error(400, "Unsupported action", "BAD_REQUEST")

        return await self.api("linkedin", request, handle)

    async def li_video(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            urn = unquote(call.request.path_params["urn"])
            upload = account.uploads.get(urn)
            if upload is None or "parts" not in upload:
                return linkedin_error(404, "Video not found", "NOT_FOUND")
            if upload["status"] == "PROCESSING" and self.now() >= upload["ready_at"]:
                upload["status"] = "AVAILABLE"
            return JSONResponse({"id": urn, "owner": f"urn:li:person:{account.id}", "status": upload["status"]})

        return await self.api("linkedin", request, handle)

    async def li_video_part(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            urn = f"urn:li:video:{call.request.path_params['video']}"
            upload = account.uploads.get(urn)
            part = call.request.path_params["part"]
            if upload is None or "parts" not in upload or not part.isdigit() or int(part) >= upload["count"]:
                return linkedin_error(404, "Upload not found", "NOT_FOUND")
            first, last = upload["ranges"][int(part)]
            if len(call.raw) != last - first + 1:
                return linkedin_error(400, f"Part {part} must be bytes {first}-{last}", "BAD_REQUEST")
            etag = f"/ambry-video/signedId/{uuid.uuid4().hex[:12]}"
            upload["parts"][int(part)] = etag
            return Response(status_code=200, headers={"ETag": etag})

        return await self.api("linkedin", request, handle)

    async def li_followers(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            refused = self._li_version(call)
            if refused is not None:
                return refused
            assert call.token is not None
            if "r_member_profileAnalytics" not in str(call.token.extra.get("scope", "")).split():
                return linkedin_error(403, "Not enough permissions to access: memberFollowersCount.GET.20240101",
                                      "ACCESS_DENIED")
            return JSONResponse(
                {
                    "paging": {"start": 0, "count": 10, "links": []},
                    "elements": [{"memberFollowersCount": account.followers}],
                }
            )

        return await self.api("linkedin", request, handle)
