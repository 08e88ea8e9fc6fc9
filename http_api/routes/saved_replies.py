from http_api.declare import op
from http_api.routing import Call
from kit.pagination import Page
from kit.shapes import PageQuery, page_of
from service.inbox import saved_replies
from service.inbox.shapes import SavedReply, SavedReplyBody, SavedReplyChange, SavedReplyDeleted


def list_(call: Call) -> Page:
    return saved_replies.list_replies(actor=call.actor, **dict(call.query))


def create(call: Call) -> SavedReply:
    return saved_replies.create(actor=call.actor, **dict(call.body))


def get(call: Call) -> SavedReply:
    return saved_replies.get(actor=call.actor, reply_id=call.path["id"])


def update(call: Call) -> SavedReply:
    return saved_replies.update(actor=call.actor, reply_id=call.path["id"],
                                **{name: getattr(call.body, name) for name in call.body.model_fields_set})


def delete(call: Call) -> SavedReplyDeleted:
    return saved_replies.delete(actor=call.actor, reply_id=call.path["id"])


OPERATIONS = [
    op("GET", "/saved-replies", list_, summary="List saved replies, by name", tag="Inbox",
       operation_id="listSavedReplies", query=PageQuery, answer=page_of(SavedReply)),
    op("POST", "/saved-replies", create, summary="Save a reply for reuse", tag="Inbox",
       operation_id="createSavedReply", ok=201, body=SavedReplyBody, answer=SavedReply,
       description="Variables `{{contact.name}}`, `{{contact.handle}}`, `{{account.name}}` are filled in when "
                   "it is sent (`savedReplyId` of POST /v1/conversations/{id}/messages)."),
    op("GET", "/saved-replies/{id}", get, summary="Get a saved reply", tag="Inbox", operation_id="getSavedReply",
       answer=SavedReply),
    op("PATCH", "/saved-replies/{id}", update, summary="Change a saved reply", tag="Inbox",
       operation_id="updateSavedReply", body=SavedReplyChange, answer=SavedReply),
    op("DELETE", "/saved-replies/{id}", delete, summary="Delete a saved reply", tag="Inbox",
       operation_id="deleteSavedReply", answer=SavedReplyDeleted),
]
