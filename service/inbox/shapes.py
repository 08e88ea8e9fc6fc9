"""The inbox's shapes: what `/v1` and the MCP tools take and answer for conversations and messages."""

from __future__ import annotations

import datetime as dt
import json
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from kit.shapes import (
    LEFT_OUT,
    Body,
    HttpsUrl,
    Id,
    Instant,
    NullableInstant,
    PageQuery,
    Record,
    instant_text,
)
from service.accounts.shapes import PLATFORMS

# The contract's filter takes these six, upper case, and nothing else (422).
PLATFORM_FILTER = ("INSTAGRAM", "WHATSAPP", "TIKTOK", "TELEGRAM", "YOUTUBE", "X")
DIRECTIONS = ("inbound", "outbound")
MESSAGE_STATUSES = ("received", "pending", "sending", "sent", "delivered", "read", "failed", "unknown")
SOURCES = ("inbox", "broadcast", "sequence", "automation")
CONVERSATION_STATUSES = ("open", "resolved", "snoozed")
MAX_LABELS = 20
Label = Annotated[str, Field(min_length=1, max_length=50)]
MAX_TEXT = 4096

Text255 = Annotated[str, Field(min_length=1, max_length=255)]


# -- requests ----------------------------------------------------------------------------------


class ConversationQuery(PageQuery):
    platform: Literal[PLATFORM_FILTER] = Field(  # type: ignore[valid-type]
        LEFT_OUT, description="Upper case: INSTAGRAM, WHATSAPP, TIKTOK, TELEGRAM, YOUTUBE or X. Anything else "
        "(lower case included) → 422.")
    account_id: Id = LEFT_OUT
    profile_id: Id = LEFT_OUT
    status: Literal[CONVERSATION_STATUSES] = LEFT_OUT  # type: ignore[valid-type]
    assignee_id: Id = Field(LEFT_OUT, description="A member's user id, or `none` for unassigned conversations.")
    label: Label = LEFT_OUT
    q: Annotated[str, Field(min_length=1, max_length=200)] = Field(LEFT_OUT, description=(
        "Search over the contact's name and handle and the messages' text (case- and accent-insensitive): "
        "every word must be one of theirs, the last may be the start of one (as you type). Newest first."))


class UpdateConversation(Body):
    status: Literal[CONVERSATION_STATUSES] = Field(LEFT_OUT, description=(  # type: ignore[valid-type]
        "`snoozed` needs `snoozedUntil`; an inbound message opens a resolved or snoozed conversation again."))
    snoozed_until: Annotated[str, Field(min_length=1, max_length=64, examples=["2026-12-02T09:00:00Z"])] = Field(
        LEFT_OUT, description="An instant in the future: the conversation opens again by itself then.")
    assignee_id: Id | None = Field(LEFT_OUT, description=(
        "A member who may see the conversation's profile (else 422), or null to unassign."))
    labels: list[Label] = Field(LEFT_OUT, max_length=MAX_LABELS, description="The whole set (at most 20).")


class UpdateConversationTool(UpdateConversation):
    """`update_conversation` as an MCP tool: the conversation's id is an argument (on /v1, the path)."""

    conversation_id: Id


class AddNote(Body):
    text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]


class AddNoteTool(AddNote):
    """`add_note` as an MCP tool."""

    conversation_id: Id


class Note(Record):
    id: str
    conversation_id: str
    author_id: str | None
    text: str
    created_at: Instant


class MessagesQuery(PageQuery):
    """`get_messages` as an MCP tool: the conversation's id is an argument (on /v1, the path)."""

    conversation_id: Id


class StartConversation(Body):
    account_id: Id
    contact_handle: Text255 = Field(LEFT_OUT, description=(
        "Case-insensitive, a leading @ dropped; WhatsApp: a phone number, stored in E.164."))
    contact_name: Annotated[str, Field(max_length=255)] | None = None
    external_conversation_id: Text255 = Field(LEFT_OUT, description=(
        "The platform's id of the contact's thread, what DMs are addressed to: the scoped user id "
        "(Instagram, Facebook), the chat id (Telegram), the wa_id (WhatsApp), the user id (X), the "
        "`conversation_id` (TikTok), the comment thread's id (YouTube)."))


class Template(Body):
    """A WhatsApp message template the account has had approved, with its body's parameters in order."""

    name: Annotated[str, Field(min_length=1, max_length=512, pattern=r"^[a-z0-9_]+$", examples=["order_update"])]
    language: Annotated[str, Field(min_length=2, max_length=15, pattern=r"^[a-z]{2,3}(_[A-Z]{2})?$",
                                   examples=["en_US"], description="The template's language code, e.g. `en_US`.")]
    parameters: list[Annotated[str, Field(min_length=1, max_length=1024)]] = Field(
        default_factory=list, max_length=20, description=(
            "The values of `{{1}}`, `{{2}}`, ... in its body (a NAMED template's, in the order of its "
            "`parameterNames`: GET /v1/accounts/{id}/templates)."))
    header_media_url: Annotated[HttpsUrl, Field(max_length=2048)] = Field(LEFT_OUT, description=(
        "For a template with a media header (`headerFormat`): the image, video or document's https URL."))
    button_parameters: list[Annotated[str, Field(min_length=1, max_length=2000)]] = Field(
        default_factory=list, max_length=2, description=(
            "The variable of each URL button that takes one (`buttonParameters` of the template), in order."))
    header_text: Annotated[str, Field(min_length=1, max_length=60)] = Field(LEFT_OUT, description=(
        "For a template whose TEXT header has a variable (`headerVariable`): its value."))


class SendMessage(Body):
    """`text`, or on WhatsApp a `template` (the only way to reach a contact outside the 24 h window)."""

    text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT)] = LEFT_OUT
    template: Template = LEFT_OUT
    button_label: Annotated[str, Field(min_length=1, max_length=255)] = Field(LEFT_OUT, description=(
        "With `buttonUrl`: a link button under the text (Instagram and Facebook a button template, WhatsApp "
        "`cta_url`, Telegram an inline keyboard; elsewhere, or if the platform refuses it, the URL on its own line "
        "after the text). Longer than 20 characters: stored whole, shown cut to 20."))
    button_url: Annotated[HttpsUrl, Field(max_length=2048)] = Field(LEFT_OUT, description=(
        "Absolute https URL; with `buttonLabel`."))
    media_ids: list[Id] = Field(LEFT_OUT, max_length=10, description=(
        "Completed media (`med_...`) sent with the text as their caption, where the platform takes attachments "
        "in a direct message: Telegram and WhatsApp, one image or video a message (caption at most 1,024 "
        "characters). Elsewhere → 422 naming `mediaIds`."))
    saved_reply_id: Id = Field(LEFT_OUT, description=(
        "Send a saved reply (instead of `text`), its variables filled for this conversation."))


class SavedReplyBody(Body):
    name: Annotated[str, Field(min_length=1, max_length=200)]
    text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT)] = Field(description=(
        "`{{contact.name}}`, `{{contact.handle}}` and `{{account.name}}` are filled in when it is sent."))


class SavedReplyChange(Body):
    name: Annotated[str, Field(min_length=1, max_length=200)] = LEFT_OUT
    text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT)] = LEFT_OUT


class SavedReply(Record):
    id: str
    name: str
    text: str
    created_at: Instant
    updated_at: Instant


class SavedReplyDeleted(Record):
    id: str
    deleted: bool


class SendMessageTo(SendMessage):
    """`send_message` as an MCP tool: the conversation's id is an argument (on /v1, the path)."""

    conversation_id: Id


# -- records -----------------------------------------------------------------------------------


def _labels(value: Any) -> Any:
    # The list's hand-written read hands the stored JSON text over as it is.
    if isinstance(value, str):
        return json.loads(value)
    return value or []


class Conversation(Record):
    id: str
    account_id: str
    platform: Literal[PLATFORMS]  # type: ignore[valid-type]
    contact_handle: str | None = Field(description="Normalised; null when the platform names the contact only "
                                       "by a scoped id.")
    contact_name: str | None
    external_conversation_id: str | None
    last_message_at: NullableInstant
    last_inbound_at: NullableInstant = Field(description=(
        "The contact's last message: Instagram, Facebook and WhatsApp take free-form replies for 24 h after it."))
    unread_count: int = Field(ge=0, description="Inbound messages since the last reply.")
    status: Literal[CONVERSATION_STATUSES]  # type: ignore[valid-type]
    snoozed_until: NullableInstant = None
    assignee_id: str | None = None
    labels: Annotated[list[str], BeforeValidator(_labels)] = Field(default_factory=list)
    created_at: Instant
    updated_at: Instant


_TEXT_OR_NULL = frozenset({str, type(None)})


def message_record(row: Any) -> dict[str, Any]:
    """`Message.model_validate(row).dump()` for a message row (a model of `storage.models.Message`):
    the same object, key for key and in the same order, built straight from the row's values when
    each is one the record takes as it is (text or null, a known status, no template, a list of ids, no
    attachments, reactions, edit or deletion),
    else through the record's validation. An outbound message's event carries it: pydantic's
    validation and dump cost twice this for a row the engine has just read itself."""
    data = row.__data__
    get = data.get
    media_ids, created_at, updated_at = get("media_ids"), get("created_at"), get("updated_at")
    if (
        get("template") is None
        and type(get("id")) is str and type(get("conversation")) is str
        and type(get("text")) in _TEXT_OR_NULL and type(get("button_label")) in _TEXT_OR_NULL
        and type(get("button_url")) in _TEXT_OR_NULL and type(get("platform_message_id")) in _TEXT_OR_NULL
        and type(get("error")) in _TEXT_OR_NULL
        and get("direction") in DIRECTIONS and get("status") in MESSAGE_STATUSES and get("source") in SOURCES
        and (media_ids is None or (type(media_ids) is list and all(type(each) is str for each in media_ids)))
        and (type(created_at) is dt.datetime or (type(created_at) is str and len(created_at) >= 19))
        and (type(updated_at) is dt.datetime or (type(updated_at) is str and len(updated_at) >= 19))
        and get("attachments") is None and get("reactions") is None
        and get("edited_at") is None and get("deleted_at") is None
    ):
        return {
            "id": data["id"], "conversationId": data["conversation"], "direction": data["direction"],
            "text": get("text"), "buttonLabel": get("button_label"), "buttonUrl": get("button_url"),
            "status": data["status"], "platformMessageId": get("platform_message_id"), "error": get("error"),
            "template": None, "mediaIds": list(media_ids) if media_ids else [], "attachments": [], "reactions": [],
            "editedAt": None, "deletedAt": None, "source": data["source"],
            "createdAt": instant_text(created_at), "updatedAt": instant_text(updated_at),
        }
    return Message.model_validate(row).dump()


class StartedConversation(Conversation):
    """The MCP tool's answer: /v1 tells a new conversation by 201, a tool by `created`."""

    created: bool


class SentTemplate(Record):
    name: str
    language: str
    parameters: list[str]
    header_media_url: str | None = None
    button_parameters: list[str] = Field(default_factory=list)
    header_text: str | None = None


class Message(Record):
    id: str
    conversation_id: str
    direction: Literal[DIRECTIONS]  # type: ignore[valid-type]
    text: str | None = Field(description="Null for an inbound message without text (an attachment), and for a "
                             "template message.")
    button_label: str | None
    button_url: str | None
    status: Literal[MESSAGE_STATUSES]  # type: ignore[valid-type]
    platform_message_id: str | None
    error: str | None
    template: SentTemplate | None = Field(None, description="The WhatsApp template sent, when it was one.")
    media_ids: Annotated[list[str], BeforeValidator(lambda value: value or [])] = Field(
        default_factory=list, description="Attachments sent with the text (outbound messages).")
    attachments: Annotated[list[dict[str, Any]], BeforeValidator(lambda value: value or [])] = Field(
        default_factory=list, description="What an inbound message carried besides text, as the platform described "
        "it: `{type, url?, ...}` each (type: image, video, audio, voice, file, sticker, location, contact, share, "
        "story_mention, ...; a location's `latitude`/`longitude`, a contact's `name`/`phones`). The text of a "
        "message with attachments only is a placeholder naming them, e.g. `[image]`.")
    reactions: Annotated[list[dict[str, Any]], BeforeValidator(lambda value: value or [])] = Field(
        default_factory=list, description="The contacts' reactions to the message: `{emoji, by}` each, one per person.")
    edited_at: NullableInstant = Field(None, description="When the contact last edited it (the text is the new one).")
    deleted_at: NullableInstant = Field(None, description="When the contact deleted it on the platform.")
    source: Literal[SOURCES]  # type: ignore[valid-type]
    created_at: Instant
    updated_at: Instant
