from http_api.declare import op
from http_api.routing import Call, Reply
from kit.errors import ValidationFailed
from kit.pagination import Page
from kit.shapes import PageQuery, page_of
from service.sequences import ops as sequences
from service.sequences.shapes import (
    CreateSequence,
    EnrollBody,
    Enrollment,
    EnrollParameters,
    Sequence,
    SequenceDeleted,
    SequenceQuery,
    UpdateSequence,
)

TAG = "Sequences"


def create(call: Call) -> Sequence:
    return sequences.create(actor=call.actor, **dict(call.body))


def resume_create(call: Call, sequence_id: str) -> Reply:
    """A retry under the key of a request that died after storing its sequence: that one, never a second."""
    return Reply(sequences.get(actor=call.actor, sequence_id=sequence_id), status=201)


def list_(call: Call) -> Page:
    return sequences.list_sequences(actor=call.actor, **dict(call.query))


def get(call: Call) -> Sequence:
    return sequences.get(actor=call.actor, sequence_id=call.path["id"])


def update(call: Call) -> Sequence:
    changes = {name: getattr(call.body, name) for name in call.body.model_fields_set}
    return sequences.update(actor=call.actor, sequence_id=call.path["id"], **changes)


def delete(call: Call) -> SequenceDeleted:
    return sequences.delete(actor=call.actor, sequence_id=call.path["id"])


def enroll(call: Call) -> Enrollment:
    in_query, in_body = call.query.conversation_id, call.body.conversation_id
    if in_query is not None and in_body is not None and in_query != in_body:
        raise ValidationFailed.field("conversationId", "give it in the query or the body, not two different ones")
    return sequences.enroll(actor=call.actor, sequence_id=call.path["id"], conversation_id=in_query or in_body)


def enrollments(call: Call) -> Page:
    return sequences.list_enrollments(actor=call.actor, sequence_id=call.path["id"], **dict(call.query))


OPERATIONS = [
    op("POST", "/sequences", create, summary="Create a sequence", tag=TAG, operation_id="createSequence", ok=201,
       body=CreateSequence, answer=Sequence, waits=True, resume=resume_create,
       description="1 to 20 steps, each sent `delayMinutes` (0..525600) after the previous step's due time (the "
                   "first: after enrolment), with the button rule of broadcasts (`buttonLabel` and `buttonUrl` "
                   "together or neither). A step outside the platform's messaging window is skipped with its reason "
                   "and the sequence goes on. `automationId` is required with trigger `comment_automation` and must "
                   "be an automation on the same account. Events: `sequence.enrolled`, `sequence.completed`, "
                   "`sequence.stopped`. On WhatsApp a step may send `template: {name, language, parameters?}` "
                   "instead of `text`: an approved template, checked with WhatsApp when saved (else 422 naming "
                   "`steps[n].template`); it reaches the contact also outside the 24 h window and takes no button."),
    op("GET", "/sequences", list_, summary="List sequences", tag=TAG, operation_id="listSequences",
       query=SequenceQuery, answer=page_of(Sequence), description="Oldest first."),
    op("GET", "/sequences/{id}", get, summary="Get a sequence", tag=TAG, operation_id="getSequence", answer=Sequence),
    op("PUT", "/sequences/{id}", update, summary="Change a sequence", tag=TAG, operation_id="updateSequence",
       body=UpdateSequence, answer=Sequence, waits=True,
       description="The sequence's fields (not `accountId`); the fields left out keep their value. `status: paused` "
                   "holds every enrolment (no step is sent, no trigger enrols); `active` again sends at once, in "
                   "order, the steps that fell due meanwhile. New `steps` apply to enrolments from their next step."),
    op("DELETE", "/sequences/{id}", delete, summary="Delete a sequence", tag=TAG, operation_id="deleteSequence",
       answer=SequenceDeleted,
       description="Its active enrolments are cancelled (`reason: sequence_deleted`); no further step is sent."),
    op("POST", "/sequences/{id}/enroll", enroll, summary="Enrol a conversation by hand", tag=TAG,
       operation_id="enrollInSequence", query=EnrollParameters, body=EnrollBody, body_required=False,
       answer=Enrollment,
       description="`conversationId` in the query or the JSON body: a conversation on the sequence's account (else "
                   "422). Works for any trigger; in a paused sequence the enrolment waits for the resume. A "
                   "conversation with an active enrolment in this sequence gets that enrolment back (200 either "
                   "way)."),
    op("GET", "/sequences/{id}/enrollments", enrollments, summary="A sequence's enrolments", tag=TAG,
       operation_id="listSequenceEnrollments", query=PageQuery, answer=page_of(Enrollment),
       description="Oldest first, each with its `history` of steps handled."),
]
