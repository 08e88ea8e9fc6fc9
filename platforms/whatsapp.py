"""WhatsApp Cloud API: `POST /{v}/{phone-number-id}/messages` (text, interactive `cta_url`),
number check `GET /{v}/{phone-number-id}` and `GET /{v}/{waba-id}/phone_numbers`, webhooks
`POST /{v}/{waba-id}/subscribed_apps`. Connected with a system-user token pasted by the user
(no OAuth, no refresh). Free-form and interactive messages only within the 24 h customer service
window (error 131047 outside it); 80 messages/s per number (error 130429 past it)."""

from __future__ import annotations

from typing import Any

from platforms._common import require
from platforms._graph import GraphAdapter, graph_code
from platforms.base import (
    AccountContext,
    Button,
    ButtonRefused,
    Capabilities,
    ConnectedIdentity,
    OutsideMessagingWindow,
    Rejected,
    SentMessage,
    cut_label,
)

WEBHOOK_FIELDS = ["messages"]
BUTTON_REFUSAL_CODES = {"100", "131008", "131009"}


class WhatsAppAdapter(GraphAdapter):
    platform = "whatsapp"
    capabilities = Capabilities(
        dm=True,
        dm_text_limit=4096,
        button="cta_url",
        messaging_window_hours=24,
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
            content = {
                "type": "interactive",
                "interactive": {
                    "type": "cta_url",
                    "body": {"text": text},
                    "action": {
                        "name": "cta_url",
                        "parameters": {"display_text": cut_label(btn.label), "url": btn.url},
                    },
                },
            }
            try:
                return self._send(account, to, content)
            except OutsideMessagingWindow:
                raise
            except Rejected as failure:
                if graph_code(failure) in BUTTON_REFUSAL_CODES:
                    raise ButtonRefused(failure.reason, failure.code) from None
                raise

        def plain(body: str) -> SentMessage:
            return self._send(account, to, {"type": "text", "text": {"preview_url": False, "body": body}})

        return self._with_button_fallback(text, button, native, plain)

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
