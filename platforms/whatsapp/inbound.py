"""WhatsApp Cloud API webhooks (`field: messages`): a contact's messages (text, a button's or a
list's reply, media captions) and the statuses of the messages sent (delivered, read, failed with
the reason). Signed as every Meta webhook (`platforms/graph/inbound.py`)."""

from __future__ import annotations

from typing import Any

from platforms.inbound import EventKind, InboundEvent, from_seconds


def parse(payload: dict[str, Any]) -> list[InboundEvent]:
    events: list[InboundEvent] = []
    for entry in payload.get("entry") or []:
        for change in (entry or {}).get("changes") or []:
            value = (change or {}).get("value") or {}
            if change.get("field") != "messages":
                continue
            account = str((value.get("metadata") or {}).get("phone_number_id", ""))
            names = {
                str(c.get("wa_id")): (c.get("profile") or {}).get("name")
                for c in value.get("contacts") or []
                if isinstance(c, dict)
            }
            for message in value.get("messages") or []:
                event = _whatsapp_message(account, message, names)
                if event is not None:
                    events.append(event)
            for status in value.get("statuses") or []:
                event = _whatsapp_status(account, status)
                if event is not None:
                    events.append(event)
    return events


def _whatsapp_message(account: str, message: dict[str, Any], names: dict[str, Any]) -> InboundEvent | None:
    wa_id = str(message.get("from", ""))
    mid = str(message.get("id", ""))
    at = from_seconds(message.get("timestamp"))
    kind: EventKind = "message"
    payload = None
    kind_of = message.get("type")
    if kind_of == "text":
        text = (message.get("text") or {}).get("body")
    elif kind_of == "interactive":
        interactive = message.get("interactive") or {}
        reply = interactive.get("button_reply") or interactive.get("list_reply") or {}
        kind, text, payload = "postback", reply.get("title"), reply.get("id")
    elif kind_of == "button":
        button = message.get("button") or {}
        kind, text, payload = "postback", button.get("text"), button.get("payload")
    else:
        text = (message.get(kind_of) or {}).get("caption") if isinstance(kind_of, str) else None
    return InboundEvent(
        "whatsapp",
        kind,
        account,
        f"whatsapp:{mid}",
        at,
        contact_id=wa_id,
        contact_handle=f"+{wa_id}" if wa_id else None,
        contact_name=names.get(wa_id),
        text=text,
        platform_message_id=mid,
        postback_payload=payload,
    )


def _whatsapp_error_text(errors: Any) -> str | None:
    """`Re-engagement message (131047): Message failed to send because more than 24 hours...`."""
    first = errors[0] if isinstance(errors, list) and errors and isinstance(errors[0], dict) else None
    if first is None:
        return None
    title = str(first.get("title") or first.get("message") or "The message was not delivered")
    code = first.get("code")
    details = (first.get("error_data") or {}).get("details") if isinstance(first.get("error_data"), dict) else None
    text = f"{title} ({code})" if code else title
    return f"{text}: {details}" if details else text


def _whatsapp_status(account: str, status: dict[str, Any]) -> InboundEvent | None:
    state = status.get("status")
    kinds: dict[str, EventKind] = {"delivered": "delivery", "read": "read", "failed": "failed"}
    if state not in kinds:
        return None
    mid = str(status.get("id", ""))
    recipient = str(status.get("recipient_id", ""))
    errors = status.get("errors") or []
    return InboundEvent(
        "whatsapp",
        kinds[state],
        account,
        f"whatsapp:status:{mid}:{state}",
        from_seconds(status.get("timestamp")),
        contact_id=recipient,
        contact_handle=f"+{recipient}" if recipient else None,
        platform_message_id=mid,
        message_ids=(mid,),
        text=_whatsapp_error_text(errors),
    )
