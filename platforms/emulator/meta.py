"""Graph API emulation: Instagram (Instagram Login), Facebook Pages and Messenger, WhatsApp Cloud,
Marketing API. Rules kept: the 24 h window, button title <= 20, a refused button surface (Instagram
private replies take text only; any Meta button with a local or non-http URL), one private reply per
comment within 7 days, WhatsApp 80 messages/s per number (130429)."""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from platforms.emulator.core import Call, EmulatorBase, bad_button_url, graph_error, graph_page, graph_time
from platforms.emulator.state import PRIVATE_REPLY_SECONDS, WINDOW_SECONDS, Account, Contact, random_token
from platforms.inbound import meta_signature

NOT_FOUND_SUBCODE = 33
TEXT_LIMITS = {"instagram": 1000, "facebook": 2000}
WINDOW_SUBCODE = {"instagram": 2534022, "facebook": 2018278}
IG_LONG_TTL = 60 * 24 * 3600
# Every sandbox WhatsApp Business Account has these templates; one still waits for Meta's review.
WA_TEMPLATES: list[dict[str, Any]] = [
    {"name": "hello_world", "language": "en_US", "status": "APPROVED", "category": "UTILITY",
     "components": [{"type": "BODY", "text": "Hello World"}]},
    {"name": "order_update", "language": "en_US", "status": "APPROVED", "category": "UTILITY",
     "components": [{"type": "BODY", "text": "Your order {{1}} ships on {{2}}."}]},
    {"name": "order_update", "language": "es", "status": "APPROVED", "category": "UTILITY",
     "components": [{"type": "BODY", "text": "Tu pedido {{1}} sale el {{2}}."}]},
    {"name": "spring_offer", "language": "en_US", "status": "PENDING", "category": "MARKETING",
     "components": [{"type": "BODY", "text": "Spring sale: {{1}} off everything."}]},
]


def _render_template(template: Any) -> str | Response:
    """The text the person receives, or WhatsApp's refusal: an unknown, unapproved or other-language
    template (132001), or parameters that do not fill its body (132000)."""
    template = template if isinstance(template, dict) else {}
    code = (template.get("language") or {}).get("code") if isinstance(template.get("language"), dict) else None
    found = next((t for t in WA_TEMPLATES if t["name"] == template.get("name") and t["language"] == code
                  and t["status"] == "APPROVED"), None)
    if found is None:
        return graph_error(404, 132001, "(#132001) Template name does not exist in the translation", whatsapp=True,
                           details=f"template name ({template.get('name')}) does not exist in {code}")
    body = found["components"][0]["text"]
    wanted = len(set(re.findall(r"\{\{(\d+)\}\}", body)))
    values = [p.get("text") for c in template.get("components") or [] if isinstance(c, dict) and c.get("type") == "body"
              for p in c.get("parameters") or [] if isinstance(p, dict)]
    if len(values) != wanted or not all(isinstance(v, str) and v for v in values):
        return graph_error(400, 132000, "(#132000) Number of parameters does not match the expected number of params",
                           whatsapp=True, details=f"body: number of localizable_params ({len(values)}) does not "
                                                  f"match the expected number of params ({wanted})")
    return re.sub(r"\{\{(\d+)\}\}", lambda m: str(values[int(m.group(1)) - 1]), body)


# How long after accepting a send WhatsApp reports it failed (a status webhook).
STATUS_DELAY_SECONDS = 0.2


def not_found(node: str, method: str = "get") -> JSONResponse:
    return graph_error(
        400,
        100,
        f"Unsupported {method} request. Object with ID '{node}' does not exist, "
        "cannot be loaded due to missing "
        "permissions, or does not support this operation.",
        NOT_FOUND_SUBCODE,
        error_type="GraphMethodException",
    )


def as_obj(value: Any) -> Any:
    """Graph takes JSON objects also as JSON-encoded strings in query or form fields."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


class MetaEmulator(EmulatorBase):
    def meta_routes(self) -> list[Route]:
        routes: list[Route] = [
            Route("/instagram/oauth/authorize", self.ig_authorize, methods=["GET"]),
            Route("/instagram/oauth/access_token", self.ig_code_token, methods=["POST"]),
            Route("/instagram/access_token", self.ig_exchange, methods=["GET"]),
            Route("/instagram/refresh_access_token", self.ig_refresh, methods=["GET"]),
        ]
        for platform in ("facebook", "meta_ads"):
            routes += [
                Route(f"/{platform}/{{version}}/dialog/oauth", self.fb_authorize, methods=["GET"]),
                Route(f"/{platform}/{{version}}/oauth/access_token", self.fb_token, methods=["GET", "POST"]),
            ]
        for platform in ("instagram", "facebook", "whatsapp", "meta_ads"):
            routes += [
                Route(
                    f"/{platform}/{{version}}/{{node}}", self.graph_node, methods=["GET", "POST", "DELETE"]
                ),
                Route(f"/{platform}/{{version}}/{{node}}/{{edge}}", self.graph_edge, methods=["GET", "POST"]),
            ]
        return routes

    def platform_of(self, request: Request) -> str:
        path = request.scope.get("path", "")
        root = request.scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        return path.lstrip("/").split("/")[0]

    # -- accounts ----------------------------------------------------------------------------
    def new_meta_account(
        self, platform: str, username: str | None = None, name: str | None = None
    ) -> Account:
        n = self.state.next_number()
        if platform == "instagram":
            account = Account(
                platform, f"178414{n:011d}", username or f"sandbox_ig_{n}", name or f"Sandbox IG {n}"
            )
            account.extra["app_scoped_id"] = f"{26000000000000000 + n}"
        elif platform == "facebook":
            account = Account(
                platform, f"10{n:013d}", username or f"sandboxpage{n}", name or f"Sandbox Page {n}"
            )
            account.extra["user_id"] = f"{12200000000000000 + n}"
        elif platform == "whatsapp":
            account = Account(
                platform, f"1{n:014d}", username or f"+1 555-01{n % 100:02d}", name or f"Sandbox Co {n}"
            )
            account.extra["waba_id"] = f"2{n:014d}"
        else:
            account = Account(platform, f"act_{n:015d}", username or f"{n:015d}", name or f"Sandbox Ads {n}")
        return self.state.add_account(account)

    def meta_credentials(self, account: Account) -> dict[str, Any]:
        """Fresh credentials in the shape the adapter stores."""
        if account.platform == "instagram":
            token = self.state.issue("instagram", account.id, "access", IG_LONG_TTL, prefix="IGAA")
            return {"accessToken": token.value, "expiresAt": None, "userId": account.id}
        if account.platform == "facebook":
            user = self.state.issue("facebook", account.id, "user", 60 * 24 * 3600, prefix="EAAU")
            page = self.state.issue("facebook", account.id, "page", None, prefix="EAAP")
            return {"accessToken": page.value, "userAccessToken": user.value, "pageId": account.id}
        if account.platform == "whatsapp":
            token = self.state.issue("whatsapp", account.id, "access", None, prefix="EAAW")
            return {
                "accessToken": token.value,
                "phoneNumberId": account.id,
                "wabaId": account.extra["waba_id"],
            }
        token = self.state.issue("meta_ads", account.id, "user", 60 * 24 * 3600, prefix="EAAA")
        return {"accessToken": token.value, "adAccountId": account.id}

    # -- Instagram Login ---------------------------------------------------------------------
    async def ig_authorize(self, request: Request) -> Response:
        return self.authorize(
            "instagram", request, new_account=lambda hint: self.new_meta_account("instagram", hint)
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

    # -- Facebook Login (Pages and Marketing API) --------------------------------------------
    async def fb_authorize(self, request: Request) -> Response:
        platform = self.platform_of(request)
        return self.authorize(
            platform, request, new_account=lambda hint: self.new_meta_account(platform, hint)
        )

    async def fb_token(self, request: Request) -> Response:
        platform = self.platform_of(request)
        params = dict(request.query_params)
        if request.method == "POST":
            params.update({k: str(v) for k, v in (await request.form()).items()})
        if not self.client_ok(platform, params.get("client_id"), params.get("client_secret")):
            return graph_error(400, 100, "Error validating client secret.")
        ttl_short, ttl_long = 2 * 3600, 60 * 24 * 3600
        if params.get("grant_type") == "fb_exchange_token":
            old = self.state.token(platform, params.get("fb_exchange_token"), ("user",))
            if old is None:
                return graph_error(400, 190, "Error validating access token: Session has expired.", 463)
            token = self.state.issue(platform, old.account_id, "user", ttl_long, prefix="EAAL")
            return JSONResponse({"access_token": token.value, "token_type": "bearer", "expires_in": ttl_long})
        entry = self.redeem(platform, params.get("code"), params.get("redirect_uri"))
        if entry is None:
            return graph_error(400, 100, "This authorization code has been used or has expired.", 36009)
        token = self.state.issue(platform, entry.account_id, "user", ttl_short, prefix="EAAS")
        return JSONResponse({"access_token": token.value, "token_type": "bearer", "expires_in": ttl_short})

    # -- Graph nodes -------------------------------------------------------------------------
    def kinds(self, platform: str) -> tuple[str, ...]:
        return {"instagram": ("access", "short"), "facebook": ("page", "user")}.get(
            platform, ("access", "user")
        )

    async def graph_node(self, request: Request) -> Response:
        platform = self.platform_of(request)
        return await self.api(platform, request, self._node, kinds=self.kinds(platform))

    async def graph_edge(self, request: Request) -> Response:
        platform = self.platform_of(request)
        return await self.api(platform, request, self._edge, kinds=self.kinds(platform))

    async def _node(self, call: Call) -> Response:
        account = call.account
        assert account is not None
        node = call.request.path_params["node"]
        method = call.request.method
        fields = str(call.params().get("fields", "")).split(",")
        if method == "DELETE":
            if call.platform == "instagram":
                # The Instagram API with Instagram Login has no way to delete media.
                return graph_error(400, 3, "(#3) Application does not have the capability to make this API call.")
            if node in account.posts:
                account.posts.pop(node)
                self.record(call, "delete_post", node, None, node)
                return JSONResponse({"success": True})
            return not_found(node, "delete")
        if method == "POST":
            return not_found(node, "post")
        if call.platform == "instagram":
            return self._ig_node(account, node, fields)
        if call.platform == "facebook":
            return self._fb_node(call, account, node, fields)
        if call.platform == "whatsapp" and node == account.id:
            return JSONResponse(
                {
                    "display_phone_number": account.username,
                    "verified_name": account.display_name,
                    "id": account.id,
                    "quality_rating": "GREEN",
                }
            )
        if node == "me":
            return JSONResponse(
                {"id": account.extra.get("user_id", account.id), "name": account.display_name}
            )
        return not_found(node)

    def _ig_node(self, account: Account, node: str, fields: list[str]) -> Response:
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
            return JSONResponse({"id": node, "permalink": post["permalink"], "caption": post.get("text")})
        contact = account.contacts.get(node)
        if contact is not None:
            return JSONResponse({"name": contact.name, "username": contact.handle, "id": contact.id})
        return not_found(node)

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
            return JSONResponse({"id": node, "message": post.get("text"), "permalink_url": post["permalink"]})
        contact = account.contacts.get(node)
        if contact is not None:
            first, _, last = (contact.name or "").partition(" ")
            return JSONResponse(
                {"first_name": first, "last_name": last, "name": contact.name, "id": contact.id}
            )
        return not_found(node)

    # -- Graph edges -------------------------------------------------------------------------
    async def _edge(self, call: Call) -> Response:
        account = call.account
        assert account is not None
        node, edge = call.request.path_params["node"], call.request.path_params["edge"]
        method = call.request.method
        adopted = call.platform == "whatsapp" and account.extra.get("waba_id") is None
        if adopted and node.isdigit() and node != account.id:
            account.extra["waba_id"] = node  # a number made from a test credential joins the first WABA asked
        own = node == account.id or (call.platform == "whatsapp" and node == account.extra.get("waba_id"))
        if method == "POST" and edge == "subscribed_apps" and own:
            fields = str(call.params().get("subscribed_fields", "messages")).split(",")
            account.subscribed_fields = [f for f in fields if f]
            return JSONResponse({"success": True})
        if call.platform in ("instagram", "facebook"):
            if method == "POST" and edge == "messages" and node == account.id:
                return self._messenger_send(call, account)
            if method == "POST" and edge == "comments" and node in account.posts:
                return self._comment_on_post(call, account, node)
            if method == "POST" and edge in ("replies", "comments") and node in account.comments:
                if (call.platform == "instagram") != (edge == "replies"):
                    return not_found(node, "post")
                return self._comment_reply(call, account, node)
        if call.platform == "instagram" and node == account.id:
            if method == "GET" and edge == "conversations":
                return self._ig_conversations(call.request, account)
            if method == "GET" and edge == "media":
                return graph_page(call.request, [
                    {"id": pid, "caption": post.get("text"), "permalink": post.get("permalink")}
                    for pid, post in reversed(list(account.posts.items())) if not post.get("story")])
            if method == "GET" and edge == "stories":
                return graph_page(call.request, [
                    {"id": pid, "permalink": post.get("permalink")}
                    for pid, post in reversed(list(account.posts.items())) if post.get("story")])
            if method == "POST" and edge == "media":
                return self._ig_container(call, account)
            if method == "POST" and edge == "media_publish":
                return self._ig_publish(call, account)
        if call.platform == "facebook":
            if method == "GET" and node == "me" and edge == "accounts":
                if call.token is None or call.token.kind != "user":
                    return graph_error(400, 190, "A user access token is required to request this resource.")
                page = self.state.issue("facebook", account.id, "page", None, prefix="EAAP")
                return JSONResponse(
                    {
                        "data": [
                            {
                                "id": account.id,
                                "name": account.display_name,
                                "username": account.username,
                                "access_token": page.value,
                                "category": "Brand",
                                "tasks": ["MANAGE", "CREATE_CONTENT", "MESSAGING"],
                            }
                        ]
                    }
                )
            if method == "POST" and node == account.id and edge in ("feed", "photos", "videos"):
                return self._fb_publish(call, account, edge)
            if method == "GET" and node == account.id and edge == "published_posts":
                return graph_page(call.request, [
                    {"id": pid, "message": post.get("text"), "permalink_url": post.get("permalink")}
                    for pid, post in reversed(list(account.posts.items()))])
        if call.platform == "whatsapp":
            if method == "POST" and edge == "messages" and node == account.id:
                return self._wa_send(call, account)
            if method == "GET" and edge == "message_templates" and node == account.extra.get("waba_id"):
                return graph_page(call.request, [{"id": f"{node}{n:03d}", **t} for n, t in enumerate(WA_TEMPLATES)])
            if method == "GET" and edge == "phone_numbers" and node == account.extra.get("waba_id"):
                numbers = self.state.accounts_where("whatsapp", lambda a: a.extra.get("waba_id") == node)
                return graph_page(call.request, [
                    {"id": number.id, "display_phone_number": number.username,
                     "verified_name": number.display_name, "quality_rating": "GREEN"}
                    for number in sorted(numbers, key=lambda a: a.id)
                ])
        if call.platform == "meta_ads":
            if method == "GET" and node == "me" and edge == "adaccounts":
                return JSONResponse(
                    {
                        "data": [
                            {
                                "id": account.id,
                                "account_id": account.id.removeprefix("act_"),
                                "name": account.display_name,
                            }
                        ]
                    }
                )
            if method == "POST" and node == account.id and edge == "adcreatives":
                return self._ads_creative(call, account)
        return not_found(f"{node}/{edge}", method.lower())

    # -- Messenger / Instagram messaging -----------------------------------------------------
    def _messenger_send(self, call: Call, account: Account) -> Response:
        params = call.params()
        recipient = as_obj(params.get("recipient"))
        message = as_obj(params.get("message"))
        platform = call.platform
        now = time.time()
        if not isinstance(recipient, dict) or not isinstance(message, dict):
            return graph_error(400, 100, "(#100) param recipient and message must be objects", 2018001)
        comment = None
        if "comment_id" in recipient:
            comment = account.comments.get(str(recipient["comment_id"]))
            if comment is None:
                return graph_error(400, 100, "(#100) Invalid comment_id", 2018292)
            if comment.private_replied:
                return graph_error(
                    400, 10, "(#10) A private reply has already been sent for this comment.", 2018108
                )
            if now - comment.created > PRIVATE_REPLY_SECONDS:
                return graph_error(
                    400, 10, "(#10) This message is sent outside of allowed window.", WINDOW_SUBCODE[platform]
                )
            to, contact_id = comment.id, comment.from_id
        else:
            contact_id = str(recipient.get("id", ""))
            contact = account.contacts.get(contact_id)
            if contact is None:
                return graph_error(
                    400, 100, "(#100) No matching user found", 2018001 if platform == "facebook" else 2534014
                )
            if contact.last_inbound is None or now - contact.last_inbound > WINDOW_SECONDS:
                return graph_error(
                    400, 10, "(#10) This message is sent outside of allowed window.", WINDOW_SUBCODE[platform]
                )
            to = contact_id
        text = message.get("text")
        attachment = message.get("attachment")
        if attachment is not None:
            refusal = self._template_refusal(platform, attachment, comment is not None)
            if refusal is not None:
                return graph_error(400, 100, refusal)
            text = attachment["payload"]["text"]
        elif not isinstance(text, str) or not text:
            return graph_error(400, 100, "(#100) The parameter message[text] is required", 2018001)
        if len(text) > TEXT_LIMITS[platform]:
            return graph_error(
                400,
                100,
                f"(#100) Length of param message[text] must be less than or equal to {TEXT_LIMITS[platform]}",
                2018001,
            )
        mid = ("aWdfZAG1" if platform == "instagram" else "m_") + random_token(40)
        kind = "dm"
        if comment is not None:
            comment.private_replied = True
            self.state.touch_comment(account, comment.id)
            kind = "private_reply"
            contact = account.contacts.setdefault(contact_id, Contact(contact_id, comment.from_handle))
        self._touch(account, contact_id)
        self.record(call, kind, to, text, mid, call.body_json() if call.raw else call.params())
        return JSONResponse({"recipient_id": contact_id, "message_id": mid})

    @staticmethod
    def _template_refusal(platform: str, attachment: Any, private_reply: bool) -> str | None:
        if not isinstance(attachment, dict) or attachment.get("type") != "template":
            return "(#100) Unsupported attachment type"
        if platform == "instagram" and private_reply:
            return "(#100) Templates are not supported in private replies: send text"
        payload = attachment.get("payload") or {}
        if payload.get("template_type") != "button" or not isinstance(payload.get("text"), str):
            return "(#100) param message[attachment][payload] must be a button template with text"
        if len(payload["text"]) > 640:
            return "(#100) param message[attachment][payload][text] must be at most 640 characters"
        buttons = payload.get("buttons")
        if not isinstance(buttons, list) or not 1 <= len(buttons) <= 3:
            return "(#100) param message[attachment][payload][buttons] must have 1 to 3 buttons"
        for i, button in enumerate(buttons):
            if not isinstance(button, dict) or button.get("type") != "web_url":
                return f"(#100) param message[attachment][payload][buttons][{i}][type] must be web_url"
            title = button.get("title")
            if not isinstance(title, str) or not 1 <= len(title) <= 20:
                return (
                    f"(#100) param message[attachment][payload][buttons][{i}][title] "
                    "must be at most 20 characters"
                )
            if bad_button_url(button.get("url")):
                return f"(#100) param message[attachment][payload][buttons][{i}][url] is not a valid URL"
        return None

    def _touch(self, account: Account, contact_id: str) -> None:
        contact = account.contacts.get(contact_id)
        if contact is not None:
            contact.updated = time.time()
            if not contact.conversation_id:
                contact.conversation_id = "aWdfZAG06" + random_token(24)
            self.state.touch_contact(account, contact_id)

    def _comment_on_post(self, call: Call, account: Account, post_id: str) -> Response:
        """`POST /{media-or-post-id}/comments`: a comment of the account under its own post."""
        text = call.params().get("message")
        if not isinstance(text, str) or not text.strip():
            return graph_error(400, 100, "(#100) The parameter message is required", 2018001)
        limit = 2200 if call.platform == "instagram" else 8000
        if len(text) > limit:
            return graph_error(400, 100, f"(#100) A comment is at most {limit} characters", 2207010)
        comment_id = f"{17800000000000000 + self.state.serial()}"
        if call.platform == "facebook":
            comment_id = f"{post_id.split('_')[-1]}_{comment_id}"
        self.record(call, "comment", post_id, text, comment_id)
        return JSONResponse({"id": comment_id})

    def _comment_reply(self, call: Call, account: Account, comment_id: str) -> Response:
        text = call.params().get("message")
        if not isinstance(text, str) or not text:
            return graph_error(400, 100, "(#100) The parameter message is required", 2018001)
        reply_id = f"{self.state.serial()}{int(time.time())}"
        if call.platform == "facebook":
            reply_id = f"{account.comments[comment_id].media_id.split('_')[-1]}_{reply_id}"
        self.record(call, "public_reply", comment_id, text, reply_id)
        return JSONResponse({"id": reply_id})

    def _ig_conversations(self, request: Request, account: Account) -> Response:
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
        return graph_page(request, data)

    # -- Instagram publishing ----------------------------------------------------------------
    def _ig_container(self, call: Call, account: Account) -> Response:
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

    def _ig_publish(self, call: Call, account: Account) -> Response:
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
        account.posts[media_id] = {"text": caption, "permalink": permalink, "story": story}
        self.record(
            call,
            "post",
            media_id,
            caption,
            media_id,
            {"container": container["params"], "media_publish": call.payload()},
        )
        return JSONResponse({"id": media_id})

    # -- Facebook publishing -----------------------------------------------------------------
    def _fb_publish(self, call: Call, account: Account, edge: str) -> Response:
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
            post_id = f"{13000000000000000 + serial}"
            text = params.get("description")
            answer = {"id": post_id}
        else:
            text = params.get("message")
            if not text and not params.get("link") and not params.get("attached_media"):
                return graph_error(400, 100, "(#100) Missing message or attachment", 1386001)
            post_id = f"{account.id}_{14000000000000000 + serial}"
            answer = {"id": post_id}
        account.posts[post_id] = {"text": text, "permalink": f"https://www.facebook.com/{post_id}"}
        self.record(call, "post", post_id, text, post_id)
        return JSONResponse(answer)

    # -- WhatsApp ----------------------------------------------------------------------------
    def _wa_send(self, call: Call, account: Account) -> Response:
        body = call.params()
        if body.get("messaging_product") != "whatsapp":
            return graph_error(400, 100, "(#100) The parameter messaging_product is required.", whatsapp=True)
        to = str(body.get("to", "")).lstrip("+")
        kind = body.get("type", "text")
        if self.rate_limits and self.state.over_rate("whatsapp", account.id, 80):
            return graph_error(
                429,
                130429,
                "(#130429) Rate limit hit",
                whatsapp=True,
                details="Cloud API message throughput has been reached.",
                headers={"Retry-After": "1"},
            )
        if not to.isdigit():
            return graph_error(
                400, 100, "(#100) Invalid parameter", whatsapp=True, details="to must be a phone number"
            )
        contact = account.contacts.get(to)
        in_window = (
            contact is not None
            and contact.last_inbound is not None
            and (time.time() - contact.last_inbound <= WINDOW_SECONDS)
        )
        if kind != "template" and not in_window:
            # As WhatsApp does: the send is accepted, and the refusal arrives later as a `failed`
            # status webhook. Nothing reaches the person.
            wamid = "wamid." + random_token(48)
            task = asyncio.get_running_loop().create_task(self._wa_report_failed(account, wamid, to))
            self._background.add(task)
            task.add_done_callback(self._background.discard)
            return JSONResponse(
                {"messaging_product": "whatsapp", "contacts": [{"input": body.get("to"), "wa_id": to}],
                 "messages": [{"id": wamid}]}
            )
        if kind == "text":
            text = (body.get("text") or {}).get("body")
            if not isinstance(text, str) or not text or len(text) > 4096:
                return graph_error(
                    400,
                    100,
                    "(#100) Invalid parameter",
                    whatsapp=True,
                    details="text.body must be 1 to 4096 characters",
                )
        elif kind == "interactive":
            interactive = body.get("interactive") or {}
            text = (interactive.get("body") or {}).get("text")
            parameters = (interactive.get("action") or {}).get("parameters") or {}
            label = parameters.get("display_text")
            if (
                interactive.get("type") != "cta_url"
                or not isinstance(text, str)
                or not 1 <= len(text) <= 1024
                or not isinstance(label, str)
                or not 1 <= len(label) <= 20
                or bad_button_url(parameters.get("url"))
            ):
                return graph_error(
                    400,
                    131009,
                    "(#131009) Parameter value is not valid",
                    whatsapp=True,
                    details="interactive cta_url: body text 1..1024, display_text 1..20, a public URL",
                )
        elif kind in ("image", "video"):
            # Media sent by link: WhatsApp fetches it; the caption is at most 1,024 characters.
            media = body.get(kind) or {}
            text = media.get("caption") if isinstance(media, dict) else None
            link = media.get("link") if isinstance(media, dict) else None
            if (not isinstance(link, str) or not link.startswith(("https://", "http://"))
                    or (text is not None and (not isinstance(text, str) or len(text) > 1024))):
                return graph_error(400, 131009, "(#131009) Parameter value is not valid", whatsapp=True,
                                   details=f"{kind}.link must be an http(s) URL; {kind}.caption at most 1024 "
                                           "characters")
        elif kind == "template":
            rendered = _render_template(body.get("template"))
            if isinstance(rendered, Response):
                return rendered
            text = rendered
        else:
            return graph_error(400, 131051, "Unsupported message type", whatsapp=True)
        wamid = "wamid." + random_token(48)
        self.record(call, "dm", to, text, wamid)
        return JSONResponse(
            {
                "messaging_product": "whatsapp",
                "contacts": [{"input": body.get("to"), "wa_id": to}],
                "messages": [{"id": wamid}],
            }
        )

    async def _wa_report_failed(self, account: Account, wamid: str, to: str) -> None:
        await asyncio.sleep(STATUS_DELAY_SECONDS)
        if "messages" not in account.subscribed_fields:
            return
        status = {
            "id": wamid, "status": "failed", "timestamp": str(int(time.time())), "recipient_id": to,
            "errors": [{
                "code": 131047, "title": "Re-engagement message", "message": "Re-engagement message",
                "error_data": {"details": "Message failed to send because more than 24 hours have passed "
                                          "since the customer last replied to this number."},
            }],
        }
        value = {
            "messaging_product": "whatsapp",
            "metadata": {"display_phone_number": account.username, "phone_number_id": account.id},
            "statuses": [status],
        }
        payload = {"object": "whatsapp_business_account",
                   "entry": [{"id": account.extra["waba_id"], "changes": [{"value": value, "field": "messages"}]}]}
        body = json.dumps(payload, separators=(",", ":")).encode()
        headers = {"X-Hub-Signature-256": meta_signature(self.config.meta_app_secret, body)}
        await self.deliver(f"{self.config.hooks_base_url.rstrip('/')}/hooks/whatsapp", body, headers)

    # -- Marketing API -----------------------------------------------------------------------
    def _ads_creative(self, call: Call, account: Account) -> Response:
        params = call.params()
        spec = as_obj(params.get("object_story_spec"))
        if (
            not isinstance(spec, dict)
            or not spec.get("page_id")
            or not isinstance(spec.get("link_data"), dict)
        ):
            return graph_error(
                400, 100, "(#100) object_story_spec with page_id and link_data is required", 1443048
            )
        creative_id = f"{23800000000000000 + self.state.serial()}"
        text = spec["link_data"].get("message")
        account.posts[creative_id] = {"text": text, "permalink": None}
        self.record(call, "post", creative_id, text, creative_id)
        return JSONResponse({"id": creative_id})
