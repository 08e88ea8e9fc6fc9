"""TikTok's Login Kit and Content Posting API: creator info (20 queries a minute per token), video
publishing from a verified URL or by chunked FILE_UPLOAD, its status, and the creator's videos.
An unaudited client may only post privately (SELF_ONLY).

Business Messaging is TikTok API for Business's, with its own authorization: the business app's
consent page (`/portal/auth`), `tt_user/oauth2/token/` and `refresh_token/` (JSON bodies, answers in
the Business API's `code` envelope), tokens of their own and an `open_id` of their own (each app sees
its own id of a TikTok user). Its endpoints refuse a Login Kit token (40105) and a `business_id`
that is not the business grant's (40002)."""

from __future__ import annotations

import json
import re
import time
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from platforms.emulator_kit.answer import JSONResponse
from platforms.emulator_kit.core import AuthCode, Call, PlatformParts
from platforms.emulator_kit.errors import oauth_error, tiktok_error
from platforms.emulator_kit.oauth import OAuthServer
from platforms.emulator_kit.state import Account, random_token, token_digest

PRIVACY_LEVELS = ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"]
# A private creator account is not offered PUBLIC_TO_EVERYONE.
PRIVATE_LEVELS = ["MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"]
MB = 1024 * 1024


def business_open_id(account: Account) -> str:
    """The TikTok user's open_id as TikTok API for Business's app sees it: not Login Kit's (each app
    has its own id of a user). The business grant's `open_id`, `business_id` and webhooks' `user_openid`."""
    return str(account.extra.setdefault("business_open_id", f"biz-{random_token(24)}"))


def tiktok_private(account: Account) -> bool:
    """Sandbox creators are private unless made public (`extra["private"] = False`): an app that
    TikTok has not audited can post only from a private account."""
    return bool(account.extra.get("private", True))


# The Direct Post request body (https://developers.tiktok.com/doc/content-posting-api-reference-direct-post).
INIT_FIELDS = {
    "post_info": {"title", "privacy_level", "disable_duet", "disable_comment", "disable_stitch",
                  "video_cover_timestamp_ms", "brand_content_toggle", "brand_organic_toggle", "is_aigc"},
    "source_info": {"source", "video_url", "video_size", "chunk_size", "total_chunk_count"},
}


def unknown_fields(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "The request body must be a JSON object."
    for key, value in body.items():
        if key not in INIT_FIELDS:
            return f"Unknown field: {key}."
        if isinstance(value, dict):
            extra = sorted(set(value) - INIT_FIELDS[key])
            if extra:
                return f"Unknown field: {key}.{extra[0]}."
    return None


def chunks_refusal(size: int, chunk: int, count: int) -> str | None:
    """TikTok's media transfer rules for FILE_UPLOAD
    (https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide)."""
    if size < 5 * MB and chunk != size:
        return "A video under 5 MB is uploaded whole: chunk_size must be video_size."
    if size > 64 * MB and chunk >= size:
        return "A video over 64 MB is uploaded in several chunks."
    if chunk < size and not 5 * MB <= chunk <= 64 * MB:
        return "Each chunk is 5 to 64 MB."
    if chunk > size:
        return "chunk_size is larger than video_size."
    if count != size // chunk or not 1 <= count <= 1000:
        return "total_chunk_count must be video_size divided by chunk_size, rounded down (1 to 1000)."
    if size - chunk * (count - 1) > 128 * MB:
        return "The last chunk is at most 128 MB."
    return None


class TikTokEmulator(OAuthServer):
    def tiktok_parts(self) -> PlatformParts:
        return PlatformParts(self.tiktok_routes, self.new_tiktok_account, self.tiktok_credentials)

    def tiktok_routes(self) -> list[Route]:
        return [
            Route("/tiktok/v2/auth/authorize/", self.tt_authorize, methods=["GET"]),
            Route("/tiktok/v2/oauth/token/", self.tt_token, methods=["POST"]),
            Route("/tiktok/v2/user/info/", self.tt_user, methods=["GET"]),
            Route("/tiktok/v2/post/publish/creator_info/query/", self.tt_creator, methods=["POST"]),
            Route("/tiktok/v2/post/publish/video/init/", self.tt_init, methods=["POST"]),
            Route("/tiktok/v2/post/publish/status/fetch/", self.tt_status, methods=["POST"]),
            Route("/tiktok/upload/{publish_id}", self.tt_upload, methods=["PUT"]),
            Route("/tiktok/v2/video/list/", self.tt_videos, methods=["POST"]),
            Route("/tiktok/open_api/v1.3/business/get/", self.tt_business, methods=["GET"]),
            Route("/tiktok/open_api/v1.3/business/message/send/", self.tt_business_send, methods=["POST"]),
            Route("/tiktok/posting-users", self.tt_posting_users_control, methods=["POST"]),
            Route("/tiktok/portal/auth", self.tt_business_authorize, methods=["GET"]),
            Route("/tiktok/open_api/v1.3/tt_user/oauth2/token/", self.tt_business_token, methods=["POST"]),
            Route("/tiktok/open_api/v1.3/tt_user/oauth2/refresh_token/", self.tt_business_token, methods=["POST"]),
        ]

    def new_tiktok_account(self, username: str | None = None, name: str | None = None) -> Account:
        n = self.state.next_number()
        account = Account(
            "tiktok", f"-000{random_token(28)}", username or f"sandbox.tt{n}", name or f"Sandbox TT {n}"
        )
        return self.state.add_account(account)

    def tiktok_credentials(self, account: Account) -> dict[str, Any]:
        """A test account's Login Kit credentials and its messaging grant (a personal account's grant
        is refused at the Business Messaging calls: 40002)."""
        return {**self.token_pair(account, 86400, access_prefix="act.", refresh_prefix="rft."), "openId": account.id,
                "messaging": self.tt_business_grant(account)}

    @staticmethod
    def tt_business_id(account: Account) -> str:
        return business_open_id(account)

    def tt_business_grant(self, account: Account) -> dict[str, Any]:
        """The messaging grant as the adapter stores it after the business consent."""
        pair = self.tt_business_pair(account, "")
        return {"accessToken": pair["access_token"], "refreshToken": pair["refresh_token"], "expiresAt": None,
                "businessId": pair["open_id"], "scope": pair["scope"]}

    def tt_business_pair(self, account: Account, scope: str) -> dict[str, Any]:
        scope = scope or "user.info.basic,message.list.read,message.list.send,message.list.manage"
        access = self.state.issue("tiktok", account.id, "business_access", 86400, prefix="bat.", scope=scope)
        refresh = self.state.issue("tiktok", account.id, "business_refresh", 365 * 86400, prefix="brt.", scope=scope)
        self.state.touch(account)
        return {"access_token": access.value, "token_type": "bearer", "scope": scope, "expires_in": 86400,
                "refresh_token": refresh.value, "refresh_token_expires_in": 365 * 86400,
                "open_id": self.tt_business_id(account)}

    # -- TikTok ------------------------------------------------------------------------------
    async def tt_authorize(self, request: Request) -> Response:
        answer = self.authorize(
            "tiktok",
            request,
            client_param="client_key",
            new_account=lambda hint: self.new_tiktok_account(hint),
        )
        # The person is now signed in to TikTok in this browser: the business consent sees who.
        code = parse_qs(urlsplit(answer.headers.get("location", "")).query).get("code")
        entry = self.codes.get(token_digest(code[0])) if code else None
        if entry is not None:
            answer.set_cookie("tt_session", entry.account_id, path="/", httponly=True, samesite="lax")
        return answer

    async def tt_business_authorize(self, request: Request) -> Response:
        """TikTok API for Business's consent page for a TikTok account holder: the account named by
        `login_hint`, else the one signed in to this browser (`tt_session`), else a new one; back
        to `redirect_uri` with `code` and `state`."""
        query = request.query_params
        redirect_uri = query.get("redirect_uri")
        if not self.client_ok("tiktok_business", query.get("app_id")) or not redirect_uri:
            return PlainTextResponse("Invalid app_id or redirect_uri.", status_code=400)
        if urlsplit(redirect_uri).scheme not in ("http", "https"):
            return PlainTextResponse("Invalid redirect_uri.", status_code=400)
        hint, session = query.get("login_hint"), request.cookies.get("tt_session")
        account = None
        if hint:
            account = self.state.find_account("tiktok", lambda a: a.extra.get("login_hint") == hint)
            if account is None:
                account = self.new_tiktok_account(hint)
                account.extra["login_hint"] = hint
        elif session:
            account = self.state.account("tiktok", session)
        if account is None:
            account = self.new_tiktok_account()
        code = random_token(32)
        digest = token_digest(code)
        self.codes[digest] = AuthCode("tiktok_business", account.id, redirect_uri, time.time() + 600, None,
                                      "plain", scope=query.get("scope", ""))
        self.state.touch_code(digest)
        params = {"code": code, **({"state": query["state"]} if query.get("state") is not None else {})}
        separator = "&" if urlsplit(redirect_uri).query else "?"
        return RedirectResponse(f"{redirect_uri}{separator}{urlencode(params)}", status_code=302)

    async def tt_business_token(self, request: Request) -> Response:
        """`tt_user/oauth2/token/` (`auth_code`) and `tt_user/oauth2/refresh_token/`: JSON bodies
        with the business app's `client_id`/`client_secret`; a Login Kit code or refresh token is
        not one of this app's."""
        try:
            body = json.loads(await request.body() or b"null")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return self.tt_business_answer(40002, "The request body must be a JSON object.")
        if not self.client_ok("tiktok_business", body.get("client_id"), body.get("client_secret")):
            return self.tt_business_answer(40001, "The app_id or secret is incorrect.")
        refreshing = request.url.path.endswith("/refresh_token/")
        if refreshing:
            if body.get("grant_type") != "refresh_token":
                return self.tt_business_answer(40002, "grant_type must be refresh_token.")
            old = self.state.token("tiktok", body.get("refresh_token"), ("business_refresh",))
            if old is None:
                return self.tt_business_answer(40105, "The refresh token is invalid or expired.")
            old.revoked = True
            account_id, scope = old.account_id, str(old.extra.get("scope", ""))
        else:
            if body.get("grant_type") != "authorization_code":
                return self.tt_business_answer(40002, "grant_type must be authorization_code.")
            entry = self.redeem("tiktok_business", body.get("auth_code"), body.get("redirect_uri"))
            if entry is None:
                return self.tt_business_answer(40105, "The auth_code is invalid or expired.")
            account_id, scope = entry.account_id, entry.scope
        account = self.state.account("tiktok", account_id)
        if account is None:
            return self.tt_business_answer(40105, "The auth_code is invalid or expired.")
        return self.tt_business_answer(0, "OK", self.tt_business_pair(account, scope))

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
        # The access token carries the granted scopes: each endpoint checks its own.
        access = self.state.issue("tiktok", account_id, "access", 86400, prefix="act.", scope=scope)
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
                    "privacy_level_options": PRIVATE_LEVELS if tiktok_private(account) else PRIVACY_LEVELS,
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
            refused = unknown_fields(body)
            if refused is not None:
                return tiktok_error(400, "invalid_params", refused)
            info = body.get("post_info") or {}
            source = body.get("source_info") or {}
            if info.get("privacy_level") not in (PRIVATE_LEVELS if tiktok_private(account) else PRIVACY_LEVELS):
                return tiktok_error(
                    400, "privacy_level_option_mismatch", "privacy_level is not one of the creator's options."
                )
            if not self.config.tiktok_audited and (info.get("privacy_level") != "SELF_ONLY"
                                                   or not tiktok_private(account)):
                return tiktok_error(
                    403, "unaudited_client_can_only_post_to_private_accounts",
                    "Unaudited clients can only post with privacy_level SELF_ONLY.",
                )
            if not self.config.tiktok_audited and self._tt_over_user_cap(account.id):
                return tiktok_error(403, "reached_active_user_cap",
                                    "The daily quota for active publishing users from your client is reached.")
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
                refusal = chunks_refusal(size, chunk, count)
                if refusal is not None:
                    return tiktok_error(400, "invalid_params", refusal)
                account.uploads[publish_id] = {"status": "PROCESSING_UPLOAD", "size": size, "received": 0,
                                               "info": info, "payload": body}
                here = str(call.request.url).split("?")[0]
                upload_url = here.removesuffix("/v2/post/publish/video/init/") + f"/upload/{publish_id}"
                return self._tt_ok({"publish_id": publish_id, "upload_url": upload_url})
            return tiktok_error(400, "invalid_params",
                                "source_info: PULL_FROM_URL with a video_url, or FILE_UPLOAD, is required.")

        return await self.api("tiktok", request, handle)

    def _tt_over_user_cap(self, open_id: str) -> bool:
        """An unaudited client lets at most 5 users post in 24 hours
        (https://developers.tiktok.com/doc/content-sharing-guidelines). The sandbox stands for one app
        shared by every test and trial account, so the cap holds once control `posting-users` sets it."""
        cap = self.__dict__.get("tt_user_cap")
        if cap is None:
            return False
        posters: dict[str, float] = self.__dict__.setdefault("tt_posters", {})
        now = self.now()
        for who, first in list(posters.items()):
            if now - first > 86400:
                del posters[who]
        if open_id in posters:
            return False
        if len(posters) >= cap:
            return True
        posters[open_id] = now
        return False

    async def tt_posting_users_control(self, request: Request) -> Response:
        """Control `POST /sandbox/tiktok/posting-users {dailyCap}`: how many users an unaudited app
        lets post in 24 hours from now on (TikTok's is 5; null: no cap, the sandbox's default)."""
        try:
            body = await request.json()
        except ValueError:
            body = None
        cap = body.get("dailyCap") if isinstance(body, dict) else "missing"
        if cap is not None and (not isinstance(cap, int) or isinstance(cap, bool) or cap < 0):
            problem = "an integer >= 0 or null"
            return JSONResponse({"error": {"code": "validation_failed", "message": f"dailyCap: {problem}",
                                           "details": [{"field": "dailyCap", "message": problem}]}}, status_code=422)
        self.__dict__["tt_user_cap"] = cap
        self.__dict__["tt_posters"] = {}
        return JSONResponse({"dailyCap": cap})

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
            scope = (call.token.extra.get("scope") if call.token is not None else None)
            if scope is not None and "video.list" not in str(scope).split(","):
                return tiktok_error(401, "scope_not_authorized",
                                    "The user did not authorize the scope required for completing this request.")
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

    # -- Business Messaging (the Business API: `Access-Token` header, errors as `code` in a 200) -----
    @staticmethod
    def tt_business_answer(code: int, message: str, data: dict[str, Any] | None = None) -> JSONResponse:
        return JSONResponse({"code": code, "message": message, "request_id": random_token(24), "data": data or {}})

    def tt_business_refusal(self, account: Account, business_id: Any) -> JSONResponse | None:
        if business_id != self.tt_business_id(account):
            return self.tt_business_answer(40002, "business_id does not match the access token's account.")
        if account.extra.get("personal"):
            return self.tt_business_answer(40002, "The account is not a TikTok Business Account.")
        return None

    async def tt_business_api(self, request: Request, handle: Any) -> Response:
        """A Business API call: its `Access-Token` must be a token of the business grant; a Login
        Kit token (or none) is refused as TikTok API for Business refuses it, 40105 in a 200."""
        value = request.headers.get("access-token") or ""
        if self.state.token("tiktok", value, ("business_access",)) is None:
            return self.tt_business_answer(40105, "The access token is invalid or has been revoked.")
        return await self.api("tiktok", request, handle, token_value=value, kinds=("business_access",))

    async def tt_business(self, request: Request) -> Response:
        """`GET /business/get/?business_id=`: the Business Account's profile (a personal account: 40002)."""

        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            refused = self.tt_business_refusal(account, call.query.get("business_id"))
            if refused is not None:
                return refused
            profile = {"username": account.username, "display_name": account.display_name}
            return self.tt_business_answer(0, "OK", profile)

        return await self.tt_business_api(request, handle)

    async def tt_business_send(self, request: Request) -> Response:
        """`POST /business/message/send/`: text to a conversation a person opened by writing first,
        within 48 hours of their last message; `text.body` of 1 to 6,000 characters."""

        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            body = call.body_json()
            if not isinstance(body, dict):
                return self.tt_business_answer(40002, "The request body must be a JSON object.")
            refused = self.tt_business_refusal(account, body.get("business_id"))
            if refused is not None:
                return refused
            if body.get("recipient_type") != "CONVERSATION" or body.get("message_type") != "TEXT":
                return self.tt_business_answer(40002, "recipient_type must be CONVERSATION and message_type TEXT.")
            text = (body.get("text") or {}).get("body") if isinstance(body.get("text"), dict) else None
            if not isinstance(text, str) or not 1 <= len(text) <= 6000:
                return self.tt_business_answer(40002, "text.body must be 1 to 6000 characters.")
            conversation = account.extra.get("tt_conversations", {}).get(str(body.get("recipient")))
            if conversation is None:
                return self.tt_business_answer(40010, "The conversation does not exist: the user must write first.")
            if self.now() - conversation["last_inbound"] >= 48 * 3600:
                return self.tt_business_answer(40016, "The 48-hour reply window of this conversation has closed.")
            message_id = f"tt_msg_{self.state.serial()}_{random_token(10)}"
            self.record(call, "dm", str(body["recipient"]), text, message_id)
            return self.tt_business_answer(0, "OK", {"message": {"message_id": message_id}})

        return await self.tt_business_api(request, handle)
