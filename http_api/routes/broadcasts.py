from http_api.declare import op
from http_api.routing import Call, Reply
from kit.pagination import Page
from kit.shapes import page_of
from service.broadcasts import ops as broadcasts
from service.broadcasts.shapes import (
    Broadcast,
    BroadcastDeleted,
    BroadcastQuery,
    CreateBroadcast,
    Recipient,
    RecipientQuery,
    UpdateBroadcast,
)


def create(call: Call) -> Reply:
    return Reply(broadcasts.create(actor=call.actor, **dict(call.body)), status=201)


def list_(call: Call) -> Page:
    return broadcasts.list_broadcasts(actor=call.actor, **dict(call.query))


def get(call: Call) -> Broadcast:
    return broadcasts.get(actor=call.actor, broadcast_id=call.path["id"])


def resume_create(call: Call, broadcast_id: str) -> Reply:
    """A retry under the key of a request that died after storing its broadcast: that one, never a second."""
    return Reply(broadcasts.get(actor=call.actor, broadcast_id=broadcast_id), status=201)


def update(call: Call) -> Broadcast:
    # Only the fields sent: an omitted one keeps its value, an explicit null clears it.
    sent = {name: getattr(call.body, name) for name in call.body.model_fields_set}
    return broadcasts.update(actor=call.actor, broadcast_id=call.path["id"], **sent)


def cancel(call: Call) -> Broadcast:
    return broadcasts.cancel(actor=call.actor, broadcast_id=call.path["id"])


def delete(call: Call) -> BroadcastDeleted:
    return broadcasts.delete(actor=call.actor, broadcast_id=call.path["id"])


def recipients(call: Call) -> Page:
    return broadcasts.recipients(actor=call.actor, broadcast_id=call.path["id"], **dict(call.query))


_RULES = ("`buttonLabel` and `buttonUrl` together or neither (422 naming both); `buttonUrl` an absolute https URL; "
          "a label over 20 characters is stored whole and sent cut to 20. `audience.conversationIds`: conversations "
          "of the broadcast's account (any other id → 422, whether or not it exists elsewhere); it wins over "
          "`activeWithinDays` (1..365). `scheduledFor` with an offset or `Z` is an instant, without one it is read "
          "in `timezone` (IANA; unknown → 422; neither → 422); more than 60 s in the past → 422; a wall time in a "
          "DST gap moves forward by the gap, one in an overlap takes the first occurrence. `scheduledFor` and "
          "`sendNow` together → 422. No `scheduledFor` and no `sendNow` → `draft`. The account's platform must "
          "have direct messages and take the text's length (422 otherwise); scheduling on a disconnected account "
          "→ 409.")

_SENDING = ("When it starts (within a scheduler tick of its time; `sendNow` at once) the audience is resolved: "
            "`conversationIds`, else the contacts whose last message is within `activeWithinDays`, else every "
            "conversation of the account. Each recipient gets the message at most once, at the platform's pace "
            "(429 answers wait, never fail a recipient); a recipient outside the platform's messaging window is "
            "`skipped` with reason `outside_messaging_window`. Buttons: Instagram and Facebook a button template, "
            "WhatsApp an interactive `cta_url`, Telegram an inline keyboard `url` button; where the platform "
            "refuses the button (or has none) the text goes with the URL on its own line after it. "
            "`broadcast.started` and `broadcast.completed` events carry the broadcast (also `completed` for one "
            "that `failed`, e.g. its account was disconnected before it reached everyone).")

_TEMPLATE = ("A WhatsApp broadcast may send `template: {name, language, parameters?}` instead of `text`: an approved "
             "template of the account, checked with WhatsApp when saved (unknown, unapproved, another language or "
             "the wrong number of parameters → 422 naming `template`). It is the only message that reaches contacts "
             "outside the 24 h window, so no recipient is skipped for the window; it takes no button.")

OPERATIONS = [
    op("POST", "/broadcasts", create, summary="Create a broadcast", tag="Broadcasts", operation_id="createBroadcast",
       ok=201, body=CreateBroadcast, answer=Broadcast, errors=(409,), waits=True, resume=resume_create,
       description=_RULES + " " + _TEMPLATE + " " + _SENDING),
    op("GET", "/broadcasts", list_, summary="List broadcasts, newest first", tag="Broadcasts",
       operation_id="listBroadcasts", query=BroadcastQuery, answer=page_of(Broadcast)),
    op("GET", "/broadcasts/{id}", get, summary="Get a broadcast", tag="Broadcasts", operation_id="getBroadcast",
       answer=Broadcast),
    op("PUT", "/broadcasts/{id}", update, summary="Change a draft or scheduled broadcast", tag="Broadcasts",
       operation_id="updateBroadcast", body=UpdateBroadcast, answer=Broadcast, errors=(409,), waits=True,
       description="Every field but `accountId`; omitted fields keep their value, `null` clears one. Only a "
                   "`draft` or `scheduled` broadcast (else 409). The result is `scheduled` when it has a "
                   "`scheduledFor` or `sendNow: true` (a new `scheduledFor` replaces `sendNow` and the other way "
                   "round), else `draft`. `template` replaces `text` and the other way round. " + _RULES),
    op("POST", "/broadcasts/{id}/cancel", cancel, summary="Cancel a scheduled or sending broadcast",
       tag="Broadcasts", operation_id="cancelBroadcast", answer=Broadcast, errors=(409,),
       description="`scheduled` or `sending` → `cancelled` (a cancelled one answers the same again; any other "
                   "status → 409). Recipients whose message no worker has picked up yet are `skipped` with reason "
                   "`cancelled` and that message is deleted unsent; a message already being sent finishes, and "
                   "its recipient and the counts follow it."),
    op("DELETE", "/broadcasts/{id}", delete, summary="Delete a draft broadcast", tag="Broadcasts",
       operation_id="deleteBroadcast", answer=BroadcastDeleted, errors=(409,),
       description="Only a `draft` (else 409: cancel a scheduled or sending one)."),
    op("GET", "/broadcasts/{id}/recipients", recipients, summary="A broadcast's recipients and their outcome",
       tag="Broadcasts", operation_id="listBroadcastRecipients", query=RecipientQuery, answer=page_of(Recipient),
       description="One row per conversation the audience resolved to when sending started, in the order of the "
                   "fan-out: `pending` until its message finishes, then `sent`, `failed` (with the platform's "
                   "reason), `unknown` (the worker stopped during the platform call: it may have arrived, and is "
                   "never sent again) or `skipped` (`outside_messaging_window`, `cancelled`)."),
]
