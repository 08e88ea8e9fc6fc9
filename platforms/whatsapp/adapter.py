"""WhatsApp Cloud API: `POST /{v}/{phone-number-id}/messages` (text, interactive `cta_url`),
number check `GET /{v}/{phone-number-id}` and `GET /{v}/{waba-id}/phone_numbers`, webhooks
`POST /{v}/{waba-id}/subscribed_apps`. Connected with a system-user token pasted by the user
(no OAuth, no refresh). Free-form and interactive messages only within the 24 h customer service
window (error 131047 outside it); 80 messages/s per number (error 130429 past it)."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Any

from platforms._common import require
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
from platforms.graph.adapter import GraphAdapter, graph_code
from platforms.inbound import InboundEvent
from platforms.whatsapp import inbound
from platforms.whatsapp.rules import WhatsAppInboxRules

WEBHOOK_FIELDS = ["messages"]
BUTTON_REFUSAL_CODES = {"100", "131008", "131009"}


def _body_parameters(components: Any) -> int:
    """How many `{{n}}` (or `{{name}}`) placeholders the template's body has."""
    return len(_body_names(components))


def _body_names(components: Any) -> list[str]:
    """The body's placeholders in order of first use: `1`, `2`, ... or a named template's names."""
    names: list[str] = []
    for component in components if isinstance(components, list) else []:
        if isinstance(component, dict) and component.get("type") == "BODY":
            for name in re.findall(r"\{\{\s*([A-Za-z0-9_]+)\s*\}\}", str(component.get("text") or "")):
                if name not in names:
                    names.append(name)
    return names


def _template_shape(item: dict[str, Any]) -> dict[str, Any]:
    """What a send needs to know of an approved template: its body's parameters (positional or
    named), a media header's format, and which URL buttons take a variable."""
    found = item.get("components")
    components: list[Any] = found if isinstance(found, list) else []
    header = next((c for c in components if isinstance(c, dict) and c.get("type") == "HEADER"), {})
    buttons: list[Any] = next((c.get("buttons") or [] for c in components
                               if isinstance(c, dict) and c.get("type") == "BUTTONS"), [])
    named = item.get("parameter_format") == "NAMED"
    return {
        "name": str(item.get("name")),
        "language": str(item.get("language")),
        "category": str(item.get("category") or ""),
        "parameters": _body_parameters(components),
        "parameterFormat": "NAMED" if named else "POSITIONAL",
        "parameterNames": _body_names(components) if named else [],
        "headerFormat": header.get("format") if header.get("format") in MEDIA_HEADERS else None,
        # A TEXT header with a variable (`{{1}}`, or a name in a NAMED template): its value is sent.
        "headerVariable": header.get("format") == "TEXT" and "{{" in str(header.get("text") or ""),
        "headerParameterName": next(iter(re.findall(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}",
                                                    str(header.get("text") or ""))), None) if named else None,
        "buttonParameters": [index for index, button in enumerate(buttons or [])
                             if isinstance(button, dict) and button.get("type") == "URL"
                             and "{{" in str(button.get("url") or "")],
    }


def _unknown_app(app_id: str) -> str:
    return (f"this token belongs to the Meta app {app_id}, whose app secret is not configured: add "
            f"{app_id}:<its app secret> to SWITCHBOARD_META_APP_SECRETS, or use a token of the app "
            "SWITCHBOARD_META_APP_SECRET belongs to")


MEDIA_HEADERS = ("IMAGE", "VIDEO", "DOCUMENT")
TEMPLATES_KEPT_SECONDS = 300.0  # a send reads the template's shape at most this often per account


# "body.text: Maximum 1024 characters" (the interactive object's body, cta_url messages included:
# https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages#interactive-object).
INTERACTIVE_BODY_LIMIT = 1024

class WhatsAppAdapter(GraphAdapter):
    platform = "whatsapp"
    display_name = "WhatsApp"
    inbox_rules = WhatsAppInboxRules()
    webhook_subscription = True
    _templates: dict[str, tuple[float, list[dict[str, Any]]]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._templates = {}
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

    def _webhook_secrets(self) -> list[str]:
        # A number connected with another Meta app's token has that app's webhooks, signed with its
        # own secret (`SWITCHBOARD_META_APP_SECRETS`).
        return [self.config.meta_app_secret, *self.config.meta_app_secrets.values()]

    def parse_webhook(self, payload: dict[str, Any], query: Mapping[str, str]) -> list[InboundEvent]:
        return inbound.parse(payload)

    def _send(self, account: AccountContext, to: str, content: dict[str, Any]) -> SentMessage:
        payload = {"messaging_product": "whatsapp", "recipient_type": "individual", "to": to, **content}
        answer = self._graph(
            "POST",
            f"{account.platform_account_id}/messages",
            self._token(account),
            secrets=account.secrets(),
            json=payload,
            app_secret=self._secret(account),
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
        if len(text) > INTERACTIVE_BODY_LIMIT:
            # An interactive body takes at most 1,024 characters: known before the call, the message
            # goes without its button (the caller sends the URL after the text).
            raise ButtonRefused(f"an interactive message's body is at most {INTERACTIVE_BODY_LIMIT} characters",
                                "interactive_body_too_long")
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
        self, account: AccountContext, *, recipient: str, name: str, language: str, parameters: list[str],
        header_media_url: str | None = None, button_parameters: list[str] | None = None,
        header_text: str | None = None,
    ) -> SentMessage:
        """The template's components as its shape asks: body parameters positional, or with their
        `parameter_name` for a named template; a TEXT header's variable; a media header's link; each
        URL button's variable. A template the account has not approved is refused before sending."""
        shape = self._template_shape(account, name, language)
        if shape is None:
            # Without its shape the parameters could only go out positional, and a named template, a
            # header or a button would be refused, or worse, filled wrong: refuse before sending.
            raise Rejected(f"{name} ({language}) is not an approved template of this account", "template_not_found")
        template: dict[str, Any] = {"name": name, "language": {"code": language}}
        components: list[dict[str, Any]] = []
        if shape["headerVariable"]:
            if not header_text:
                raise Rejected(f"the template {name} has a text header with a variable: give its headerText",
                               "template_header_missing")
            parameter: dict[str, Any] = {"type": "text", "text": header_text}
            if shape.get("headerParameterName"):
                parameter["parameter_name"] = shape["headerParameterName"]
            components.append({"type": "header", "parameters": [parameter]})
        if shape["headerFormat"]:
            if not header_media_url:
                raise Rejected(f"the template {name} has a {shape['headerFormat'].lower()} header: give its "
                               "headerMediaUrl", "template_header_missing")
            kind = shape["headerFormat"].lower()
            components.append({"type": "header", "parameters": [{"type": kind, kind: {"link": header_media_url}}]})
        if parameters:
            names = shape["parameterNames"]
            components.append({"type": "body", "parameters": [
                {"type": "text", "parameter_name": names[i], "text": value} if i < len(names)
                else {"type": "text", "text": value} for i, value in enumerate(parameters)]})
        for index, value in zip(shape["buttonParameters"], button_parameters or [], strict=False):
            components.append({"type": "button", "sub_type": "url", "index": str(index),
                               "parameters": [{"type": "text", "text": value}]})
        if components:
            template["components"] = components
        return self._send(account, recipient.lstrip("+"), {"type": "template", "template": template})

    def _template_shape(self, account: AccountContext, name: str, language: str) -> dict[str, Any] | None:
        """The approved template's shape, from a listing kept a few minutes per account (a broadcast
        sends one template to many: one read, not one per recipient)."""
        key = f"{account.platform_account_id}:{account.credentials.get('wabaId')}"
        kept = self._templates.get(key)
        if kept is None or time.monotonic() - kept[0] > TEMPLATES_KEPT_SECONDS:
            kept = (time.monotonic(), self.list_templates(account))
            self._templates[key] = kept
        return next((t for t in kept[1] if t["name"] == name and t["language"] == language), None)

    def list_templates(self, account: AccountContext) -> list[dict[str, Any]]:
        waba = account.credentials.get("wabaId")
        if not isinstance(waba, str) or not waba:
            raise Rejected("the account has no WhatsApp Business Account id", "missing_field")
        templates = self._graph_all(
            f"{waba}/message_templates", self._token(account), secrets=account.secrets(),
            params={"fields": "name,language,status,category,components,parameter_format"},
            app_secret=self._secret(account),
        )
        return [_template_shape(item) for item in templates if item.get("status") == "APPROVED"]

    def subscribe_webhooks(self, account: AccountContext) -> list[str]:
        waba = account.credentials.get("wabaId")
        if not isinstance(waba, str) or not waba:
            raise Rejected("the account has no WhatsApp Business Account id", "missing_field")
        # Subscribes the token's own app: its webhooks are signed with that app's secret, which the
        # hook verifies with (`SWITCHBOARD_META_APP_SECRETS`).
        self._graph("POST", f"{waba}/subscribed_apps", self._token(account), secrets=account.secrets(),
                    app_secret=self._secret(account))
        return list(WEBHOOK_FIELDS)

    def _secret(self, account: AccountContext) -> str:
        """The secret of the app the account's token belongs to (`appId`, from `debug_token` at
        connect; ours for accounts connected before)."""
        app_id = account.credentials.get("appId")
        secret = self.config.meta_secret_for(app_id if isinstance(app_id, str) else None)
        if app_id and not secret:
            raise Rejected(_unknown_app(str(app_id)), "unknown_meta_app")
        return secret

    def _token_app(self, token: str) -> tuple[str | None, str]:
        """`GET /debug_token`: which app the token was issued to, and that app's secret. A token of an
        app whose secret is not configured is refused: Graph would refuse its every call with an
        `appsecret_proof` made with another app's secret (code 100).

        An app with "Require App Secret" refuses even this call without the proof of its own secret,
        and which app it is is what the call tells: each configured secret is tried, ours first; a
        proof of the wrong app's secret is refused (code 100) and the next one tried."""
        candidates = list(dict.fromkeys(secret for secret in (self.config.meta_app_secret,
                                                              *self.config.meta_app_secrets.values()) if secret))
        answer: Any = None
        for candidate in [*candidates, ""]:  # last, no proof: an app that does not require one
            try:
                answer = self._graph("GET", "debug_token", token, params={"input_token": token},
                                     app_secret=candidate)
                break
            except Rejected as failure:
                if graph_code(failure) != "100" or "appsecret_proof" not in failure.reason:
                    raise
                if not candidate:
                    raise Rejected("this token's Meta app requires app secret proofs and none of the configured "
                                   "secrets is its: add <its app id>:<its app secret> to "
                                   "SWITCHBOARD_META_APP_SECRETS", "unknown_meta_app") from None
        app_id = str((answer.get("data") or {}).get("app_id") or "") or None
        secret = self.config.meta_secret_for(app_id)
        if app_id and not secret and (self.config.meta_app_secret or self.config.meta_app_secrets):
            raise Rejected(_unknown_app(app_id), "unknown_meta_app")
        return app_id, secret

    def connect_with_token(self, **fields: Any) -> ConnectedIdentity:
        phone_id, waba_id, token = require(fields, "phoneNumberId", "wabaId", "accessToken")
        app_id, secret = self._token_app(token)
        number = self._graph("GET", phone_id, token, params={"fields": "display_phone_number,verified_name"},
                             app_secret=secret)
        numbers = self._graph_all(f"{waba_id}/phone_numbers", token, app_secret=secret)
        if phone_id not in {str(item.get("id")) for item in numbers}:
            raise Rejected(
                "this phone number does not belong to that WhatsApp Business Account", "phone_not_in_waba"
            )
        credentials = {"accessToken": token, "phoneNumberId": phone_id, "wabaId": waba_id,
                       **({"appId": app_id} if app_id else {})}
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
