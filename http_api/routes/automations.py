from http_api.declare import op
from http_api.routing import Call
from kit.pagination import Page
from kit.shapes import PageQuery, page_of
from service.automations import ops as automations
from service.automations.shapes import (
    AutomationDeleted,
    AutomationLog,
    AutomationQuery,
    CommentAutomation,
    CreateCommentAutomation,
    UpdateCommentAutomation,
)

TAG = "Comment automations"

_ON_COMMENT = (
    "On a comment on a watched post (`mediaIds`; empty: every post, also later ones) that matches `keywords` "
    "under `matchType` (case and accents ignored): a private reply DM (`dmText`, with its button) to the "
    "commenter, sent once through the sending engine into the conversation with them; the public reply under "
    "the comment when `publicReplyText` is set; a log row; `comment.received` and `automation.triggered` events; "
    "enrolment in the active `comment_automation` sequences that name the automation. The account's own comments "
    "never trigger; a comment delivered twice is acted on once; a comment gets one private reply (the platform's "
    "rule), within 7 days of it. Instagram and Facebook accounts only.")


def create(call: Call) -> CommentAutomation:
    return automations.create(actor=call.actor, **dict(call.body))


def list_(call: Call) -> Page:
    return automations.list_automations(actor=call.actor, **dict(call.query))


def get(call: Call) -> CommentAutomation:
    return automations.get(actor=call.actor, automation_id=call.path["id"])


def update(call: Call) -> CommentAutomation:
    changes = {name: getattr(call.body, name) for name in call.body.model_fields_set}
    return automations.update(actor=call.actor, automation_id=call.path["id"], **changes)


def delete(call: Call) -> AutomationDeleted:
    return automations.delete(actor=call.actor, automation_id=call.path["id"])


def logs(call: Call) -> Page:
    return automations.list_logs(actor=call.actor, automation_id=call.path["id"], **dict(call.query))


OPERATIONS = [
    op("POST", "/comment-automations", create, summary="Create a comment automation", tag=TAG,
       operation_id="createCommentAutomation", ok=201, body=CreateCommentAutomation, answer=CommentAutomation,
       description=_ON_COMMENT + " `keywords` is required unless `matchType` is `any`; `dmButtonLabel` and "
                   "`dmButtonUrl` together or neither (an https URL); `dmText` within the platform's DM limit."),
    op("GET", "/comment-automations", list_, summary="List comment automations", tag=TAG,
       operation_id="listCommentAutomations", query=AutomationQuery, answer=page_of(CommentAutomation),
       description="Oldest first, each with its `stats`."),
    op("GET", "/comment-automations/{id}", get, summary="Get a comment automation with its stats", tag=TAG,
       operation_id="getCommentAutomation", answer=CommentAutomation),
    op("PATCH", "/comment-automations/{id}", update, summary="Change a comment automation", tag=TAG,
       operation_id="updateCommentAutomation", body=UpdateCommentAutomation, answer=CommentAutomation,
       description="Any subset of the fields; the others keep their value. `dmButtonLabel: \"\"` or "
                   "`dmButtonUrl: \"\"` removes the button (both fields); `publicReplyText: null` removes the public "
                   "reply; `status: paused` makes it ignore comments until it is `active` again."),
    op("DELETE", "/comment-automations/{id}", delete, summary="Delete a comment automation", tag=TAG,
       operation_id="deleteCommentAutomation", answer=AutomationDeleted,
       description="Deletes it with its log. Private replies already queued are still sent; public replies not yet "
                   "posted are dropped."),
    op("GET", "/comment-automations/{id}/logs", logs, summary="What the automation did with each comment", tag=TAG,
       operation_id="listCommentAutomationLogs", query=PageQuery, answer=page_of(AutomationLog),
       description="Newest first: one row per comment on a watched post, with `matched`, the private reply's "
                   "`dmStatus` (as it stands now), the public reply's `replyStatus`, and a `reason` when it did less."),
]
