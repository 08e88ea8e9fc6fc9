"""Instagram (the Instagram API with Instagram Login) on the Graph core: its login, the account and
its contacts as nodes, conversations, and publishing through containers (a video container takes
the platform's processing time; a story has no caption; a carousel takes 2 to 10 finished items).
Its DMs and comment replies are Messenger's (`messenger.py`)."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from platforms.emulator_kit.answer import JSONResponse, asked
from platforms.emulator_kit.core import Call, PlatformParts, graph_time
from platforms.emulator_kit.errors import graph_error
from platforms.emulator_kit.oauth import OAuthServer
from platforms.emulator_kit.state import Account, followers_gained, random_token
from platforms.graph.emulator import EdgeRoute, graph_page, not_found, on_account

IG_LONG_TTL = 60 * 24 * 3600


class InstagramEmulator(OAuthServer):
    def instagram_parts(self) -> PlatformParts:
        return PlatformParts(self.instagram_routes, self.new_instagram_account, self.instagram_credentials)

    def instagram_routes(self) -> list[Route]:
        return [
            Route("/instagram/oauth/authorize", self.ig_authorize, methods=["GET"]),
            Route("/instagram/oauth/access_token", self.ig_code_token, methods=["POST"]),
            Route("/instagram/access_token", self.ig_exchange, methods=["GET"]),
            Route("/instagram/refresh_access_token", self.ig_refresh, methods=["GET"]),
        ]

    def instagram_graph_edges(self) -> list[EdgeRoute]:
        ig = ("instagram",)
        return [
            EdgeRoute(ig, "GET", ("conversations",), on_account, self._ig_conversations),
            EdgeRoute(ig, "GET", ("media",), on_account, self._ig_media),
            EdgeRoute(ig, "GET", ("insights",), on_account, self._ig_insights),
            EdgeRoute(ig, "GET", ("stories",), on_account, self._ig_stories),
            EdgeRoute(ig, "POST", ("media",), on_account, self._ig_container),
            EdgeRoute(ig, "POST", ("media_publish",), on_account, self._ig_publish),
        ]

    def new_instagram_account(self, username: str | None = None, name: str | None = None) -> Account:
        n = self.state.next_number()
        account = Account("instagram", f"178414{n:011d}", username or f"sandbox_ig_{n}", name or f"Sandbox IG {n}")
        account.extra["app_scoped_id"] = f"{26000000000000000 + n}"
        return self.state.add_account(account)

    def instagram_credentials(self, account: Account) -> dict[str, Any]:
        """Fresh credentials in the shape the adapter stores."""
        token = self.state.issue("instagram", account.id, "access", IG_LONG_TTL, prefix="IGAA")
        return {"accessToken": token.value, "expiresAt": None, "userId": account.id}

    # -- Instagram Login ---------------------------------------------------------------------
    async def ig_authorize(self, request: Request) -> Response:
        return self.authorize(
            "instagram", request, new_account=lambda hint: self.new_instagram_account(hint)
        )

    async def ig_code_token(self, request: Request) -> Response:
        form = dict(await request.form())
        if not self.client_ok("instagram", str(form.get("client_id")), str(form.get("client_secret"))):
            return graph_error(400, 101, "Error validating application. Invalid application ID.")
        entry = self.redeem("instagram", str(form.get("code", "")), str(form.get("redirect_uri", "")))
        if entry is None or form.get("grant_type") != "authorization_code":
            return graph_error(400, 100, "Invalid authorization code", 36007)
        token = self.state.issue("instagram", entry.account_id, "short", 3600, prefix="IGQ")
        return JSONResponse(
            {
                "access_token": token.value,
                "user_id": int(entry.account_id),
                "permissions": entry.scope.split(","),
            }
        )

    async def ig_exchange(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            assert call.account is not None
            client = self.config.oauth_clients.get("instagram")
            if (
                call.query.get("grant_type") != "ig_exchange_token"
                or client is None
                or (call.query.get("client_secret") != client.client_secret)
            ):
                return graph_error(400, 100, "Invalid parameter: grant_type or client_secret")
            token = self.state.issue("instagram", call.account.id, "access", IG_LONG_TTL, prefix="IGAA")
            return JSONResponse(
                {"access_token": token.value, "token_type": "bearer", "expires_in": IG_LONG_TTL}
            )

        return await self.api(
            "instagram",
            request,
            handle,
            token_value=request.query_params.get("access_token"),
            kinds=("short",),
        )

    async def ig_refresh(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            assert call.account is not None
            if call.query.get("grant_type") != "ig_refresh_token":
                return graph_error(400, 100, "Invalid parameter: grant_type")
            token = self.state.issue("instagram", call.account.id, "access", IG_LONG_TTL, prefix="IGAA")
            return JSONResponse(
                {"access_token": token.value, "token_type": "bearer", "expires_in": IG_LONG_TTL}
            )

        return await self.api(
            "instagram", request, handle, token_value=request.query_params.get("access_token")
        )

    # -- nodes and edges ---------------------------------------------------------------------
    def _ig_node(self, call: Call, account: Account, node: str, fields: list[str]) -> Response:
        if node == "me":
            return JSONResponse(
                {
                    "user_id": account.id,
                    "username": account.username,
                    "name": account.display_name,
                    "id": account.extra["app_scoped_id"],
                }
            )
        if node == account.id:
            data = {
                "id": account.id,
                "username": account.username,
                "name": account.display_name,
                "followers_count": account.followers,
            }
            return JSONResponse({k: v for k, v in data.items() if k in fields or k == "id"})
        if node in account.containers:
            return JSONResponse({"status_code": self._ig_status(account.containers[node]), "id": node})
        if node in account.posts:
            post = account.posts[node]
            return JSONResponse(asked({"id": node, "permalink": post["permalink"], "caption": post.get("text")},
                                      fields))
        contact = account.contacts.get(node)
        if contact is not None:
            return JSONResponse(asked({"name": contact.name, "username": contact.handle, "id": contact.id}, fields))
        return not_found(node)

    def _ig_conversations(self, call: Call, account: Account, node: str) -> Response:
        contacts = sorted(
            (c for c in account.contacts.values() if c.conversation_id), key=lambda c: c.updated, reverse=True
        )
        data = [
            {
                "id": c.conversation_id,
                "updated_time": graph_time(c.updated),
                "participants": {
                    "data": [
                        {"username": account.username, "id": account.id},
                        {"username": c.handle, "id": c.id},
                    ]
                },
            }
            for c in contacts
        ]
        return graph_page(call.request, data)

    def _ig_media(self, call: Call, account: Account, node: str) -> Response:
        return graph_page(call.request, [
            {"id": pid, "caption": post.get("text"), "permalink": post.get("permalink"),
             "timestamp": graph_time(post.get("created") or time.time())}
            for pid, post in reversed(list(account.posts.items())) if not post.get("story")])

    def _ig_insights(self, call: Call, account: Account, node: str) -> Response:
        """`GET /{ig-user-id}/insights?metric=follower_count&period=day&since=&until=`: the followers
        gained each day of the range (the sandbox's own history), at most 30 days, today not among
        them. Other metrics are not emulated."""
        params = call.params()
        if params.get("metric") != "follower_count" or params.get("period") != "day":
            return graph_error(400, 100, "(#100) The sandbox answers metric=follower_count with period=day only")
        try:
            since, until = int(str(params["since"])), int(str(params["until"]))
        except (KeyError, ValueError):
            return graph_error(400, 100, "(#100) since and until must be Unix times")
        today = dt.datetime.fromtimestamp(time.time(), dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        if until <= since or until - since > 30 * 86400 or since < today.timestamp() - 30 * 86400:
            return graph_error(400, 100, "(#100) follower_count covers at most the last 30 days, since before until")
        values = []
        day = dt.datetime.fromtimestamp(since, dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        while day.timestamp() < min(until, today.timestamp()):
            values.append({"value": followers_gained(account, day.date()),
                           "end_time": graph_time((day + dt.timedelta(days=1)).timestamp())})
            day += dt.timedelta(days=1)
        return JSONResponse({"data": [{"name": "follower_count", "period": "day", "values": values,
                                       "title": "Follower Count", "description": "Total number of unique accounts "
                                       "following this profile", "id": f"{node}/insights/follower_count/day"}]})

    def _ig_stories(self, call: Call, account: Account, node: str) -> Response:
        return graph_page(call.request, [
            {"id": pid, "permalink": post.get("permalink")}
            for pid, post in reversed(list(account.posts.items())) if post.get("story")])

    # -- Instagram publishing ----------------------------------------------------------------
    def _ig_container(self, call: Call, account: Account, node: str) -> Response:
        params = call.params()
        caption = params.get("caption") or ""
        if len(str(caption)) > 2200:
            return graph_error(400, 100, "(#100) The caption is too long (2200 characters at most)", 2207010)
        media_type = params.get("media_type", "IMAGE")
        carousel_item = params.get("is_carousel_item") in (True, "true")
        if media_type not in ("IMAGE", "VIDEO", "REELS", "STORIES", "CAROUSEL"):
            return graph_error(400, 100, "(#100) media_type must be IMAGE, VIDEO, REELS, STORIES or CAROUSEL", 2207023)
        if carousel_item and media_type in ("REELS", "STORIES"):
            return graph_error(400, 100, f"(#100) A carousel item cannot be {media_type}", 2207023)
        reel_only = [name for name in ("cover_url", "share_to_feed", "thumb_offset") if name in params]
        if reel_only and media_type != "REELS":
            return graph_error(400, 100, f"(#100) {reel_only[0]} is only for REELS", 2207023)
        if "share_to_feed" in params and params["share_to_feed"] not in (True, False, "true", "false"):
            return graph_error(400, 100, "(#100) share_to_feed must be a boolean", 2207023)
        if "cover_url" in params and not str(params["cover_url"]).startswith(("https://", "http://")):
            return graph_error(400, 100, "(#100) cover_url must be a URL the platform can fetch", 2207052)
        if media_type == "STORIES":
            if bool(params.get("image_url")) == bool(params.get("video_url")):
                return graph_error(400, 100, "(#100) A story takes image_url or video_url", 2207052)
        elif media_type == "CAROUSEL":
            children = str(params.get("children", "")).split(",")
            if not 2 <= len(children) <= 10 or any(c not in account.containers for c in children):
                return graph_error(
                    400, 100, "(#100) children must list 2 to 10 carousel item containers", 2207014
                )
            if any(self._ig_status(account.containers[c]) != "FINISHED" for c in children):
                return graph_error(400, 9007, "Media ID is not available", 2207027)
        elif media_type in ("REELS", "VIDEO"):
            if not params.get("video_url"):
                return graph_error(400, 100, "(#100) video_url is required for video media", 2207026)
        elif not params.get("image_url"):
            return graph_error(400, 100, "(#100) image_url is required", 2207052)
        container_id = f"{17900000000000000 + self.state.serial()}"
        # Video containers take the platform's processing time (minutes on Instagram): IN_PROGRESS until then.
        video = media_type in ("REELS", "VIDEO") or bool(params.get("video_url"))
        delay = self.processing_seconds.get("instagram", 0.0) if video else 0.0
        account.containers[container_id] = {"status_code": "IN_PROGRESS" if delay else "FINISHED",
                                            "params": call.payload(), "ready_at": self.now() + delay}
        return JSONResponse({"id": container_id})

    def _ig_status(self, container: dict[str, Any]) -> str:
        if container["status_code"] == "IN_PROGRESS" and self.now() >= container.get("ready_at", 0):
            container["status_code"] = "FINISHED"
        return str(container["status_code"])

    def _ig_publish(self, call: Call, account: Account, node: str) -> Response:
        creation = str(call.params().get("creation_id", ""))
        container = account.containers.get(creation)
        if container is None or self._ig_status(container) != "FINISHED":
            return graph_error(400, 9007, "Media ID is not available", 2207027)
        if container.get("is_item") or container["params"].get("is_carousel_item") in (True, "true"):
            return graph_error(400, 100, "(#100) A carousel item cannot be published on its own", 2207014)
        container["status_code"] = "PUBLISHED"
        media_id = f"{18000000000000000 + self.state.serial()}"
        permalink = f"https://www.instagram.com/p/{random_token(11)}/"
        story = container["params"].get("media_type") == "STORIES"
        if story:  # a story has no caption, and is listed under /{ig-user-id}/stories, not /media
            permalink = f"https://www.instagram.com/stories/{account.username}/{media_id}/"
        caption = None if story else container["params"].get("caption")
        account.posts[media_id] = {"text": caption, "permalink": permalink, "story": story, "created": time.time()}
        self.record(
            call,
            "post",
            media_id,
            caption,
            media_id,
            {"container": container["params"], "media_publish": call.payload()},
        )
        return JSONResponse({"id": media_id})
