from http_api.declare import op
from http_api.routing import Call, Reply
from kit.pagination import Page
from kit.shapes import PageQuery, page_of
from service.inbox import conversations, outbound, sharing
from service.inbox.shapes import (
    AddNote,
    Conversation,
    ConversationQuery,
    Message,
    Note,
    SendMessage,
    StartConversation,
    UpdateConversation,
)


def start(call: Call) -> Reply:
    started = conversations.start_conversation(actor=call.actor, **dict(call.body))
    return Reply(started.conversation, status=201 if started.created else 200)


def list_(call: Call) -> Page:
    return conversations.list_conversations(actor=call.actor, **dict(call.query))


def get(call: Call) -> Conversation:
    return conversations.get_conversation(actor=call.actor, conversation_id=call.path["id"])


def update(call: Call) -> Conversation:
    return sharing.update(actor=call.actor, conversation_id=call.path["id"],
                          **{name: getattr(call.body, name) for name in call.body.model_fields_set})


def add_note(call: Call) -> Note:
    return sharing.add_note(actor=call.actor, conversation_id=call.path["id"], text=call.body.text)


def notes(call: Call) -> Page:
    return sharing.list_notes(actor=call.actor, conversation_id=call.path["id"], **dict(call.query))


def messages(call: Call) -> Page:
    return conversations.get_messages(actor=call.actor, conversation_id=call.path["id"],
                                      **dict(call.query))


def send(call: Call) -> Reply:
    sent = outbound.send_message(actor=call.actor, conversation_id=call.path["id"], **dict(call.body))
    return Reply(sent.record, status=sent.status)


def resume_send(call: Call, message_id: str) -> Reply:
    """A retry under the key of a request that died after storing its message: that message, never a second."""
    sent = outbound.settle(message_id)
    return Reply(sent.record, status=sent.status)


_start = op("POST", "/inbox/conversations", start, summary="Start a conversation, or fetch the contact's one",
            tag="Inbox", operation_id="startConversation", ok=201, body=StartConversation,
            answer=Conversation,
            description="201 with a new conversation, or 200 with the one the contact already has on the account "
                        "(same `externalConversationId`, or same normalised `contactHandle`: case-insensitive, "
                        "leading @ dropped, WhatsApp numbers in E.164). One of `contactHandle` and "
                        "`externalConversationId` is required. Never two conversations for one contact, also under "
                        "concurrent calls. A disconnected account → 409.")
_start.responses[200] = Conversation

_send = op("POST", "/conversations/{id}/messages", send, summary="Send a direct message to the contact", tag="Inbox",
           operation_id="sendMessage", ok=201, body=SendMessage, answer=Message, waits=True,
           errors=(409, 502), resume=resume_send,
           description="201 with `status: sent` and the platform's `platformMessageId`. The platform asked to slow "
                       "down (429 or its own throttling) → 202 with `status: pending`: a worker sends it when the "
                       "platform allows, once, and `message.sent` or `message.failed` follows. The platform refused "
                       "→ 502 and the message stays with `status: failed` and the reason in `error`. A disconnected "
                       "account → 409. Instagram, Facebook and WhatsApp accept free-form messages only within 24 h "
                       "of the contact's last message, TikTok (Business Messaging) within 48 h: outside it → 422 "
                       "`outside_messaging_window`, before any call. On YouTube the message is a public reply in "
                       "the conversation's comment thread (`comments.insert` with `parentId`). "
                       "Text over the platform's own limit → 422. `buttonLabel` with `buttonUrl` adds a link button "
                       "(rendered as in broadcasts); `mediaIds` attaches completed media where the platform takes "
                       "attachments in a DM (Telegram and WhatsApp: one image or video, the text as its caption, at "
                       "most 1,024 characters); elsewhere, or the wrong kind → 422 naming the field. "
                       "With an `Idempotency-Key`, one key is one message: "
                       "a retry while the first request runs → 409 `idempotency_in_progress`; a retry after it "
                       "finished replays its answer; a retry after it died answers with the message it stored, in "
                       "its current status (202 while `pending` or `sending`, or `unknown` when the process died "
                       "during the platform call: it may have arrived and is never sent again automatically).")
_send.responses[202] = Message

OPERATIONS = [
    _start,
    op("GET", "/conversations", list_, summary="List conversations, newest message first", tag="Inbox",
       operation_id="listConversations", query=ConversationQuery, answer=page_of(Conversation),
       description="Newest `lastMessageAt` first (a conversation without messages sorts by its creation). "
                   "`platform` is upper case and one of the six listed; anything else → 422. Each platform's "
                   "conversations are its own: DM threads (Instagram, Facebook, WhatsApp, Telegram), X's DM "
                   "events (by Account Activity webhook, else polled), TikTok Business Messaging (the person "
                   "writes first), and on YouTube the comment threads on the channel's videos (polled; "
                   "`externalConversationId` is the thread's id). Polled platforms are read every "
                   "`SWITCHBOARD_INBOX_POLL_SECONDS` (default 60) per account. The shared inbox filters by `status`, "
                   "`assigneeId` (`none`: unassigned) and `label`; `q` searches the contact's name and handle and "
                   "the messages' text (whole words, the last one may be cut short after its first character; "
                   "case and accents ignored)."),
    op("GET", "/conversations/{id}", get, summary="Get a conversation", tag="Inbox", operation_id="getConversation",
       answer=Conversation),
    op("PATCH", "/conversations/{id}", update, summary="Change a conversation's status, assignee or labels",
       tag="Inbox", operation_id="updateConversation", body=UpdateConversation, answer=Conversation,
       description="The shared inbox: `status` open, resolved or snoozed (with `snoozedUntil`, a future instant: "
                   "the conversation opens again by itself then, or when the contact writes), `assigneeId` (a "
                   "member who may see the conversation's profile, else 422; null unassigns), `labels` (the whole "
                   "set, at most 20). Only the fields sent change; `conversation.updated` follows."),
    op("GET", "/conversations/{id}/messages", messages, summary="A conversation's messages, oldest first",
       tag="Inbox", operation_id="listMessages", query=PageQuery, answer=page_of(Message)),
    op("GET", "/conversations/{id}/notes", notes, summary="A conversation's internal notes, oldest first",
       tag="Inbox", operation_id="listNotes", query=PageQuery, answer=page_of(Note)),
    op("POST", "/conversations/{id}/notes", add_note, summary="Add an internal note (never sent to the contact)",
       tag="Inbox", operation_id="addNote", ok=201, body=AddNote, answer=Note),
    _send,
]
