"""Sequences: the list, create and edit (trigger, keywords, stop on reply, steps with their delays
and buttons), pause and resume, delete, enrolling a conversation by hand, and the enrolments with
each step's outcome."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from dashboard import views
from dashboard.actions import Thing
from dashboard.forms import PER_PAGE, account_names, account_rows, contact_label, lines, number
from dashboard.views import Seat, data_of, field
from kit.errors import ServiceError
from oauth.shell import in_db
from service.automations import ops as automations
from service.inbox import conversations
from service.sequences import ops as sequences
from service.sequences.shapes import MAX_STEPS, CreateSequence, UpdateSequence

PAGE = "/dashboard/sequences"
TRIGGERS = {"manual": "Manual: only enrolled by hand", "conversation_started": "A conversation starts",
            "comment_automation": "A comment automation messaged the contact",
            "story_reply": "A contact replies to a story"}
MATCH_TYPES = {"contains": "Contains a keyword", "exact": "Is exactly a keyword", "any": "Any reply"}


def _steps(form: FormData) -> list[dict[str, Any]]:
    steps = []
    for n in range(1, MAX_STEPS + 1):
        text = form.get(f"step-{n}-text")
        if not isinstance(text, str) or not text.strip() or form.get(f"step-{n}-remove") == "on":
            continue
        step: dict[str, Any] = {"delayMinutes": number(field(form, f"step-{n}-delay") or "0"), "text": text}
        label, url = field(form, f"step-{n}-buttonLabel"), field(form, f"step-{n}-buttonUrl")
        if label or url:
            step["buttonLabel"], step["buttonUrl"] = label, url
        steps.append(step)
    return steps


def _fields(form: FormData, *, editing: bool) -> dict[str, Any]:
    body: dict[str, Any] = {} if editing else {"accountId": field(form, "accountId")}
    body |= {"name": field(form, "name"), "trigger": field(form, "trigger"),
                            "keywords": lines(form, "keywords", commas=True),
                            "matchType": field(form, "matchType") or "contains",
                            "stopOnReply": form.get("stopOnReply") == "on", "steps": _steps(form),
                            "status": field(form, "status") or "active"}
    if field(form, "automationId"):
        body["automationId"] = field(form, "automationId")
    elif editing:
        body["automationId"] = None
    return body


# A step handed to sending, as its message stands now (a step's own record stops at `queued`).
STEP_STATES = {"pending": "waiting to send", "sending": "sending", "sent": "sent", "delivered": "delivered",
               "read": "read", "failed": "failed", "unknown": "may have been sent (the platform did not answer)"}


def _step_state(step: dict[str, Any], sent: dict[str, str]) -> str:
    if step["status"] != "queued" or not step["messageId"]:
        return str(step["status"])
    return STEP_STATES.get(sent.get(step["messageId"], "pending"), "waiting to send")


def _listing(where: Seat) -> dict[str, Any]:
    actor = where.actor()
    names = account_names(actor)
    listed = sequences.list_sequences(actor=actor, limit=PER_PAGE)
    found = data_of(listed)
    counts = sequences.enrollment_counts(actor=actor, sequence_ids=[s["id"] for s in found])
    return {"sequences": [{**s, "account": names.get(s["accountId"], s["accountId"]), "counts": counts.get(s["id"], {})}
                          for s in found], "total": listed.total}


def _form_data(where: Seat, sequence_id: str | None) -> dict[str, Any]:
    actor = where.actor()
    known = account_rows(actor, capability="dm")
    names = account_names(actor)
    found_automations = [{**a, "account": names.get(a["accountId"], "")}
                         for a in data_of(automations.list_automations(actor=actor, limit=100))]
    # The steps there are, then one spare row: without JavaScript it is how a step is added (the page
    # adds and removes rows itself otherwise, and drops the spare).
    data: dict[str, Any] = {"accounts": known, "automations": found_automations, "sequence": None,
                            "steps": [{}, {}], "spare_step": True, "max_steps": MAX_STEPS}
    if sequence_id:
        record = sequences.get(actor=actor, sequence_id=sequence_id).dump()
        offered = [{**c, "contact": contact_label(c)} for c in data_of(conversations.list_conversations(
            actor=actor, account_id=record["accountId"], limit=100))]
        by_id = {c["id"]: c["contact"] for c in offered}
        listed = data_of(sequences.list_enrollments(actor=actor, sequence_id=sequence_id, limit=100))
        sent = sequences.step_messages(actor=actor, sequence_id=sequence_id, message_ids=[
            h["messageId"] for e in listed for h in e["history"] if h["messageId"]])
        enrolments = [{**e, "contact": by_id.get(e["conversationId"], e["conversationId"]),
                       "history": [{**h, "status": _step_state(h, sent)} for h in e["history"]]} for e in listed]
        spare = len(record["steps"]) < MAX_STEPS
        steps = record["steps"] + [{}] * spare
        counts = sequences.enrollment_counts(actor=actor, sequence_ids=[record["id"]]).get(record["id"], {})
        data.update(sequence={**record, "account": names.get(record["accountId"], record["accountId"]),
                              "counts": counts},
                    steps=steps, spare_step=spare, conversations=offered, enrolments=enrolments)
    return data


SEQUENCES = Thing(
    base=PAGE, noun="sequence", ops=sequences, nav="sequences",
    list_template="sequences.html", list_title="Sequences", list_load=_listing,
    edit_template="sequence.html", edit_load=_form_data,
    edit_context={"triggers": TRIGGERS, "match_types": MATCH_TYPES},
    fields=lambda form, editing: _fields(form, editing=editing),
    create_shape=CreateSequence, update_shape=UpdateSequence,
    # Steps' WhatsApp templates are checked with the platform: the save waits on the network.
    waits=True,
    delete_detail="Its active enrolments are cancelled: no further step is sent.",
)


async def enroll(request: Request) -> Response:
    sequence_id = request.path_params["id"]
    back = f"{PAGE}/{sequence_id}"
    where, form = await views.acting(request)
    conversation_id = field(form, "conversationId")
    try:
        await in_db(lambda: sequences.enroll(actor=where.actor(), sequence_id=sequence_id,
                                             conversation_id=conversation_id or None))
    except ServiceError as problem:  # its 404 names what is missing: the sequence or the conversation
        return views.refused(request, problem, back, problem.message)
    return views.done(request, "Enrolled the conversation.", back, where)
