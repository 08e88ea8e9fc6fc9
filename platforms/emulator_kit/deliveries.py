"""Control endpoints of the sandbox (CONTRACT section 5) that make a platform send a webhook:
inbound-message, comment, native-post, echo and receipt. Webhooks are built in each platform's own
shape, signed the platform's way and POSTed to the service's `/hooks/{platform}`."""

from __future__ import annotations

import json
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from platforms.base import PLATFORMS
from platforms.emulator_kit.answer import JSONResponse
from platforms.emulator_kit.controls import Controls, check, timestamp
from platforms.emulator_kit.errors import ControlInvalid, control_error
from platforms.emulator_kit.state import Account, Comment, Contact, random_token
from platforms.graph.inbound import meta_signature
from platforms.tiktok.emulator import business_open_id
from platforms.tiktok.inbound import tiktok_signature
from platforms.x.inbound import x_signature

META_HOOKS = ("instagram", "facebook", "whatsapp")
INBOUND_DM = ("instagram", "facebook", "whatsapp", "telegram", "x", "tiktok")
COMMENT_HOOKS = ("instagram", "facebook")


def _whatsapp_payload(account: Account, contact: Contact, text: str, at: float) -> dict[str, Any]:
    wamid = "wamid." + random_token(48)
    value = {
        "messaging_product": "whatsapp",
        "metadata": {
            "display_phone_number": account.username.replace(" ", "").replace("-", "").lstrip("+"),
            "phone_number_id": account.id,
        },
        "contacts": [{"profile": {"name": contact.name or contact.id}, "wa_id": contact.id}],
        "messages": [
            {
                "from": contact.id,
                "id": wamid,
                "timestamp": str(int(at)),
                "text": {"body": text},
                "type": "text",
            }
        ],
    }
    return {
        "object": "whatsapp_business_account",
        "entry": [{"id": account.extra["waba_id"], "changes": [{"value": value, "field": "messages"}]}],
    }

class WebhookControls(Controls):
    def webhook_control_routes(self) -> list[Route]:
        routes = []
        for platform in PLATFORMS:
            routes += [
                Route(f"/{platform}/inbound-message", self.c_inbound, methods=["POST"]),
                Route(f"/{platform}/comment", self.c_comment, methods=["POST"]),
                Route(f"/{platform}/native-post", self.c_native_post, methods=["POST"]),
                Route(f"/{platform}/echo", self.c_echo, methods=["POST"]),
                Route(f"/{platform}/receipt", self.c_receipt, methods=["POST"]),
            ]
        routes.append(Route("/x/account-activity", self.c_account_activity, methods=["POST"]))
        return routes

    # -- webhook delivery --------------------------------------------------------------------
    async def _send_hook(
        self, platform: str, account: Account, payload: dict[str, Any], times: int = 1
    ) -> Response:
        body = json.dumps(payload, separators=(",", ":")).encode()
        if platform == "telegram":
            if not account.webhook_url:
                return control_error(409, "no_webhook", "This bot has no webhook: call setWebhook first.")
            headers = (
                {"X-Telegram-Bot-Api-Secret-Token": account.webhook_secret} if account.webhook_secret else {}
            )
            url = account.webhook_url
        else:
            field = "messages" if platform != "facebook" else "feed"
            wanted = {
                "instagram": ("messages", "comments"),
                "facebook": ("messages", "feed"),
                "whatsapp": ("messages",),
            }
            if not set(account.subscribed_fields) & set(wanted[platform]):
                return control_error(
                    409, "not_subscribed", f"The account is not subscribed to {field} webhooks."
                )
            # An Instagram Login app's webhooks are signed with its own secret, as Instagram does.
            own = self.config.instagram_app_secret if platform == "instagram" else ""
            # A WhatsApp number's webhooks come from the app that subscribed it, signed with its secret.
            app = account.extra.get("subscribed_app") if platform == "whatsapp" else None
            secret = own or self.config.meta_secret_for(app)
            headers = {"X-Hub-Signature-256": meta_signature(secret, body)}
            url = f"{self.config.hooks_base_url.rstrip('/')}/hooks/{platform}"
        status, error = await self.deliver(url, body, headers, times)
        if error is not None:
            return control_error(502, "hook_unreachable", f"The webhook could not be delivered ({error}).")
        return JSONResponse(
            {
                "delivered": status is not None and 200 <= status < 300,
                "hookStatus": status,
                "payload": payload,
            }
        )

    # -- inbound message ---------------------------------------------------------------------
    async def c_inbound(self, request: Request) -> Response:
        return await self._guard(request, self._inbound)

    async def _inbound(self, platform: str, request: Request) -> Response:
        body = check(
            await self._body(request),
            {
                "accountId": (str, True),
                "from": (dict, True),
                "text": (str, True),
                "storyReply": (bool, False),
                "timestamp": ((str, int, float), False),
                "deliveries": (int, False),
                "storyId": (str, False),
            },
        )
        sender = body["from"]
        if not isinstance(sender.get("id"), str | int) or str(sender.get("id")) == "":
            raise ControlInvalid([{"field": "from.id", "message": "is required"}])
        if platform not in INBOUND_DM:
            raise ControlInvalid([{"field": "accountId", "message": f"{platform} sends no DM webhooks"}])
        if body.get("storyReply") and platform != "instagram":
            raise ControlInvalid([{"field": "storyReply", "message": "only Instagram has story replies"}])
        times = body.get("deliveries", 1)
        if not 1 <= times <= 5:
            raise ControlInvalid([{"field": "deliveries", "message": "must be 1..5"}])
        try:
            account = await self._account(platform, body["accountId"])
        except LookupError:
            return self._unknown(body["accountId"])
        if platform == "x":
            return await self._x_inbound(account, sender, body["text"], times)
        if platform == "tiktok":
            return await self._tiktok_inbound(account, sender, body["text"], timestamp(body.get("timestamp")), times)
        at = timestamp(body.get("timestamp"))
        contact_id = str(sender["id"]).lstrip("+") if platform == "whatsapp" else str(sender["id"])
        with self.state.lock:
            contact = account.contacts.setdefault(contact_id, Contact(contact_id))
            contact.handle = sender.get("handle") or contact.handle
            contact.name = sender.get("name") or contact.name
            contact.last_inbound = (
                max(contact.last_inbound or 0.0, at) if body.get("timestamp") is None else at
            )
            contact.updated = at
            if not contact.conversation_id:
                contact.conversation_id = "aWdfZAG06" + random_token(24)
        self.state.touch_contact(account, contact_id)
        payload = self._message_payload(platform, account, contact, body, at)
        return await self._send_hook(platform, account, payload, times)

    def _message_payload(
        self, platform: str, account: Account, contact: Contact, body: dict[str, Any], at: float
    ) -> dict[str, Any]:
        """The platform's webhook for a contact's message, in its own shape."""
        if platform in ("instagram", "facebook"):
            return self._messaging_payload(platform, account, contact, body, at)
        if platform == "whatsapp":
            return _whatsapp_payload(account, contact, body["text"], at)
        return self._telegram_update(contact, body["text"], at)

    def _messaging_payload(
        self, platform: str, account: Account, contact: Contact, body: dict[str, Any], at: float
    ) -> dict[str, Any]:
        message: dict[str, Any] = {
            "mid": ("aWdfZAG1" if platform == "instagram" else "m_") + random_token(40),
            "text": body["text"],
        }
        if body.get("storyReply"):
            story_id = body.get("storyId") or str(18100000000000000 + self.state.serial())
            message["reply_to"] = {
                "story": {"url": f"https://lookaside.fbsbx.example/story/{story_id}", "id": story_id}
            }
        event = {
            "sender": {"id": contact.id},
            "recipient": {"id": account.id},
            "timestamp": int(at * 1000),
            "message": message,
        }
        return {
            "object": "instagram" if platform == "instagram" else "page",
            "entry": [{"time": int(time.time() * 1000), "id": account.id, "messaging": [event]}],
        }

    def _telegram_update(self, contact: Contact, text: str, at: float) -> dict[str, Any]:
        user: dict[str, Any] = {
            "id": int(contact.id) if contact.id.lstrip("-").isdigit() else contact.id,
            "is_bot": False,
            "first_name": (contact.name or contact.id).split(" ")[0],
        }
        if contact.name and " " in contact.name:
            user["last_name"] = contact.name.split(" ", 1)[1]
        if contact.handle:
            user["username"] = contact.handle.lstrip("@")
        chat = {k: v for k, v in user.items() if k != "is_bot"} | {"type": "private"}
        return {
            "update_id": 100000000 + self.state.serial(),
            "message": {
                "message_id": self.state.serial(),
                "from": user,
                "chat": chat,
                "date": int(at),
                "text": text,
            },
        }

    # -- a post made in the platform's own app ---------------------------------------------------
    async def c_native_post(self, request: Request) -> Response:
        """`{accountId, text}`: the account posts on the platform itself (not through the service); the
        platform tells the service by its webhook: Telegram a `channel_post` update, Facebook a Page
        `feed` change (`item: status`, `verb: add`)."""

        async def run(platform: str, request: Request) -> Response:
            body = check(await self._body(request), {"accountId": (str, True), "text": (str, True),
                                                     "chatId": (str, False)})
            if platform not in ("telegram", "facebook"):
                raise ControlInvalid([{"field": "accountId", "message": f"{platform} sends no webhook for new posts"}])
            try:
                account = await self._account(platform, body["accountId"])
            except LookupError:
                return self._unknown(body["accountId"])
            at = time.time()
            if platform == "telegram":
                chat = body.get("chatId") or "@sandboxchannel"
                message_id = self.state.serial()
                post_id = f"{chat}:{message_id}"
                account.posts[post_id] = {"text": body["text"]}
                payload: dict[str, Any] = {"update_id": 100000000 + self.state.serial(), "channel_post": {
                    "message_id": message_id, "date": int(at), "text": body["text"],
                    "chat": {"id": -1001000000000 - self.state.serial(), "type": "channel",
                             "username": chat.lstrip("@"), "title": chat.lstrip("@")}}}
            else:
                post_id = f"{account.id}_{14000000000000000 + self.state.serial()}"
                account.posts[post_id] = {"text": body["text"], "permalink": f"https://www.facebook.com/{post_id}",
                                          "created": at}
                change = {"field": "feed", "value": {
                    "item": "status", "verb": "add", "post_id": post_id, "message": body["text"],
                    "from": {"id": account.id, "name": account.display_name}, "created_time": int(at)}}
                payload = {"object": "page", "entry": [{"id": account.id, "time": int(at), "changes": [change]}]}
            answer = await self._send_hook(platform, account, payload)
            if answer.status_code >= 300:
                return answer
            return JSONResponse({"platformPostId": post_id})

        return await self._guard(request, run)

    # -- comment -----------------------------------------------------------------------------
    async def c_comment(self, request: Request) -> Response:
        return await self._guard(request, self._comment)

    async def _comment(self, platform: str, request: Request) -> Response:
        body = check(
            await self._body(request),
            {
                "accountId": (str, True),
                "mediaId": (str, True),
                "commentId": (str, False),
                "from": (dict, True),
                "text": (str, True),
                "timestamp": ((str, int, float), False),
                "deliveries": (int, False),
                "parentId": (str, False),
            },
        )
        if platform not in (*COMMENT_HOOKS, "youtube"):
            raise ControlInvalid([{"field": "accountId", "message": f"{platform} sends no comment webhooks"}])
        sender = body["from"]
        if not sender.get("id"):
            raise ControlInvalid([{"field": "from.id", "message": "is required"}])
        try:
            account = await self._account(platform, body["accountId"])
        except LookupError:
            return self._unknown(body["accountId"])
        if platform == "youtube":
            return self._youtube_comment(account, body)
        at = timestamp(body.get("timestamp"))
        comment_id = body.get("commentId") or (
            str(17850000000000000 + self.state.serial())
            if platform == "instagram"
            else f"{body['mediaId'].split('_')[-1]}_{self.state.serial()}"
        )
        comment = Comment(
            comment_id, body["mediaId"], str(sender["id"]), sender.get("handle"), body["text"], at
        )
        with self.state.lock:
            account.comments[comment_id] = comment
        self.state.touch_comment(account, comment_id)
        if platform == "instagram":
            value: dict[str, Any] = {
                "from": {"id": comment.from_id, "username": comment.from_handle},
                "media": {"id": comment.media_id, "media_product_type": "FEED"},
                "id": comment_id,
                "text": comment.text,
            }
            if body.get("parentId"):
                value["parent_id"] = body["parentId"]
            payload = {
                "object": "instagram",
                "entry": [
                    {"id": account.id, "time": int(at), "changes": [{"field": "comments", "value": value}]}
                ],
            }
        else:
            value = {
                "from": {"id": comment.from_id, "name": sender.get("name") or comment.from_handle},
                "post": {"id": comment.media_id, "status_type": "added_photos", "is_published": True},
                "message": comment.text,
                "post_id": comment.media_id,
                "comment_id": comment_id,
                "created_time": int(at),
                "item": "comment",
                "parent_id": body.get("parentId") or comment.media_id,
                "verb": "add",
            }
            payload = {
                "object": "page",
                "entry": [
                    {"id": account.id, "time": int(at), "changes": [{"field": "feed", "value": value}]}
                ],
            }
        response = await self._send_hook(platform, account, payload, body.get("deliveries", 1))
        if isinstance(response, JSONResponse) and response.status_code == 200:
            data = json.loads(bytes(response.body))
            data["commentId"] = comment_id
            return JSONResponse(data)
        return response

    # -- echo and receipts -------------------------------------------------------------------
    async def c_echo(self, request: Request) -> Response:
        return await self._guard(request, self._echo)

    async def _echo(self, platform: str, request: Request) -> Response:
        body = check(
            await self._body(request),
            {"accountId": (str, True), "to": (dict, True), "text": (str, True), "appId": (str, False)},
        )
        if platform not in ("instagram", "facebook"):
            raise ControlInvalid([{"field": "accountId", "message": f"{platform} sends no echo webhooks"}])
        try:
            account = await self._account(platform, body["accountId"])
        except LookupError:
            return self._unknown(body["accountId"])
        message: dict[str, Any] = {"mid": "m_" + random_token(40), "text": body["text"], "is_echo": True}
        if body.get("appId"):
            message["app_id"] = int(body["appId"]) if body["appId"].isdigit() else body["appId"]
        event = {
            "sender": {"id": account.id},
            "recipient": {"id": str(body["to"].get("id"))},
            "timestamp": int(time.time() * 1000),
            "message": message,
        }
        payload = {
            "object": "instagram" if platform == "instagram" else "page",
            "entry": [{"time": int(time.time() * 1000), "id": account.id, "messaging": [event]}],
        }
        return await self._send_hook(platform, account, payload)

    async def c_receipt(self, request: Request) -> Response:
        return await self._guard(request, self._receipt)

    async def _receipt(self, platform: str, request: Request) -> Response:
        body = check(
            await self._body(request),
            {"accountId": (str, True), "from": (dict, True), "kind": (str, True), "messageIds": (list, True)},
        )
        if body["kind"] not in ("delivery", "read"):
            raise ControlInvalid([{"field": "kind", "message": "must be delivery or read"}])
        if platform not in META_HOOKS:
            raise ControlInvalid([{"field": "accountId", "message": f"{platform} sends no receipt webhooks"}])
        try:
            account = await self._account(platform, body["accountId"])
        except LookupError:
            return self._unknown(body["accountId"])
        contact = str(body["from"].get("id"))
        now = int(time.time())
        ids = [str(m) for m in body["messageIds"]]
        if platform == "whatsapp":
            state = "delivered" if body["kind"] == "delivery" else "read"
            statuses = [
                {"id": m, "status": state, "timestamp": str(now), "recipient_id": contact} for m in ids
            ]
            value = {
                "messaging_product": "whatsapp",
                "metadata": {"display_phone_number": account.username, "phone_number_id": account.id},
                "statuses": statuses,
            }
            payload: dict[str, Any] = {
                "object": "whatsapp_business_account",
                "entry": [
                    {"id": account.extra["waba_id"], "changes": [{"value": value, "field": "messages"}]}
                ],
            }
        else:
            if body["kind"] == "delivery":
                receipt: dict[str, Any] = {"mids": ids, "watermark": now * 1000}
            elif platform == "instagram":
                receipt = {"mid": ids[0] if ids else ""}
            else:
                receipt = {"watermark": now * 1000}
            event = {
                "sender": {"id": contact},
                "recipient": {"id": account.id},
                "timestamp": now * 1000,
                body["kind"]: receipt,
            }
            payload = {
                "object": "instagram" if platform == "instagram" else "page",
                "entry": [{"time": now * 1000, "id": account.id, "messaging": [event]}],
            }
        return await self._send_hook(platform, account, payload)

    # -- X, TikTok and YouTube conversations ------------------------------------------------------
    async def _x_inbound(self, account: Account, sender: dict[str, Any], text: str, times: int) -> Response:
        """The contact's DM joins the account's DM events (`GET /2/dm_events` lists it); an account
        subscribed to Account Activity also gets it by webhook, signed as X signs."""
        contact_id = str(sender["id"])
        if not contact_id.isdigit() or contact_id == account.id:
            raise ControlInvalid([{"field": "from.id", "message": "must be another X user's numeric id"}])
        user = {"id": contact_id, "username": sender.get("handle") or f"user{contact_id}",
                "name": sender.get("name") or sender.get("handle") or contact_id}
        event_id = str(1900000000000000000 + self.state.serial())
        event = self.x_add_dm_event(account, event_id, contact_id, account.id, text, user)  # type: ignore[attr-defined]
        if not account.extra.get("activity_subscribed"):
            return JSONResponse({"delivered": False, "keptForPoll": True, "dmEventId": event_id})
        payload = {
            "for_user_id": account.id,
            "direct_message_events": [{
                "type": "message_create", "id": event_id, "created_timestamp": str(int(self.now() * 1000)),
                "message_create": {"target": {"recipient_id": account.id}, "sender_id": contact_id,
                                   "message_data": {"text": text, "entities": {"hashtags": [], "symbols": [],
                                                                               "user_mentions": [], "urls": []}}},
            }],
            "users": {contact_id: {"id": contact_id, "name": user["name"], "screen_name": user["username"]}},
        }
        body = json.dumps(payload, separators=(",", ":")).encode()
        headers = {"x-twitter-webhooks-signature": x_signature(self.config.x_consumer_secret, body)}
        status, error = await self.deliver(f"{self.config.hooks_base_url.rstrip('/')}/hooks/x", body, headers, times)
        if error is not None:
            return control_error(502, "hook_unreachable", f"The webhook could not be delivered ({error}).")
        return JSONResponse({"delivered": status is not None and 200 <= status < 300, "hookStatus": status,
                             "payload": payload, "dmEventId": event["id"]})

    async def c_account_activity(self, request: Request) -> Response:
        """`{accountId, subscribed}`: the app subscribes the X account to Account Activity (its DM
        events come by webhook to `/hooks/x`), or unsubscribes it (they wait for the poll)."""

        async def run(platform: str, request: Request) -> Response:
            body = check(await self._body(request), {"accountId": (str, True), "subscribed": (bool, True)})
            try:
                account = await self._account(platform, body["accountId"])
            except LookupError:
                return self._unknown(body["accountId"])
            account.extra["activity_subscribed"] = body["subscribed"]
            return JSONResponse({"accountId": body["accountId"], "subscribed": body["subscribed"]})

        return await self._guard(request, run)

    async def _tiktok_inbound(self, account: Account, sender: dict[str, Any], text: str, at: float,
                              times: int) -> Response:
        """A person writes to the Business Account: the conversation opens (or its 48 hours start
        again) and TikTok posts `im_receive_msg`, signed with the app's client secret."""
        if account.extra.get("personal"):
            return control_error(409, "not_business", "A personal TikTok account has no Business Messaging.")
        contact_id = str(sender["id"])
        conversations = account.extra.setdefault("tt_conversations", {})
        conversation_id = next((cid for cid, c in conversations.items() if c["from_id"] == contact_id), None)
        if conversation_id is None:
            conversation_id = "tt_conv_" + random_token(20)
        conversations[conversation_id] = {"from_id": contact_id, "last_inbound": at}
        message_id = f"tt_msg_{self.state.serial()}_{random_token(10)}"
        business_id = business_open_id(account)
        content = {
            "conversation_id": conversation_id, "message_id": message_id, "timestamp": int(at * 1000),
            "type": "text", "text": {"body": text}, "from": sender.get("handle") or contact_id,
            "from_user": {"id": contact_id, "role": "personal_account"},
            "to": account.username, "to_user": {"id": business_id, "role": "business_account"},
        }
        # Business Messaging's webhooks are TikTok API for Business's: its app signs them, and they name
        # the account by that app's open_id (the business grant's).
        client = self.config.oauth_clients.get("tiktok_business") or self.config.oauth_clients.get("tiktok")
        payload = {"client_key": client.client_id if client else "", "event": "im_receive_msg",
                   "create_time": int(at), "user_openid": business_id,
                   "content": json.dumps(content, separators=(",", ":"))}
        body = json.dumps(payload, separators=(",", ":")).encode()
        headers = {"TikTok-Signature": tiktok_signature(client.client_secret if client else "", body, int(time.time()))}
        status, error = await self.deliver(f"{self.config.hooks_base_url.rstrip('/')}/hooks/tiktok", body, headers,
                                           times)
        if error is not None:
            return control_error(502, "hook_unreachable", f"The webhook could not be delivered ({error}).")
        return JSONResponse({"delivered": status is not None and 200 <= status < 300, "hookStatus": status,
                             "payload": payload, "conversationId": conversation_id})

    def _youtube_comment(self, account: Account, body: dict[str, Any]) -> Response:
        """A viewer comments on one of the channel's videos (`parentId`: replies in that thread).
        YouTube sends no webhook for comments: the comment waits for `commentThreads.list`."""
        sender = body["from"]
        comment = self.yt_add_comment(  # type: ignore[attr-defined]
            account, video_id=body["mediaId"], author=str(sender["id"]), handle=sender.get("handle"),
            text=body["text"], parent_id=body.get("parentId"), comment_id=body.get("commentId"))
        if comment is None:
            raise ControlInvalid([{"field": "parentId", "message": "is not a comment thread on the channel's videos"}])
        thread_id = comment["snippet"].get("parentId") or comment["id"]
        return JSONResponse({"delivered": False, "keptForPoll": True, "commentId": comment["id"],
                             "threadId": thread_id})
