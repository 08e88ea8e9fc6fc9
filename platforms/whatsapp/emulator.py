"""WhatsApp Cloud API on the Graph core: the number and its WhatsApp Business Account as nodes, text,
interactive (cta_url) and template messages, 80 messages/s per number (130429), and the 24 h customer
service window, whose refusal arrives as WhatsApp sends it: a `failed` status webhook after a 200."""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from platforms.emulator_kit.answer import JSONResponse
from platforms.emulator_kit.core import Call, EmulatorBase, PlatformParts, bad_button_url
from platforms.emulator_kit.errors import graph_error
from platforms.emulator_kit.state import WINDOW_SECONDS, Account, random_token
from platforms.graph.emulator import EdgeRoute, graph_page, me_node, on_account, on_waba
from platforms.graph.inbound import meta_signature

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
    # Named parameters (`parameter_format: NAMED`), sent with their `parameter_name`.
    {"name": "delivery_named", "language": "en_US", "status": "APPROVED", "category": "UTILITY",
     "parameter_format": "NAMED",
     "components": [{"type": "BODY", "text": "Hi {{first_name}}, order {{order_id}} arrives today.",
                     "example": {"body_text_named_params": [{"param_name": "first_name", "example": "Ana"},
                                                            {"param_name": "order_id", "example": "A-1"}]}}]},
    # A media header and a URL button with a variable: each needs its own component when sent.
    {"name": "launch_video", "language": "en_US", "status": "APPROVED", "category": "MARKETING",
     "components": [{"type": "HEADER", "format": "VIDEO"},
                    {"type": "BODY", "text": "Our launch: {{1}}."},
                    {"type": "BUTTONS", "buttons": [{"type": "URL", "text": "Watch",
                                                     "url": "https://example.com/launch/{{1}}"}]}]},
    # A TEXT header with a variable: a `header` component with its text parameter (132000 without).
    {"name": "ticket_header", "language": "en_US", "status": "APPROVED", "category": "UTILITY",
     "components": [{"type": "HEADER", "format": "TEXT", "text": "Ticket {{1}}"},
                    {"type": "BODY", "text": "We answered your ticket."}]},
]
MEDIA_HEADERS = ("IMAGE", "VIDEO", "DOCUMENT")
# The message object's fields (Cloud API reference, Messages: POST /{phone-number-id}/messages), and
# the Graph call's own parameters.
MESSAGE_FIELDS = {
    "messaging_product", "recipient_type", "to", "type", "context", "biz_opaque_callback_data", "status",
    "message_id", "text", "image", "video", "audio", "document", "sticker", "location", "contacts",
    "interactive", "template", "reaction", "access_token", "appsecret_proof",
}


def _sent_components(template: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [c for c in template.get("components") or [] if isinstance(c, dict) and c.get("type") == kind]


def _mismatch(details: str) -> Response:
    return graph_error(400, 132000, "(#132000) Number of parameters does not match the expected number of params",
                       whatsapp=True, details=details)


def _template_extras(found: dict[str, Any], template: dict[str, Any]) -> Response | None:
    """A media header needs a `header` component with that media; a URL button with a variable, a
    `button` component (`sub_type: url`, its `index`) with the text (Cloud API, send template messages)."""
    header = next((c for c in found["components"] if c["type"] == "HEADER"), None)
    if header is not None and header.get("format") == "TEXT" and "{{" in str(header.get("text")):
        given = [p for c in _sent_components(template, "header") for p in c.get("parameters") or []]
        if len(given) != 1 or not isinstance(given[0], dict) or given[0].get("type") != "text" \
                or not isinstance(given[0].get("text"), str) or not given[0]["text"]:
            return _mismatch(f"header: number of params ({len(given)}) does not match the expected number (1)")
    if header is not None and header.get("format") in MEDIA_HEADERS:
        kind = str(header["format"]).lower()
        given = [p for c in _sent_components(template, "header") for p in c.get("parameters") or []]
        if len(given) != 1 or not isinstance(given[0], dict) or given[0].get("type") != kind \
                or not (given[0].get(kind) or {}).get("link"):
            return graph_error(400, 132012, "(#132012) Parameter format does not match format in the created template",
                               whatsapp=True, details=f"header: format mismatch, expected {header['format']}")
    buttons: list[dict[str, Any]] = next((c["buttons"] for c in found["components"] if c["type"] == "BUTTONS"), [])
    for index, button in enumerate(buttons):
        if button.get("type") != "URL" or "{{" not in str(button.get("url")):
            continue
        sent = [c for c in _sent_components(template, "button")
                if c.get("sub_type") == "url" and str(c.get("index")) == str(index)]
        values = [p.get("text") for c in sent for p in c.get("parameters") or [] if isinstance(p, dict)]
        if len(values) != 1 or not isinstance(values[0], str) or not values[0]:
            return _mismatch(f"button at index {index}: number of params (0) does not match the expected number (1)")
    return None


def _render_template(template: Any) -> str | Response:
    """The text the person receives, or WhatsApp's refusal: an unknown, unapproved or other-language
    template (132001), parameters that do not fill its body (132000) or named parameters that are not
    its names, a media header or a URL button's variable left out."""
    template = template if isinstance(template, dict) else {}
    code = (template.get("language") or {}).get("code") if isinstance(template.get("language"), dict) else None
    found = next((t for t in WA_TEMPLATES if t["name"] == template.get("name") and t["language"] == code
                  and t["status"] == "APPROVED"), None)
    if found is None:
        return graph_error(404, 132001, "(#132001) Template name does not exist in the translation", whatsapp=True,
                           details=f"template name ({template.get('name')}) does not exist in {code}")
    body = next(c["text"] for c in found["components"] if c["type"] == "BODY")
    params = [p for c in _sent_components(template, "body") for p in c.get("parameters") or [] if isinstance(p, dict)]
    if not all(isinstance(p.get("text"), str) and p.get("text") for p in params):
        return _mismatch("body: each parameter needs its text")
    if found.get("parameter_format") == "NAMED":
        names = re.findall(r"\{\{([a-z_][a-z0-9_]*)\}\}", body)
        given = {p.get("parameter_name"): p["text"] for p in params}
        if set(given) != set(names) or len(params) != len(names):
            return graph_error(400, 100, "(#100) Invalid parameter", whatsapp=True,
                               details=f"body: parameter_name of each parameter must be one of {names}")
        rendered = re.sub(r"\{\{([a-z_][a-z0-9_]*)\}\}", lambda m: str(given[m.group(1)]), body)
    else:
        wanted = len(set(re.findall(r"\{\{(\d+)\}\}", body)))
        if len(params) != wanted or any("parameter_name" in p for p in params):
            return _mismatch(f"body: number of localizable_params ({len(params)}) does not match the expected number "
                             f"of params ({wanted})")
        values = [p["text"] for p in params]
        rendered = re.sub(r"\{\{(\d+)\}\}", lambda m: str(values[int(m.group(1)) - 1]), body)
    refused = _template_extras(found, template)
    return refused if refused is not None else rendered


# How long after accepting a send WhatsApp reports it failed (a status webhook).
STATUS_DELAY_SECONDS = 0.2


def message_text(kind: Any, body: dict[str, Any]) -> str | Response | None:
    """What the person reads of a text, interactive (cta_url), media (its caption) or template
    message, or WhatsApp's refusal of it."""
    text: Any
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
    caption: str | None = text  # a media message's caption is optional
    return caption


class WhatsAppEmulator(EmulatorBase):
    def whatsapp_parts(self) -> PlatformParts:
        return PlatformParts(self.whatsapp_routes, self.new_whatsapp_account, self.whatsapp_credentials,
                             self.adopt_whatsapp_number)

    def whatsapp_routes(self) -> list[Route]:
        return [Route("/whatsapp/{version}/debug_token", self.wa_debug_token, methods=["GET"])]

    async def wa_debug_token(self, request: Request) -> Response:
        """`GET /debug_token?input_token=`: the token's app (`app_id`), type and scopes. A token the
        sandbox has not seen is one of its own app's, as any well-formed credential connects here."""

        async def handle(call: Call) -> Response:
            value = call.query.get("input_token") or ""
            if not value or not value.isprintable():
                return graph_error(400, 100, "(#100) The parameter input_token is required.")
            found = self.state.token("whatsapp", value, ("access", "user"))
            app_id = (found.extra.get("app_id") if found is not None else None) or self.config.meta_app_id
            # The sandbox's apps have "Require App Secret" on: even this call needs the proof of the
            # token's own app's secret (https://developers.facebook.com/docs/graph-api/securing-requests).
            if self.config.meta_secret_for(str(app_id)) and "appsecret_proof" not in call.query:
                return graph_error(400, 100, "API calls from the server require an appsecret_proof argument",
                                   error_type="GraphMethodException")
            if not self.proof_ok("whatsapp", call.request, value, str(app_id)):
                return graph_error(400, 100, "Invalid appsecret_proof provided in the API argument",
                                   error_type="GraphMethodException")
            return JSONResponse({"data": {
                "app_id": str(app_id), "type": "SYSTEM_USER", "application": "Sandbox app", "is_valid": True,
                "scopes": ["whatsapp_business_management", "whatsapp_business_messaging"]}})

        return await self.api("whatsapp", request, handle, auth=False)

    def whatsapp_graph_edges(self) -> list[EdgeRoute]:
        wa = ("whatsapp",)
        return [
            EdgeRoute(wa, "POST", ("messages",), on_account, self._wa_send),
            EdgeRoute(wa, "GET", ("message_templates",), on_waba, self._wa_templates),
            EdgeRoute(wa, "GET", ("phone_numbers",), on_waba, self._wa_numbers),
        ]

    def new_whatsapp_account(self, username: str | None = None, name: str | None = None) -> Account:
        n = self.state.next_number()
        account = Account(
            "whatsapp", f"1{n:014d}", username or f"+1 555-01{n % 100:02d}", name or f"Sandbox Co {n}"
        )
        account.extra["waba_id"] = f"2{n:014d}"
        return self.state.add_account(account)

    def whatsapp_credentials(self, account: Account) -> dict[str, Any]:
        """Fresh credentials in the shape the adapter stores."""
        app = account.extra.get("app_id")  # a token of another Meta app (control `accounts` `appId`)
        extra = {"app_id": app} if app else {}
        token = self.state.issue("whatsapp", account.id, "access", None, prefix="EAAW", **extra)
        return {
            "accessToken": token.value,
            "phoneNumberId": account.id,
            "wabaId": account.extra["waba_id"],
        }

    def adopt_whatsapp_number(self, request: Request, value: str) -> Account | None:
        """Any token used on a numeric phone number id the sandbox does not know makes that number."""
        node = str(request.path_params.get("node", ""))
        if not node.isdigit() or self.state.account("whatsapp", node) is not None:
            return None
        account = Account("whatsapp", node, f"+1 555-{node[-4:]:0>4}", f"Sandbox Co {node[-4:]}")
        account.extra["waba_id"] = None  # set by the first WABA it is asked under
        return account

    def whatsapp_node(self, call: Call, account: Account, node: str, fields: list[str]) -> Response:
        if node == account.id:
            return JSONResponse(
                {
                    "display_phone_number": account.username,
                    "verified_name": account.display_name,
                    "id": account.id,
                    "quality_rating": "GREEN",
                }
            )
        return me_node(call, account, node, fields)

    def _wa_templates(self, call: Call, account: Account, node: str) -> Response:
        return graph_page(call.request, [{"id": f"{node}{n:03d}", **t} for n, t in enumerate(WA_TEMPLATES)])

    def _wa_numbers(self, call: Call, account: Account, node: str) -> Response:
        numbers = self.state.accounts_where("whatsapp", lambda a: a.extra.get("waba_id") == node)
        return graph_page(call.request, [
            {"id": number.id, "display_phone_number": number.username,
             "verified_name": number.display_name, "quality_rating": "GREEN", "status": "CONNECTED"}
            for number in sorted(numbers, key=lambda a: a.id)
        ])

    # -- WhatsApp ----------------------------------------------------------------------------
    def _wa_send(self, call: Call, account: Account, node: str) -> Response:
        body = call.params()
        if body.get("messaging_product") != "whatsapp":
            return graph_error(400, 100, "(#100) The parameter messaging_product is required.", whatsapp=True)
        unknown = sorted(set(body) - MESSAGE_FIELDS)
        if unknown:
            return graph_error(400, 100, f"(#100) Param {unknown[0]} is not a valid parameter", whatsapp=True,
                               details=f"Unexpected key \"{unknown[0]}\" on param \"message\".")
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
        text = message_text(kind, body)
        if isinstance(text, Response):
            return text
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
        secret = self.config.meta_secret_for(account.extra.get("subscribed_app"))
        headers = {"X-Hub-Signature-256": meta_signature(secret, body)}
        await self.deliver(f"{self.config.hooks_base_url.rstrip('/')}/hooks/whatsapp", body, headers)
