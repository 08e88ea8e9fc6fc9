"""X API v2 with OAuth 2 (PKCE): the user, posts (280 weighted characters, reply settings, media),
deletion, the user's timeline, DMs, and media upload (an image in one call, a video in chunks that
is usable once processed)."""

from __future__ import annotations

import base64
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from platforms.emulator_kit.answer import JSONResponse
from platforms.emulator_kit.core import Call, PlatformParts, iso_ms
from platforms.emulator_kit.errors import oauth_error, x_error
from platforms.emulator_kit.oauth import OAuthServer
from platforms.emulator_kit.state import Account, random_token
from platforms.registry import SANDBOX_X_WEBHOOK_ID
from platforms.x.text import MAX_WEIGHTED_LENGTH, weighted_length

X_VIDEO_TYPES = ("video/mp4", "video/quicktime", "video/webm")
X_VIDEO_MAX_BYTES = 512 * 1024 * 1024
X_CHUNK_MAX_BYTES = 5 * 1024 * 1024
X_MEDIA_CATEGORIES = ("amplify_video", "tweet_gif", "tweet_image", "tweet_video", "dm_gif", "dm_image", "dm_video",
                      "subtitles")


def x_invalid(detail: str) -> JSONResponse:
    return x_error(400, "Invalid Request", detail, kind="https://api.x.com/2/problems/invalid-request")


REPLY_SETTINGS = ("following", "mentionedUsers", "subscribers", "verified")


class XEmulator(OAuthServer):
    def x_parts(self) -> PlatformParts:
        return PlatformParts(self.x_routes, self.new_x_account, self.x_credentials)

    def x_routes(self) -> list[Route]:
        return [
            Route("/x/i/oauth2/authorize", self.x_authorize, methods=["GET"]),
            Route("/x/2/oauth2/token", self.x_token, methods=["POST"]),
            Route("/x/2/users/me", self.x_me, methods=["GET"]),
            Route("/x/2/tweets", self.x_tweet, methods=["POST"]),
            Route("/x/2/tweets/{id}", self.x_delete, methods=["DELETE"]),
            Route("/x/2/users/{id}/tweets", self.x_timeline, methods=["GET"]),
            Route("/x/2/dm_conversations/with/{participant}/messages", self.x_dm, methods=["POST"]),
            Route("/x/2/dm_events", self.x_dm_events, methods=["GET"]),
            Route("/x/2/account_activity/webhooks/{webhook_id}/subscriptions/all", self.x_activity_subscribe,
                  methods=["POST"]),
            Route("/x/2/media/upload", self.x_media, methods=["GET", "POST"]),
            Route("/x/2/media/upload/initialize", self.x_media_initialize, methods=["POST"]),
            Route("/x/2/media/upload/{id}/append", self.x_media_append, methods=["POST"]),
            Route("/x/2/media/upload/{id}/finalize", self.x_media_finalize, methods=["POST"]),
        ]

    def new_x_account(self, username: str | None = None, name: str | None = None) -> Account:
        n = self.state.next_number()
        account = Account("x", str(1500000000000000000 + n), username or f"sandbox_x_{n}", name or f"Sandbox X {n}")
        return self.state.add_account(account)

    def x_credentials(self, account: Account) -> dict[str, Any]:
        return self.token_pair(account, 7200)

    # -- X -----------------------------------------------------------------------------------
    async def x_authorize(self, request: Request) -> Response:
        return self.authorize(
            "x", request, challenge=True, new_account=lambda hint: self.new_x_account(hint)
        )

    async def x_token(self, request: Request) -> Response:
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

    async def x_activity_subscribe(self, request: Request) -> Response:
        """`POST /2/account_activity/webhooks/{webhook_id}/subscriptions/all` with the user's token:
        the account's DM events come by the app's webhook from now on (the sandbox's app has one
        webhook, `SANDBOX_X_WEBHOOK_ID`; any other id → 404); subscribing again changes nothing."""

        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            if call.request.path_params["webhook_id"] != SANDBOX_X_WEBHOOK_ID:
                return x_error(404, "Not Found Error", "Webhook not found.",
                               kind="https://api.x.com/2/problems/resource-not-found", resource_type="webhook",
                               resource_id=call.request.path_params["webhook_id"], parameter="webhook_id",
                               value=call.request.path_params["webhook_id"])
            account.extra["activity_subscribed"] = True
            return JSONResponse({"data": {"subscribed": True}})

        return await self.api("x", request, handle)

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
                    # X's document names the count `post_count`; its answers still carry `tweet_count` too.
                    "post_count": len(account.posts),
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
                    kind="https://api.x.com/2/problems/invalid-request",
                )
            if body.get("reply_settings") is not None and body["reply_settings"] not in REPLY_SETTINGS:
                return x_error(
                    400,
                    "Invalid Request",
                    "One or more parameters to your request was invalid.",
                    kind="https://api.x.com/2/problems/invalid-request",
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
                    kind="https://api.x.com/2/problems/invalid-request",
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
                    kind="https://api.x.com/2/problems/resource-not-found",
                    resource_type="tweet", resource_id=str(tweet_id), parameter="id", value=str(tweet_id),
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
                               kind="https://api.x.com/2/problems/resource-not-found", resource_type="user",
                               resource_id=call.request.path_params["id"], parameter="id",
                               value=call.request.path_params["id"])
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
                    kind="https://api.x.com/2/problems/invalid-request",
                )
            if not isinstance(text, str) or not text or len(text) > 10000:
                return x_error(
                    400,
                    "Invalid Request",
                    "text must be 1 to 10000 characters.",
                    kind="https://api.x.com/2/problems/invalid-request",
                )
            low, high = sorted((int(account.id), int(participant)))
            event_id = str(1900000000000000000 + self.state.serial())
            self.record(call, "dm", participant, text, event_id)
            # X lists the account's own messages among its DM events too.
            self.x_add_dm_event(account, event_id, account.id, participant, text)
            return JSONResponse(
                {"data": {"dm_conversation_id": f"{low}-{high}", "dm_event_id": event_id}}, status_code=201
            )

        return await self.api("x", request, handle)

    async def x_media(self, request: Request) -> Response:
        """`POST /2/media/upload`: an image in one call (`media`, `media_category`); `GET
        ...?command=STATUS&media_id=`: a video's processing. The `command=INIT/APPEND/FINALIZE` form
        is the deprecated v1.1-style upload that X's v2 reference replaced with
        `/2/media/upload/initialize`, `/{id}/append` and `/{id}/finalize`: refused here."""

        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            form = await call.request.form() if call.request.method == "POST" else call.request.query_params
            command = form.get("command")
            if call.request.method == "GET":
                return self._x_status(call, account, str(command or ""), str(form.get("media_id") or ""))
            if command is not None:
                return x_invalid("The command parameter is deprecated: use /2/media/upload/initialize, "
                                 "/2/media/upload/{id}/append and /2/media/upload/{id}/finalize.")
            media = form.get("media")
            if media is None or isinstance(media, str):
                return x_invalid("media is required.")
            if form.get("media_category") not in X_MEDIA_CATEGORIES:
                return x_invalid("media_category is required.")
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

    async def x_media_initialize(self, request: Request) -> Response:
        """`POST /2/media/upload/initialize` (JSON `media_type`, `total_bytes`, `media_category`)."""

        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            body = call.body_json()
            if not isinstance(body, dict):
                return x_invalid("A JSON object is required.")
            media_type, total = body.get("media_type"), body.get("total_bytes")
            if (media_type not in X_VIDEO_TYPES or not isinstance(total, int) or isinstance(total, bool)
                    or not 0 < total <= X_VIDEO_MAX_BYTES):
                return x_invalid("media_type must be a video type X takes and total_bytes an integer up to 512 MB.")
            if body.get("media_category") not in (None, *X_MEDIA_CATEGORIES):
                return x_invalid("media_category is not one X knows.")
            media_id = str(1700000000000000000 + self.state.serial())
            account.uploads[media_id] = {"chunked": True, "type": media_type, "total": total, "segments": {},
                                         "state": "uploading", "category": body.get("media_category")}
            self.record(call, "media_upload", media_id, None, media_id)
            return JSONResponse({"data": {"id": media_id, "media_key": f"7_{media_id}",
                                          "expires_after_secs": 86400}})

        return await self.api("x", request, handle)

    async def x_media_append(self, request: Request) -> Response:
        """`POST /2/media/upload/{id}/append` (multipart `media`, `segment_index`): chunks of at most
        5 MB, in order."""

        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            media_id = call.request.path_params["id"]
            upload = account.uploads.get(media_id)
            if upload is None or not upload.get("chunked"):
                return x_invalid("The id is not an upload session of this user.")
            if upload["state"] != "uploading":
                return x_invalid("The upload is finalized already.")
            form = await call.request.form()
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
            self.record(call, "media_upload", media_id, None, media_id, {"segment_index": int(segment),
                                                                        "media": f"<{size} bytes>", "bytes": size})
            return JSONResponse({"data": {"expires_at": int(self.now()) + 86400}})

        return await self.api("x", request, handle)

    async def x_media_finalize(self, request: Request) -> Response:
        """`POST /2/media/upload/{id}/finalize`: refused unless the bytes received are `total_bytes`."""

        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            media_id = call.request.path_params["id"]
            upload = account.uploads.get(media_id)
            if upload is None or not upload.get("chunked"):
                return x_invalid("The id is not an upload session of this user.")
            received = sum(upload["segments"].values())
            if received != upload["total"]:
                return x_invalid(f"File size mismatch: {received} bytes received of {upload['total']} declared.")
            if upload["state"] == "uploading":
                upload["state"] = "processing"
                upload["ready_at"] = self.now() + self.processing_seconds.get("x", 0.0)
            self.record(call, "media_upload", media_id, None, media_id, {})
            return JSONResponse({"data": {"id": media_id, "size": received, "expires_after_secs": 86400,
                                          "processing_info": self._x_processing(upload)}})

        return await self.api("x", request, handle)

    def _x_status(self, call: Call, account: Account, command: str, media_id: str) -> Response:
        upload = account.uploads.get(media_id) if media_id else None
        if command != "STATUS":
            return x_invalid("command must be STATUS.")
        if upload is None or not upload.get("chunked"):
            return x_invalid("media_id is not a chunked upload of this user.")
        if upload["state"] == "uploading":
            return x_invalid("The upload is not finalized.")
        self.record(call, "media_upload", media_id, None, media_id)
        return JSONResponse({"data": {"id": media_id, "processing_info": self._x_processing(upload, status=True)}})

    def _x_processing(self, upload: dict[str, Any], status: bool = False) -> dict[str, Any]:
        if upload["state"] == "processing" and status and self.now() >= upload["ready_at"]:
            upload["state"] = "succeeded"
        if upload["state"] == "succeeded":
            return {"state": "succeeded", "progress_percent": 100}
        return {"state": "in_progress" if status else "pending", "check_after_secs": 1, "progress_percent": 0}

    # -- DM events: the inbox ------------------------------------------------------------------
    def x_add_dm_event(self, account: Account, event_id: str, sender: str, other: str, text: str,
                       user: dict[str, Any] | None = None) -> dict[str, Any]:
        """Keep a DM event in the account's list (newest last), as `GET /2/dm_events` shows it."""
        low, high = sorted((int(account.id), int(other) if other.isdigit() else 0))
        event = {"id": event_id, "event_type": "MessageCreate", "text": text, "sender_id": sender,
                 "dm_conversation_id": f"{low}-{high}", "created_at": iso_ms(self.now())}
        account.extra.setdefault("dm_events", []).append(event)
        if user is not None:
            account.extra.setdefault("dm_users", {})[user["id"]] = user
        self.state.touch(account)
        return event

    async def x_dm_events(self, request: Request) -> Response:
        """`GET /2/dm_events`: the user's DM events of the last 30 days, newest first, `max_results`
        (1..100, default 100) a page; `meta.next_token` leads to the next page, given back as
        `pagination_token` (any other token is refused). `expansions=sender_id` adds the senders
        under `includes.users`."""

        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            query = call.query
            size = query.get("max_results", "100")
            if not size.isdigit() or not 1 <= int(size) <= 100:
                return x_invalid("The `max_results` query parameter value is not between 1 and 100.")
            if query.get("event_types") not in (None, "MessageCreate", "ParticipantsJoin", "ParticipantsLeave"):
                return x_invalid("The `event_types` query parameter value is not one of the allowed values.")
            month_ago = iso_ms(self.now() - 30 * 86400)
            events = [e for e in reversed(account.extra.get("dm_events", [])) if e["created_at"] >= month_ago]
            start = 0
            token = query.get("pagination_token")
            if token is not None:
                offset = account.extra.get("dm_tokens", {}).get(token)
                if offset is None:
                    return x_invalid("The `pagination_token` query parameter value is not valid.")
                start = int(offset)
            page = events[start:start + int(size)]
            fields = set(query.get("dm_event.fields", "").split(","))
            # `sender_id` is not among the fields one may ask for: the expansion of it brings it.
            expanded = {"sender_id"} if "sender_id" in query.get("expansions", "").split(",") else set()
            keep = {"id", "event_type", "text"} | fields | expanded
            data = [{k: v for k, v in event.items() if k in keep} for event in page]
            meta: dict[str, Any] = {"result_count": len(data)}
            if start + int(size) < len(events):
                next_token = random_token(16)
                account.extra.setdefault("dm_tokens", {})[next_token] = start + int(size)
                meta["next_token"] = next_token
            body: dict[str, Any] = {"data": data, "meta": meta} if data else {"meta": meta}
            if "sender_id" in query.get("expansions", "") and data:
                users = account.extra.get("dm_users", {})
                senders = {event["sender_id"] for event in page}
                known = [users[s] for s in sorted(senders) if s in users]
                if account.id in senders:
                    known.append({"id": account.id, "name": account.display_name, "username": account.username})
                body["includes"] = {"users": known}
            return JSONResponse(body)

        return await self.api("x", request, handle)
