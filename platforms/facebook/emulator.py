"""Facebook Pages on the Graph core: Facebook Login (which the Marketing API shares), the Page and
its contacts as nodes, the Pages a user manages, and publishing (feed, photos, videos). Its DMs and
comment replies are Messenger's (`messenger.py`)."""

from __future__ import annotations

import time
from typing import Any

from starlette.responses import Response

from platforms.emulator_kit.answer import JSONResponse, asked
from platforms.emulator_kit.core import Call, PlatformParts, graph_time
from platforms.emulator_kit.errors import graph_error
from platforms.emulator_kit.state import Account
from platforms.graph.emulator import EdgeRoute, graph_page, not_found, on_account, on_me
from platforms.graph.login_emulator import FacebookLogin


class FacebookEmulator(FacebookLogin):
    def facebook_parts(self) -> PlatformParts:
        return PlatformParts(lambda: self.facebook_login_routes("facebook"), self.new_facebook_account,
                             self.facebook_credentials)

    def facebook_graph_edges(self) -> list[EdgeRoute]:
        fb = ("facebook",)
        return [
            EdgeRoute(fb, "GET", ("accounts",), on_me, self._fb_pages),
            EdgeRoute(fb, "POST", ("feed", "photos", "videos"), on_account, self._fb_publish),
            EdgeRoute(fb, "GET", ("published_posts",), on_account, self._fb_published),
        ]

    def new_facebook_account(self, username: str | None = None, name: str | None = None) -> Account:
        n = self.state.next_number()
        account = Account("facebook", f"10{n:013d}", username or f"sandboxpage{n}", name or f"Sandbox Page {n}")
        account.extra["user_id"] = f"{12200000000000000 + n}"
        return self.state.add_account(account)

    def facebook_credentials(self, account: Account) -> dict[str, Any]:
        """Fresh credentials in the shape the adapter stores."""
        user = self.state.issue("facebook", account.id, "user", 60 * 24 * 3600, prefix="EAAU")
        page = self.state.issue("facebook", account.id, "page", None, prefix="EAAP")
        return {"accessToken": page.value, "userAccessToken": user.value, "pageId": account.id}

    def _fb_node(self, call: Call, account: Account, node: str, fields: list[str]) -> Response:
        if node == "me":
            return JSONResponse({"id": account.extra["user_id"], "name": f"{account.display_name} Admin"})
        if node == account.id:
            data: dict[str, Any] = {
                "id": account.id,
                "name": account.display_name,
                "followers_count": account.followers,
            }
            if "access_token" in fields:
                if call.token is None or call.token.kind != "user":
                    return graph_error(400, 190, "A user access token is required to request this resource.")
                data["access_token"] = self.state.issue(
                    "facebook", account.id, "page", None, prefix="EAAP"
                ).value
            return JSONResponse({k: v for k, v in data.items() if k in fields or k == "id"})
        if node in account.posts:
            post = account.posts[node]
            return JSONResponse(asked({"id": node, "message": post.get("text"), "permalink_url": post["permalink"]},
                                      fields))
        videos = account.extra.get("videos") or {}
        if node in videos:  # a Video node: its id is not its post's (`post_id`, listed by published_posts)
            return JSONResponse({key: value for key, value in {"id": node, "post_id": videos[node]}.items()
                                 if key in fields or key == "id"})
        contact = account.contacts.get(node)
        if contact is not None:
            first, _, last = (contact.name or "").partition(" ")
            return JSONResponse(asked(
                {"first_name": first, "last_name": last, "name": contact.name, "id": contact.id}, fields))
        return not_found(node)

    def _fb_pages(self, call: Call, account: Account, node: str) -> Response:
        """`GET /me/accounts`: the Pages the user manages, each with its Page token."""
        if call.token is None or call.token.kind != "user":
            return graph_error(400, 190, "A user access token is required to request this resource.")
        pages = [
            {
                "id": page.id,
                "name": page.display_name,
                "username": page.username,
                "access_token": self.state.issue("facebook", page.id, "page", None, prefix="EAAP").value,
                "category": "Brand",
                "tasks": ["MANAGE", "CREATE_CONTENT", "MESSAGING"],
            }
            for page in self.reached(account)
        ]
        fields = [name for name in str(call.params().get("fields", "")).split(",") if name]
        return graph_page(call.request, [asked(page, fields) for page in pages])

    def _fb_published(self, call: Call, account: Account, node: str) -> Response:
        return graph_page(call.request, [
            {"id": pid, "message": post.get("text"), "permalink_url": post.get("permalink"),
             "created_time": graph_time(post.get("created") or time.time())}
            for pid, post in reversed(list(account.posts.items()))])

    # -- Facebook publishing -----------------------------------------------------------------
    def _fb_publish(self, call: Call, account: Account, node: str) -> Response:
        edge = call.request.path_params["edge"]
        params = call.params()
        serial = self.state.serial()
        if edge == "photos":
            if not params.get("url"):
                return graph_error(400, 324, "(#324) Requires upload file")
            photo_id = f"{12000000000000000 + serial}"
            if params.get("published") in (False, "false"):
                return JSONResponse({"id": photo_id})
            post_id = f"{account.id}_{photo_id}"
            text = params.get("caption")
            answer: dict[str, Any] = {"id": photo_id, "post_id": post_id}
        elif edge == "videos":
            if not params.get("file_url"):
                return graph_error(400, 100, "(#100) file_url is required", 1363030)
            # The answer is the Video's id; the Page post made for it has an id of its own.
            video_id = f"{13000000000000000 + serial}"
            post_id = f"{account.id}_{15000000000000000 + serial}"
            account.extra.setdefault("videos", {})[video_id] = post_id
            text = params.get("description")
            answer = {"id": video_id}
        else:
            text = params.get("message")
            if not text and not params.get("link") and not params.get("attached_media"):
                return graph_error(400, 100, "(#100) Missing message or attachment", 1386001)
            post_id = f"{account.id}_{14000000000000000 + serial}"
            answer = {"id": post_id}
        account.posts[post_id] = {"text": text, "permalink": f"https://www.facebook.com/{post_id}",
                                  "created": time.time()}
        self.record(call, "post", post_id, text, str(answer["id"]) if edge == "videos" else post_id)
        return JSONResponse(answer)
