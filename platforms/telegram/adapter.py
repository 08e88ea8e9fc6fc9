"""Telegram Bot API: `POST /bot{token}/{method}` (`getMe`, `setWebhook`, `sendMessage` with an
inline keyboard `url` button, `sendPhoto`, `sendVideo`, `deleteMessage`, `getChatMemberCount`).

The bot token is in the URL path: it is redacted from every log line and error (platforms.http).
The webhook is `{hooks_base_url}/hooks/telegram?bot=<bot id>` with a `secret_token` derived from
the bot id (`PlatformConfig.telegram_secret`), echoed by Telegram in
`X-Telegram-Bot-Api-Secret-Token`. Posts go to a channel the bot administers (`options.chatId`
or the `channelId` credential); their id is `<chat id>:<message id>`.

Media go by URL while Telegram fetches them itself (photos up to 5 MB, other files up to 20 MB:
https://core.telegram.org/bots/api#sending-files); larger ones are uploaded (`multipart/form-data`,
up to 50 MB), and anything larger is refused before any call."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx2

from platforms._common import BaseAdapter, require
from platforms.base import (
    AccountContext,
    Button,
    ButtonRefused,
    Capabilities,
    ConnectedIdentity,
    FieldRefused,
    MediaItem,
    PlatformFailure,
    PublishedPost,
    ReauthRequired,
    Rejected,
    RetryLater,
    SentMessage,
    cut_label,
)
from platforms.http import generic_failure, json_body, redact, retry_after_seconds
from platforms.inbound import InboundEvent
from platforms.telegram import inbound
from platforms.telegram.rules import TelegramPostRules

ALLOWED_UPDATES = ["message", "edited_message", "message_reaction", "callback_query", "channel_post", "my_chat_member"]


# https://core.telegram.org/bots/api#sending-files: by URL "5 MB max size for photos and 20 MB max for
# other types of content"; uploaded as multipart "10 MB max size for photos, 50 MB for other files".
URL_PHOTO_MAX_BYTES = 5 * 1024 * 1024
URL_FILE_MAX_BYTES = 20 * 1024 * 1024
UPLOAD_PHOTO_MAX_BYTES = 10 * 1024 * 1024
UPLOAD_MAX_BYTES = 50 * 1024 * 1024


def by_url(item: MediaItem) -> bool:
    """Whether Telegram fetches the media from its URL itself (else it is uploaded)."""
    return item.size <= (URL_FILE_MAX_BYTES if item.is_video else URL_PHOTO_MAX_BYTES)


def check_sizes(media: list[MediaItem]) -> None:
    """Refuse, before any call, a media Telegram takes neither by URL nor uploaded."""
    for item in media:
        limit, what = (UPLOAD_MAX_BYTES, "a video") if item.is_video else (UPLOAD_PHOTO_MAX_BYTES, "a photo")
        if item.size > limit:
            raise Rejected(f"Telegram takes {what} of at most {limit // (1024 * 1024)} MB from a bot; this one is "
                           f"{item.size / (1024 * 1024):.1f} MB", "media_too_large")


def telegram_classify(response: httpx2.Response, secrets: list[str]) -> PlatformFailure:
    body = json_body(response)
    if not isinstance(body, dict) or body.get("ok") is not False:
        return generic_failure(response, secrets)
    code = int(body.get("error_code") or response.status_code)
    description = redact(str(body.get("description") or "Telegram refused the request"), secrets)
    parameters = body.get("parameters") or {}
    if code == 429 or "retry_after" in parameters:
        delay = parameters.get("retry_after")
        return RetryLater(
            description, float(delay) if delay is not None else retry_after_seconds(response.headers, 1.0)
        )
    if code == 401 or (code == 404 and description == "Not Found"):
        return ReauthRequired(description)
    if code >= 500:
        return RetryLater(description, 5.0)
    if code == 400 and ("BUTTON" in description.upper() or "REPLY MARKUP" in description.upper()):
        return ButtonRefused(description, str(code))
    return Rejected(description, str(code))


class ChannelRefused(FieldRefused):
    """The channel given at connect cannot be the bot's: unknown, not a channel, or the bot may not post there."""

    field = "channel"


def _chat(value: str) -> int | str:
    return int(value) if value.lstrip("-").isdigit() else value


class TelegramAdapter(BaseAdapter):
    platform = "telegram"
    webhook_secret_from_service_key = True  # each bot's `secret_token` (`PlatformConfig.telegram_secret`)
    display_name = "Telegram"
    post_rules = TelegramPostRules()
    token_field = "botToken"  # noqa: S105 (a field name)
    classify = staticmethod(telegram_classify)
    capabilities = Capabilities(
        dm=True,
        dm_text_limit=4096,
        post_text_limit=4096,
        post_caption_limit=1024,
        post_media="optional",
        max_media=10,  # sendMediaGroup: an album of 2-10 photos and videos
        button="inline_keyboard",
        dm_media=("image", "video"),
        dm_caption_limit=1024,
        messages_per_second=30,
        publish=True,
        delete_post=True,
        inbound_webhooks=True,
    )

    def verify_webhook(self, headers: Mapping[str, str], raw_body: bytes, query: Mapping[str, str]) -> bool:
        return inbound.verify(headers, query, self.config.telegram_secrets)

    def parse_webhook(self, payload: dict[str, Any], query: Mapping[str, str]) -> list[InboundEvent]:
        return inbound.parse(payload, query.get("bot") or "")

    def _method(self, token: str, method: str, payload: dict[str, Any], secrets: list[str]) -> Any:
        response = self._call(
            "POST", f"{self.endpoints.api}/bot{token}/{method}", json=payload, secrets=[token, *secrets]
        )
        return (json_body(response) or {}).get("result")

    def _with_media(self, token: str, method: str, payload: dict[str, Any], media: dict[str, MediaItem],
                    secrets: list[str]) -> Any:
        """`_method` with media: each `attach://<name>` of the payload (or its field named so) is the
        media's URL when Telegram fetches it itself, else its bytes in a multipart upload."""
        uploads = {name: item for name, item in media.items() if not by_url(item)}

        def resolved(value: Any) -> Any:
            if isinstance(value, str) and value.startswith("attach://") and value[9:] in media:
                name = value[9:]
                return value if name in uploads else media[name].url
            if isinstance(value, list):
                return [resolved(each) for each in value]
            if isinstance(value, dict):
                return {key: resolved(each) for key, each in value.items()}
            return value

        payload = {key: resolved(value) for key, value in payload.items()}
        if not uploads:
            return self._method(token, method, payload, secrets)
        fields = {key: value if isinstance(value, str) else json.dumps(value) for key, value in payload.items()
                  if value is not None}
        files = {name: (name, self._read_media(item), item.content_type) for name, item in uploads.items()}
        for key, value in list(fields.items()):
            if value.startswith("attach://") and value[9:] in files and key == value[9:]:
                del fields[key]  # the field itself is the upload (`photo`, `video`)
        response = self._call("POST", f"{self.endpoints.api}/bot{token}/{method}", data=fields, files=files,
                              secrets=[token, *secrets])
        return (json_body(response) or {}).get("result")

    @staticmethod
    def _token(account: AccountContext) -> str:
        token = account.credentials.get("botToken")
        if not isinstance(token, str) or not token:
            raise ReauthRequired("the account has no bot token")
        return token

    def _send(self, account: AccountContext, payload: dict[str, Any]) -> SentMessage:
        result = self._method(self._token(account), "sendMessage", payload, account.secrets())
        return SentMessage(str(result["message_id"]), False, payload)

    def send_dm(
        self, account: AccountContext, *, recipient: str, text: str, button: Button | None = None
    ) -> SentMessage:
        chat = _chat(recipient)

        def native(btn: Button) -> SentMessage:
            keyboard = {"inline_keyboard": [[{"text": cut_label(btn.label), "url": btn.url}]]}
            return self._send(account, {"chat_id": chat, "text": text, "reply_markup": keyboard})

        return self._with_button_fallback(
            text, button, native, lambda body: self._send(account, {"chat_id": chat, "text": body})
        )

    def send_dm_media(
        self, account: AccountContext, *, recipient: str, text: str, media: MediaItem, button: Button | None = None
    ) -> SentMessage:
        """A photo or a video with the text as its caption (and a button under it), in one message."""
        method, field = ("sendVideo", "video") if media.is_video else ("sendPhoto", "photo")
        check_sizes([media])
        base = {"chat_id": _chat(recipient), field: f"attach://{field}"}

        def send(payload: dict[str, Any]) -> SentMessage:
            result = self._with_media(self._token(account), method, payload, {field: media}, account.secrets())
            return SentMessage(str(result["message_id"]), False, payload)

        def native(btn: Button) -> SentMessage:
            keyboard = {"inline_keyboard": [[{"text": cut_label(btn.label), "url": btn.url}]]}
            return send({**base, "caption": text, "reply_markup": keyboard})

        return self._with_button_fallback(text, button, native, lambda body: send({**base, "caption": body}))

    def _webhook(self, token: str, bot_id: str) -> list[str]:
        self._method(
            token,
            "setWebhook",
            {
                "url": self.config.telegram_webhook_url(bot_id),
                "secret_token": self.config.telegram_secret(bot_id),
                "allowed_updates": ALLOWED_UPDATES,
            },
            [self.config.telegram_secret(bot_id)],
        )
        return list(ALLOWED_UPDATES)

    def connect_with_token(self, **fields: Any) -> ConnectedIdentity:
        (token,) = require(fields, "botToken")
        me = self._method(token, "getMe", {}, [])
        if not me or not me.get("is_bot", True):
            raise Rejected("this token does not belong to a bot", "not_a_bot")
        bot_id = str(me["id"])
        credentials = {"botToken": token}
        if fields.get("channel"):
            credentials["channelId"] = self.administered_channel(token, bot_id, str(fields["channel"]))
        applied = self._webhook(token, bot_id)
        return ConnectedIdentity(
            bot_id, me.get("username"), me.get("first_name"), credentials, tuple(applied)
        )

    def administered_channel(self, token: str, bot_id: str, channel: str) -> str:
        """The numeric id of `channel` (`@name` or `-100…`) once the bot is found to be an
        administrator there with the right to post (`getChat`, then `getChatMember` for the bot
        itself); `ChannelRefused` otherwise."""
        try:
            chat = self._method(token, "getChat", {"chat_id": _chat(channel)}, [])
        except Rejected as failure:
            raise ChannelRefused(
                "Telegram does not know this channel, or the bot is not a member of it", failure.code
            ) from None
        if not isinstance(chat, dict) or chat.get("type") != "channel":
            raise ChannelRefused("this chat is not a channel", "not_a_channel")
        try:
            member = self._method(token, "getChatMember", {"chat_id": chat["id"], "user_id": int(bot_id)}, [])
        except Rejected as failure:
            raise ChannelRefused("the bot is not a member of this channel", failure.code) from None
        status = (member or {}).get("status")
        if status != "creator" and not (status == "administrator" and member.get("can_post_messages")):
            raise ChannelRefused(
                "the bot is not an administrator of this channel with the right to post messages; "
                "make it one in the channel's settings (Administrators), then connect again",
                "not_channel_admin",
            )
        return str(chat["id"])

    def subscribe_webhooks(self, account: AccountContext) -> list[str]:
        return self._webhook(self._token(account), account.platform_account_id)

    def _channel(self, account: AccountContext, options: dict[str, Any]) -> int | str:
        chat = options.get("chatId") or account.credentials.get("channelId")
        if not chat:
            raise Rejected(
                "a Telegram post needs options.chatId (a channel the bot administers)", "missing_field"
            )
        return _chat(str(chat))

    def publish_options(self, account: AccountContext) -> dict[str, Any]:
        channel = account.credentials.get("channelId")
        # A bot connected with its channel posts there unless a target says otherwise.
        return {"platform": self.platform, "required": [] if channel else ["chatId"], "chatId": channel}

    def publish_post(
        self, account: AccountContext, *, text: str, media: list[MediaItem], options: dict[str, Any]
    ) -> PublishedPost:
        chat = self._channel(account, options)
        token = self._token(account)
        limit = self.capabilities.post_limit(with_media=bool(media))
        if limit is not None and len(text) > limit:
            # Telegram refuses the whole message rather than cutting the caption.
            raise Rejected(f"a Telegram caption is at most {limit} characters with media", "caption_too_long")
        check_sizes(media)
        if len(media) > 1:
            return self._album(token, chat, text, media)
        if media:
            method, field = ("sendVideo", "video") if media[0].is_video else ("sendPhoto", "photo")
            result = self._with_media(
                token, method, {"chat_id": chat, field: f"attach://{field}", "caption": text}, {field: media[0]}, []
            )
        else:
            result = self._method(token, "sendMessage", {"chat_id": chat, "text": text}, [])
        message_id = result["message_id"]
        username = (result.get("chat") or {}).get("username")
        url = f"https://t.me/{username}/{message_id}" if username else None
        return PublishedPost(f"{chat}:{message_id}", url)

    def _album(self, token: str, chat: int | str, text: str, media: list[MediaItem]) -> PublishedPost:
        """`sendMediaGroup`: 2 to 10 photos and videos in one album, the text as the first item's
        caption (Telegram shows it under the album). The post's id keeps every message of the album,
        so that deleting it deletes them all."""
        if len(media) > 10:
            raise Rejected("a Telegram album takes 2 to 10 photos and videos", "too_many_media")
        items: list[dict[str, Any]] = [
            {"type": "video" if item.is_video else "photo", "media": f"attach://file{n}"}
            for n, item in enumerate(media)
        ]
        if text:
            items[0]["caption"] = text
        messages = self._with_media(token, "sendMediaGroup", {"chat_id": chat, "media": items},
                                    {f"file{n}": item for n, item in enumerate(media)}, [])
        ids = [str(message["message_id"]) for message in messages]
        username = (messages[0].get("chat") or {}).get("username")
        url = f"https://t.me/{username}/{ids[0]}" if username else None
        return PublishedPost(f"{chat}:{','.join(ids)}", url)

    def delete_post(self, account: AccountContext, *, platform_post_id: str) -> None:
        chat, _, message_id = platform_post_id.rpartition(":")
        ids = [int(each) for each in message_id.split(",")]
        try:
            if len(ids) > 1:  # an album: `deleteMessages` takes its messages at once
                self._method(self._token(account), "deleteMessages", {"chat_id": _chat(chat), "message_ids": ids},
                             account.secrets())
                return
            self._method(
                self._token(account),
                "deleteMessage",
                {"chat_id": _chat(chat), "message_id": ids[0]},
                account.secrets(),
            )
        except Rejected as failure:
            if "not found" not in failure.reason.lower():
                raise

    def follower_count(self, account: AccountContext) -> int:
        channel = account.credentials.get("channelId")
        if not channel:
            raise self._unsupported("follower counts without a channel")
        return int(
            self._method(self._token(account), "getChatMemberCount", {"chat_id": _chat(str(channel))}, [])
        )
