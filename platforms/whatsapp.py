"""WhatsApp Cloud API: `POST /{v}/{phone-number-id}/messages` (text, interactive `cta_url`),
number check `GET /{v}/{phone-number-id}` and `GET /{v}/{waba-id}/phone_numbers`, webhooks
`POST /{v}/{waba-id}/subscribed_apps`. Connected with a system-user token pasted by the user
(no OAuth, no refresh). Free-form and interactive messages only within the 24 h customer service
window (error 131047 outside it); 80 messages/s per number (error 130429 past it)."""

from __future__ import annotations

import re
from typing import Any

from platforms._common import require
from platforms._graph import GraphAdapter, graph_code
from platforms.base import (
    AccountContext,
    Button,
    ButtonRefused,
    Capabilities,
    ConnectedIdentity,
    MediaItem,
    OutsideMessagingWindow,
    Rejected,
    SentMessage,
    cut_label,
)

WEBHOOK_FIELDS = ["messages"]
BUTTON_REFUSAL_CODES = {"100", "131008", "131009"}


def _body_parameters(components: Any) -> int:
    """How many `{{n}}` placeholders the template's body has."""
    for component in components if isinstance(components, list) else []:
        if isinstance(component, dict) and component.get("type") == "BODY":
            return len(set(re.findall(r"\{\{(\d+)\}\}", str(component.get("text") or ""))))
    return 0


class WhatsAppAdapter(GraphAdapter):
    platform = "whatsapp"
    capabilities = Capabilities(
        dm=True,
        dm_text_limit=4096,
        button="cta_url",
        dm_media=("image", "video"),
        dm_caption_limit=1024,
        messaging_window_hours=24,
        templates=True,
        messages_per_second=80,
        inbound_webhooks=True,
    )

    def _send(self, account: AccountContext, to: str, content: dict[str, Any]) -> SentMessage:
        payload = {"messaging_product": "whatsapp", "recipient_type": "individual", "to": to, **content}
        answer = self._graph(
            "POST",
            f"{account.platform_account_id}/messages",
            self._token(account),
            secrets=account.secrets(),
            json=payload,
        )
        messages = answer.get("messages") or [{}]
        return SentMessage(str(messages[0].get("id", "")), False, payload)

    def send_dm(
        self, account: AccountContext, *, recipient: str, text: str, button: Button | None = None
    ) -> SentMessage:
        to = recipient.lstrip("+")

        def native(btn: Button) -> SentMessage:
            return self._send_cta(account, to, text, btn)

        def plain(body: str) -> SentMessage:
            return self._send(account, to, {"type": "text", "text": {"preview_url": False, "body": body}})

        return self._with_button_fallback(text, button, native, plain)

    def send_dm_media(
        self, account: AccountContext, *, recipient: str, text: str, media: MediaItem, button: Button | None = None
    ) -> SentMessage:
        """An image or a video with the text as its caption; with a button, an interactive cta_url
        message whose header is the media."""
        to = recipient.lstrip("+")
        kind = "video" if media.is_video else "image"

        def native(btn: Button) -> SentMessage:
            return self._send_cta(account, to, text, btn, header={"type": kind, kind: {"link": media.url}})

        def plain(body: str) -> SentMessage:
            return self._send(account, to, {"type": kind, kind: {"link": media.url, "caption": body}})

        return self._with_button_fallback(text, button, native, plain)

    def _send_cta(self, account: AccountContext, to: str, text: str, btn: Button,
                  header: dict[str, Any] | None = None) -> SentMessage:
        """An interactive cta_url message (a text, or a media header, with one link button); a
        refusal of the button itself is `ButtonRefused`, so the caller can send without it."""
        interactive: dict[str, Any] = {
            "type": "cta_url",
            "body": {"text": text},
            "action": {"name": "cta_url", "parameters": {"display_text": cut_label(btn.label), "url": btn.url}},
        }
        if header is not None:
            interactive["header"] = header
        try:
            return self._send(account, to, {"type": "interactive", "interactive": interactive})
        except OutsideMessagingWindow:
            raise
        except Rejected as failure:
            if graph_code(failure) in BUTTON_REFUSAL_CODES:
                raise ButtonRefused(failure.reason, failure.code) from None
            raise

    def send_template(
        self, account: AccountContext, *, recipient: str, name: str, language: str, parameters: list[str]
    ) -> SentMessage:
        template: dict[str, Any] = {"name": name, "language": {"code": language}}
        if parameters:
            template["components"] = [
                {"type": "body", "parameters": [{"type": "text", "text": value} for value in parameters]}
            ]
        return self._send(account, recipient.lstrip("+"), {"type": "template", "template": template})

    def list_templates(self, account: AccountContext) -> list[dict[str, Any]]:
        waba = account.credentials.get("wabaId")
        if not isinstance(waba, str) or not waba:
            raise Rejected("the account has no WhatsApp Business Account id", "missing_field")
        templates = self._graph_all(
            f"{waba}/message_templates", self._token(account), secrets=account.secrets(),
            params={"fields": "name,language,status,category,components"},
        )
        return [
            {
                "name": str(item.get("name")),
                "language": str(item.get("language")),
                "category": str(item.get("category") or ""),
                "parameters": _body_parameters(item.get("components")),
            }
            for item in templates
            if item.get("status") == "APPROVED"
        ]

    def subscribe_webhooks(self, account: AccountContext) -> list[str]:
        waba = account.credentials.get("wabaId")
        if not isinstance(waba, str) or not waba:
            raise Rejected("the account has no WhatsApp Business Account id", "missing_field")
        self._graph("POST", f"{waba}/subscribed_apps", self._token(account), secrets=account.secrets())
        return list(WEBHOOK_FIELDS)

    def connect_with_token(self, **fields: Any) -> ConnectedIdentity:
        phone_id, waba_id, token = require(fields, "phoneNumberId", "wabaId", "accessToken")
        number = self._graph("GET", phone_id, token, params={"fields": "display_phone_number,verified_name"})
        numbers = self._graph_all(f"{waba_id}/phone_numbers", token)
        if phone_id not in {str(item.get("id")) for item in numbers}:
            raise Rejected(
                "this phone number does not belong to that WhatsApp Business Account", "phone_not_in_waba"
            )
        credentials = {"accessToken": token, "phoneNumberId": phone_id, "wabaId": waba_id}
        fields_applied = self.subscribe_webhooks(AccountContext(phone_id, credentials))
        return ConnectedIdentity(
            phone_id,
            number.get("display_phone_number"),
            number.get("verified_name"),
            credentials,
            tuple(fields_applied),
        )

    def publish_options(self, account: AccountContext) -> dict[str, Any]:
        return {"platform": self.platform, "publishing": False}
