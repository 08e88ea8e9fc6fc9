from http_api.declare import op
from http_api.routing import Call, Reply
from service import conversations
from service.validation import page_of


def start(call: Call) -> Reply:
    started = conversations.start_conversation(actor=call.actor, **call.body)
    return Reply(started.conversation, status=201 if started.created else 200)


def list_(call: Call) -> dict:
    return conversations.list_conversations(actor=call.actor, **call.query).as_dict()


def get(call: Call) -> dict:
    return conversations.get_conversation(actor=call.actor, conversation_id=call.path["id"])


def messages(call: Call) -> dict:
    return conversations.get_messages(actor=call.actor, conversation_id=call.path["id"], **call.query).as_dict()


def send(call: Call) -> Reply:
    return Reply(conversations.send_message(actor=call.actor, conversation_id=call.path["id"], **call.body),
                 status=201)


_start = op("POST", "/inbox/conversations", start, summary="Start a conversation, or fetch the contact's one",
            tag="Inbox", operation_id="startConversation", ok=201, body=conversations.START,
            answer=conversations.RECORD,
            description="201 with a new conversation, or 200 with the one the contact already has on the account "
                        "(same `externalConversationId`, or same normalised `contactHandle`: case-insensitive, "
                        "leading @ dropped, WhatsApp numbers in E.164). One of `contactHandle` and "
                        "`externalConversationId` is required. Never two conversations for one contact, also under "
                        "concurrent calls. A disconnected account → 409.")
_start.responses[200] = conversations.RECORD

OPERATIONS = [
    _start,
    op("GET", "/conversations", list_, summary="List conversations, newest message first", tag="Inbox",
       operation_id="listConversations", paged=True, query=conversations.LIST_QUERY,
       answer=page_of(conversations.RECORD),
       description="Newest `lastMessageAt` first (a conversation without messages sorts by its creation). "
                   "`platform` is upper case and one of the six listed; anything else → 422."),
    op("GET", "/conversations/{id}", get, summary="Get a conversation", tag="Inbox", operation_id="getConversation",
       answer=conversations.RECORD),
    op("GET", "/conversations/{id}/messages", messages, summary="A conversation's messages, oldest first",
       tag="Inbox", operation_id="listMessages", paged=True, answer=page_of(conversations.MESSAGE)),
    op("POST", "/conversations/{id}/messages", send, summary="Send a direct message to the contact", tag="Inbox",
       operation_id="sendMessage", ok=201, body=conversations.SEND, answer=conversations.MESSAGE, waits=True,
       errors=(409, 502),
       description="201 with `status: sent` and the platform's `platformMessageId`. The platform refused → 502 "
                   "and the message stays with `status: failed` and the reason in `error`. A disconnected "
                   "account → 409. Instagram, Facebook and WhatsApp accept free-form messages only within 24 h "
                   "of the contact's last message: outside it → 422 `outside_messaging_window`, before any call. "
                   "Text over the platform's own limit → 422."),
]
