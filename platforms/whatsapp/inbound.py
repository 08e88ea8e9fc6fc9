"""WhatsApp Cloud API webhooks (`field: messages`): a contact's messages (text, a button's or a
list's reply, media with their captions, locations, contact cards), the reactions, edits and revokes
that name an earlier message, and the statuses of the messages sent (delivered, read, failed with
the reason). A person without a phone number in the webhook (a username user) is named by their
`from_user_id`. System notices (a changed number or identity) are no message. Signed as every Meta
webhook (`platforms/graph/inbound.py`)."""

from __future__ import annotations

from typing import Any

from platforms.inbound import EventKind, InboundEvent, attachment, from_seconds, mapping, shown_text

_MEDIA = ("image", "video", "audio", "document", "sticker")


def parse(payload: dict[str, Any]) -> list[InboundEvent]:
    events: list[InboundEvent] = []
    for entry in payload.get("entry") or []:
        for change in (entry or {}).get("changes") or []:
            value = (change or {}).get("value") or {}
            if change.get("field") != "messages":
                continue
            account = str((value.get("metadata") or {}).get("phone_number_id", ""))
            names: dict[str, Any] = {}
            for contact in value.get("contacts") or []:
                if isinstance(contact, dict):
                    for key in ("wa_id", "user_id"):
                        if contact.get(key):
                            names[str(contact[key])] = (contact.get("profile") or {}).get("name")
            for message in value.get("messages") or []:
                event = _whatsapp_message(account, message, names) if isinstance(message, dict) else None
                if event is not None:
                    events.append(event)
            for status in value.get("statuses") or []:
                event = _whatsapp_status(account, status) if isinstance(status, dict) else None
                if event is not None:
                    events.append(event)
    return events


def _media(kind: str, body: Any) -> dict[str, Any]:
    body = body if isinstance(body, dict) else {}
    named = "voice" if kind == "audio" and body.get("voice") else "file" if kind == "document" else kind
    return attachment(named, body.get("url") or body.get("link"), id=body.get("id"),
                      mime_type=body.get("mime_type"), filename=body.get("filename"),
                      animated=body.get("animated"))


def _contact_card(card: Any) -> dict[str, Any]:
    card = card if isinstance(card, dict) else {}
    name = (card.get("name") or {}).get("formatted_name") if isinstance(card.get("name"), dict) else None
    phones = [str(p.get("phone")) for p in card.get("phones") or [] if isinstance(p, dict) and p.get("phone")]
    return attachment("contact", name=name, phones=phones)


def _content(message: dict[str, Any]) -> tuple[Any, tuple[dict[str, Any], ...]]:
    """A message's text (or caption) and its attachments, by its `type`."""
    kind_of = message.get("type")
    body = message.get(kind_of) if isinstance(kind_of, str) else None
    if kind_of == "text":
        return (body or {}).get("body") if isinstance(body, dict) else None, ()
    if kind_of in _MEDIA:
        return (body or {}).get("caption") if isinstance(body, dict) else None, (_media(kind_of, body),)
    if kind_of == "location" and isinstance(body, dict):
        return None, (attachment("location", body.get("url"), latitude=body.get("latitude"),
                                 longitude=body.get("longitude"), name=body.get("name"),
                                 address=body.get("address")),)
    if kind_of == "contacts":
        return None, tuple(_contact_card(card) for card in (body if isinstance(body, list) else []))
    if kind_of == "order" and isinstance(body, dict):
        return body.get("text"), (attachment("order", catalog_id=body.get("catalog_id")),)
    return None, (attachment(str(kind_of or "unsupported")),)


def _whatsapp_message(account: str, message: dict[str, Any], names: dict[str, Any]) -> InboundEvent | None:
    phone = str(message.get("from") or "")
    who = phone or str(message.get("from_user_id") or "")
    mid = str(message.get("id", ""))
    at = from_seconds(message.get("timestamp"))
    kind_of = message.get("type")
    if not who or kind_of in ("system", "request_welcome"):
        return None  # a notice (a changed number or identity, a first opening of the chat), not a message
    kind: EventKind = "message"
    payload = target = reaction = None
    attachments: tuple[dict[str, Any], ...] = ()
    if kind_of == "interactive":
        interactive = message.get("interactive") or {}
        reply = interactive.get("button_reply") or interactive.get("list_reply")
        if isinstance(reply, dict):
            kind, text, payload = "postback", reply.get("title"), reply.get("id")
        else:  # a flow's answer (`nfm_reply`)
            text, attachments = None, (attachment(str(interactive.get("type") or "interactive")),)
    elif kind_of == "button":
        button = message.get("button") or {}
        kind, text, payload = "postback", button.get("text"), button.get("payload")
    elif kind_of == "reaction":
        body = message.get("reaction") or {}
        kind, text, target, reaction = "reaction", None, body.get("message_id"), str(body.get("emoji") or "")
    elif kind_of == "edit":
        body = message.get("edit") or {}
        new = mapping(body.get("message"))
        kind, target = "edit", body.get("original_message_id")
        text, attachments = _content(new)
    elif kind_of == "revoke":
        kind, text, target = "delete", None, (message.get("revoke") or {}).get("original_message_id")
    else:
        text, attachments = _content(message)
    return InboundEvent(
        "whatsapp",
        kind,
        account,
        f"whatsapp:{mid}",
        at,
        contact_id=who,
        contact_handle=f"+{phone}" if phone else None,
        contact_name=names.get(who) or names.get(str(message.get("from_user_id") or "")),
        text=shown_text(text, attachments) if kind in ("message", "edit") else text,
        platform_message_id=mid,
        postback_payload=payload,
        attachments=attachments,
        target_message_id=str(target) if target else None,
        reaction=reaction,
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
