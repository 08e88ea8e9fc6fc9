"""The Telegram Bot API: the bot token in the path, getMe, webhooks with their secret token,
sendMessage / sendPhoto / sendVideo (to a contact that wrote to the bot, or to a channel) with inline
URL buttons, deleteMessage, getChatMemberCount; about 30 messages a second per bot."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from platforms.emulator_kit.answer import JSONResponse
from platforms.emulator_kit.core import Call, EmulatorBase, PlatformParts, bad_button_url
from platforms.emulator_kit.errors import telegram_error
from platforms.emulator_kit.state import Account, random_token

TELEGRAM_TOKEN = re.compile(r"^(\d{1,19}):AA[A-Za-z0-9_-]{30,40}$")
SECRET_TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,256}$")

# (call, bot account, the call's parameters) -> the answer.
BotMethod = Callable[[Call, Account, dict[str, Any]], Response]


MEDIA_GROUP_TYPES = ("photo", "video", "document", "audio")


def bot_user(account: Account) -> dict[str, Any]:
    return {
        "id": int(account.id),
        "is_bot": True,
        "first_name": account.display_name,
        "username": account.username,
    }


def _as_sent(call: Call, params: dict[str, Any]) -> Any:
    """What a call sent, for `/sandbox/telegram/sent`: a multipart call's fields and files (as read by
    `_tg_multipart`), else its body as received."""
    return params if "multipart/form-data" in call.request.headers.get("content-type", "") else None


def content_refusal(method: str, text: Any, params: dict[str, Any]) -> Response | None:
    """Telegram's refusal of a message's text (4096 characters) or a media's caption (1024)."""
    if method == "sendMessage" and (not isinstance(text, str) or not text.strip()):
        return telegram_error(400, "Bad Request: message text is empty")
    if method == "sendMessage" and isinstance(text, str) and len(text) > 4096:
        return telegram_error(400, "Bad Request: message is too long")
    if method != "sendMessage" and isinstance(text, str) and len(text) > 1024:
        return telegram_error(400, "Bad Request: message caption is too long")
    if method != "sendMessage" and not params.get("photo" if method == "sendPhoto" else "video"):
        return telegram_error(400, "Bad Request: there is no photo in the request")
    return None


def markup_refusal(markup: Any) -> Response | None:
    """Telegram's refusal of an inline keyboard: each button needs a text and a public URL."""
    if markup is None:
        return None
    rows = markup.get("inline_keyboard") if isinstance(markup, dict) else None
    if not isinstance(rows, list):
        return telegram_error(400, "Bad Request: can't parse reply keyboard markup JSON object")
    for row in rows:
        for button in row if isinstance(row, list) else []:
            if not isinstance(button, dict) or not button.get("text"):
                return telegram_error(400, "Bad Request: BUTTON_TEXT_INVALID")
            if "url" in button and bad_button_url(button["url"]):
                return telegram_error(400, "Bad Request: BUTTON_URL_INVALID")
    return None


NOT_ADMIN_PREFIX = "notadmin"


def channel_of(account: Account, chat_id: str, *, create: bool = False) -> dict[str, Any] | None:
    """The sandbox channel `chat_id` (`@name` or `-100…`) names, made on first use (`create`): every
    channel is one the bot administers, except one whose name starts with `notadmin`."""
    digits = chat_id[1:]
    if not (chat_id.startswith("@") or (chat_id.startswith("-100") and digits.isascii() and digits.isdigit())):
        return None
    channels: dict[str, dict[str, Any]] = account.extra.setdefault("channels", {})
    for channel in channels.values():
        if chat_id in (str(channel["id"]), "@" + str(channel.get("username") or "")):
            return channel
    if not create:
        return None
    username = chat_id[1:] if chat_id.startswith("@") else None
    number = int(chat_id) if username is None else -1001000000000 - len(channels) - 1
    channel = {"id": number, "username": username, "title": f"Sandbox Channel {username or -number}",
               "admin": not (username or "").lower().startswith(NOT_ADMIN_PREFIX)}
    channels[str(number)] = channel
    return channel


# What every getChat answer (a ChatFullInfo) carries: its accent colour, how many reactions a
# message may have, and the gifts the chat accepts.
FULL_INFO: dict[str, Any] = {
    "accent_color_id": 0, "max_reaction_count": 11,
    "accepted_gift_types": {"unlimited_gifts": False, "limited_gifts": False, "unique_gifts": False,
                            "premium_subscription": False, "gifts_from_channels": False},
}

class TelegramEmulator(EmulatorBase):
    def telegram_parts(self) -> PlatformParts:
        return PlatformParts(self.telegram_routes, self.new_telegram_account, self.telegram_credentials,
                             self.adopt_telegram_bot)

    def telegram_routes(self) -> list[Route]:
        return [Route("/telegram/bot{token}/{method}", self.telegram, methods=["GET", "POST"])]

    def new_telegram_account(self, username: str | None = None, name: str | None = None) -> Account:
        n = self.state.next_number()
        bot_id = str(7000000000 + n)
        account = Account("telegram", bot_id, username or f"sandbox_{n}_bot", name or f"Sandbox Bot {n}")
        return self.state.add_account(account)

    def telegram_credentials(self, account: Account) -> dict[str, Any]:
        token = self.state.issue("telegram", account.id, "access", None, value=f"{account.id}:AA{random_token(33)}")
        return {"botToken": token.value}

    def adopt_telegram_bot(self, request: Request, value: str) -> Account | None:
        """An unknown `<digits>:AA...` token makes that bot, as a test card makes its payment."""
        match = TELEGRAM_TOKEN.match(value)
        if match is None or self.state.account("telegram", match[1]) is not None:
            return None
        bot_id = match[1]
        account = Account("telegram", bot_id, f"sandbox_{bot_id}_bot", f"Sandbox Bot {bot_id}")
        return account

    async def telegram(self, request: Request) -> Response:
        token_value = request.path_params["token"]
        return await self.api("telegram", request, self._telegram, token_value=token_value)

    async def _telegram(self, call: Call) -> Response:
        account = call.account
        assert account is not None
        if "multipart/form-data" in call.request.headers.get("content-type", ""):
            params = await self._tg_multipart(call)
        else:
            params = call.params()
        if call.request.path_params["method"] in ("sendPhoto", "sendVideo", "sendMediaGroup"):
            refused = await self._tg_media_refusal(call.request.path_params["method"], params)
            if refused is not None:
                return refused
        methods: dict[str, BotMethod] = {
            "getMe": self._tg_get_me,
            "setWebhook": self._tg_set_webhook,
            "deleteWebhook": self._tg_delete_webhook,
            "getWebhookInfo": self._tg_webhook_info,
            "sendMessage": self._tg_send,
            "sendPhoto": self._tg_send,
            "sendVideo": self._tg_send,
            "deleteMessage": self._tg_delete_message,
            "deleteMessages": self._tg_delete_messages,
            "sendMediaGroup": self._tg_send_media_group,
            "getChatMemberCount": self._tg_member_count,
            "getChat": self._tg_get_chat,
            "getChatMember": self._tg_get_chat_member,
        }
        method = methods.get(call.request.path_params["method"])
        if method is None:
            return telegram_error(404, "Not Found")
        return method(call, account, params)

    @staticmethod
    async def _tg_multipart(call: Call) -> dict[str, Any]:
        """A multipart call's fields (JSON-serialized objects decoded) and its files, each kept as
        `{"upload": {name, size, contentType}}` under its part's name."""
        form = await call.request.form(max_part_size=64 * 1024 * 1024)
        params: dict[str, Any] = dict(call.query)
        for key, value in form.multi_items():
            if isinstance(value, UploadFile):
                data = await value.read()
                params[key] = {"upload": {"name": value.filename, "size": len(data),
                                          "contentType": value.content_type}}
            elif key in ("reply_markup", "media"):
                try:
                    params[key] = json.loads(value)
                except ValueError:
                    params[key] = value
            else:
                params[key] = value
        return params

    async def _tg_media_refusal(self, method: str, params: dict[str, Any]) -> Response | None:
        """Telegram's size rules for a media (https://core.telegram.org/bots/api#sending-files): by URL it
        fetches photos of at most 5 MB and other files of at most 20 MB ("failed to get HTTP URL
        content"); uploaded, photos of at most 10 MB and other files of at most 50 MB (413); an
        `attach://<name>` must name an uploaded part."""
        if method == "sendMediaGroup":
            items = params.get("media")
            items = json.loads(items) if isinstance(items, str) else items
            pairs = [(str(item.get("type")), item.get("media")) for item in items or [] if isinstance(item, dict)]
        else:
            field = "photo" if method == "sendPhoto" else "video"
            pairs = [(field, params.get(field))]
        for kind, media in pairs:
            if isinstance(media, str) and media.startswith("attach://"):
                media = params.get(media[9:])
                if not isinstance(media, dict):
                    return telegram_error(400, "Bad Request: wrong file identifier/HTTP URL specified")
            if isinstance(media, dict):  # uploaded
                size = int((media.get("upload") or {}).get("size") or 0)
                if size > (10 if kind == "photo" else 50) * 1024 * 1024:
                    return telegram_error(413, "Request Entity Too Large")
            elif isinstance(media, str) and media.startswith(("http://", "https://")):
                fetched = await self._tg_url_size(media)
                if fetched is not None and fetched > (5 if kind == "photo" else 20) * 1024 * 1024:
                    return telegram_error(400, "Bad Request: failed to get HTTP URL content")
        return None

    async def _tg_url_size(self, url: str) -> int | None:
        """The size of the file at `url` as its server says (`Content-Length` of a HEAD), if it says."""
        try:
            response = await run_in_threadpool(self.client.head, url)
        except Exception:  # an unreachable URL is Telegram's to fail later, not a size
            return None
        length = response.headers.get("content-length", "")
        return int(length) if response.is_success and length.isdigit() else None

    @staticmethod
    def _tg_get_me(call: Call, account: Account, params: dict[str, Any]) -> Response:
        return JSONResponse(
            {
                "ok": True,
                "result": {
                    **bot_user(account),
                    "can_join_groups": True,
                    "can_read_all_group_messages": False,
                    "supports_inline_queries": False,
                },
            }
        )

    @staticmethod
    def _tg_set_webhook(call: Call, account: Account, params: dict[str, Any]) -> Response:
        url = params.get("url")
        secret = params.get("secret_token")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            return telegram_error(400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook")
        if secret is not None and not SECRET_TOKEN.match(str(secret)):
            return telegram_error(400, "Bad Request: secret token contains unallowed characters")
        account.webhook_url, account.webhook_secret = url, secret
        account.subscribed_fields = list(params.get("allowed_updates") or ["message"])
        return JSONResponse({"ok": True, "result": True, "description": "Webhook was set"})

    @staticmethod
    def _tg_delete_webhook(call: Call, account: Account, params: dict[str, Any]) -> Response:
        account.webhook_url = account.webhook_secret = None
        return JSONResponse({"ok": True, "result": True, "description": "Webhook was deleted"})

    @staticmethod
    def _tg_webhook_info(call: Call, account: Account, params: dict[str, Any]) -> Response:
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

    def _tg_delete_message(self, call: Call, account: Account, params: dict[str, Any]) -> Response:
        key = f"{params.get('chat_id')}:{params.get('message_id')}"
        if account.posts.pop(key, None) is None:
            return telegram_error(400, "Bad Request: message to delete not found")
        self.record(call, "delete_post", key, None, key)
        return JSONResponse({"ok": True, "result": True})

    def _tg_member_count(self, call: Call, account: Account, params: dict[str, Any]) -> Response:
        """A channel's subscribers (the sandbox's `followers` of the bot); a contact's chat has two."""
        chat_id = str(params.get("chat_id", ""))
        if channel_of(account, chat_id, create=True) is not None:
            return JSONResponse({"ok": True, "result": account.followers})
        if chat_id in account.contacts:
            return JSONResponse({"ok": True, "result": 2})
        return telegram_error(400, "Bad Request: chat not found")

    def _tg_get_chat(self, call: Call, account: Account, params: dict[str, Any]) -> Response:
        chat_id = str(params.get("chat_id", ""))
        channel = channel_of(account, chat_id, create=True)
        if channel is not None:
            # A ChatFullInfo: the fields the Bot API always gives (https://core.telegram.org/bots/api#chatfullinfo).
            chat = {"id": channel["id"], "type": "channel", "title": channel["title"], **FULL_INFO}
            if channel.get("username"):
                chat["username"] = channel["username"]
            return JSONResponse({"ok": True, "result": chat})
        contact = account.contacts.get(chat_id)
        if contact is None:
            return telegram_error(400, "Bad Request: chat not found")
        return JSONResponse({"ok": True, "result": {"id": int(contact.id) if contact.id.isdigit() else contact.id,
                                                    "type": "private", "first_name": contact.name or "",
                                                    "username": contact.handle, **FULL_INFO}})

    def _tg_get_chat_member(self, call: Call, account: Account, params: dict[str, Any]) -> Response:
        """The bot itself in a channel: an administrator that may post, unless the sandbox channel's
        name starts with `notadmin` (there the bot is a plain member)."""
        channel = channel_of(account, str(params.get("chat_id", "")), create=True)
        if channel is None:
            return telegram_error(400, "Bad Request: chat not found")
        if str(params.get("user_id", "")) != account.id:
            return telegram_error(400, "Bad Request: user not found")
        user = bot_user(account)
        if not channel["admin"]:
            return JSONResponse({"ok": True, "result": {"status": "member", "user": user}})
        return JSONResponse({"ok": True, "result": {
            "status": "administrator", "user": user, "can_be_edited": False, "is_anonymous": False,
            "can_manage_chat": True, "can_delete_messages": True, "can_manage_video_chats": False,
            "can_restrict_members": True, "can_promote_members": False, "can_change_info": True,
            "can_invite_users": True, "can_post_stories": False, "can_edit_stories": False,
            "can_delete_stories": False, "can_send_welcome_messages": False, "can_post_messages": True,
            "can_edit_messages": True}})

    def _tg_delete_messages(self, call: Call, account: Account, params: dict[str, Any]) -> Response:
        """`deleteMessages`: 1 to 100 message ids of one chat; those not found are skipped."""
        ids = params.get("message_ids")
        if isinstance(ids, str):
            ids = json.loads(ids)
        if not isinstance(ids, list) or not 1 <= len(ids) <= 100:
            return telegram_error(400, "Bad Request: message_ids must be a list of 1-100 identifiers")
        chat = params.get("chat_id")
        found = [key for key in (f"{chat}:{each}" for each in ids) if account.posts.pop(key, None) is not None]
        if not found:
            return telegram_error(400, "Bad Request: message to delete not found")
        self.record(call, "delete_post", str(chat), None, f"{chat}:{','.join(str(i) for i in ids)}")
        return JSONResponse({"ok": True, "result": True})

    def _tg_send_media_group(self, call: Call, account: Account, params: dict[str, Any]) -> Response:
        """`sendMediaGroup`: an album of 2-10 items (`photo`, `video`, `document`, `audio`), each its
        own message; a caption per item of at most 1,024 characters. Answers the array of messages."""
        if self.rate_limits and self.state.over_rate("telegram", account.id, 30):
            return telegram_error(429, "Too Many Requests: retry after 1", 1)
        media = params.get("media")
        if isinstance(media, str):
            media = json.loads(media)
        if not isinstance(media, list) or not 2 <= len(media) <= 10:
            return telegram_error(400, "Bad Request: media must include 2-10 items")
        for item in media:
            if not isinstance(item, dict) or item.get("type") not in MEDIA_GROUP_TYPES or not item.get("media"):
                return telegram_error(400, "Bad Request: can't parse InputMedia: media not found")
            if len(str(item.get("caption") or "")) > 1024:
                return telegram_error(400, "Bad Request: message caption is too long")
        chat_id = str(params.get("chat_id", ""))
        if not (chat_id.startswith("@") or chat_id.startswith("-100")) and chat_id not in account.contacts:
            return telegram_error(400, "Bad Request: chat not found")
        chat: dict[str, Any] = {"id": int(chat_id) if chat_id.lstrip("-").isdigit() else -1001000000000,
                                "title": "Sandbox Channel", "type": "channel"}
        if chat_id.startswith("@"):
            chat["username"] = chat_id[1:]
        group = str(self.state.serial())
        messages = []
        for item in media:
            message_id = self.state.serial()
            message: dict[str, Any] = {"message_id": message_id, "from": bot_user(account), "chat": chat,
                                       "date": int(time.time()), "media_group_id": group}
            if item.get("caption"):
                message["caption"] = item["caption"]
            account.posts[f"{chat_id}:{message_id}"] = {"text": item.get("caption")}
            messages.append(message)
        ids = ",".join(str(m["message_id"]) for m in messages)
        self.record(call, "post", chat_id, media[0].get("caption"), f"{chat_id}:{ids}", payload=_as_sent(call, params))
        return JSONResponse({"ok": True, "result": messages})

    def _tg_send(self, call: Call, account: Account, params: dict[str, Any]) -> Response:
        method, bot = call.request.path_params["method"], bot_user(account)
        # A bot's 30 messages a second; the sent log keeps the instant each was let through.
        admitted = self.state.admit("telegram", account.id, 30) if self.rate_limits else None
        if self.rate_limits and admitted is None:
            return telegram_error(429, "Too Many Requests: retry after 1", 1)
        chat_id = str(params.get("chat_id", ""))
        channel = chat_id.startswith("@") or chat_id.startswith("-100")
        contact = account.contacts.get(chat_id)
        if not channel and contact is None:
            return telegram_error(400, "Bad Request: chat not found")
        known = channel_of(account, chat_id) if channel else None
        if known is not None and not known["admin"]:
            return telegram_error(400, "Bad Request: need administrator rights in the channel chat")
        text = params.get("text") if method == "sendMessage" else params.get("caption")
        markup = params.get("reply_markup")
        refused = content_refusal(method, text, params) or markup_refusal(markup)
        if refused is not None:
            return refused
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
            self.record(call, "post", chat_id, text, f"{chat_id}:{message_id}", payload=_as_sent(call, params),
                        at=admitted)
        else:
            self.record(call, "dm", chat_id, text, str(message_id), payload=_as_sent(call, params), at=admitted)
        return JSONResponse({"ok": True, "result": result})
