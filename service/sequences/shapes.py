"""The shapes of sequences and their enrolments: what `/v1` and the MCP tools take and answer."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field

from kit import matching
from kit.matching import MATCH_TYPES
from kit.shapes import LEFT_OUT, Body, HttpsUrl, Id, Instant, NullableInstant, PageQuery, Query, Record, rule
from service.inbox.shapes import SentTemplate, Template

TRIGGERS = ("conversation_started", "comment_automation", "story_reply", "manual")
STATUSES = ("active", "paused")
ENROLLMENT_STATUSES = ("active", "completed", "stopped", "cancelled")
STEP_OUTCOMES = ("queued", "skipped")
MAX_STEPS = 20
MAX_DELAY_MINUTES = 525_600  # a year
MAX_TEXT = 4096

Name = Annotated[str, Field(min_length=1, max_length=255)]
def _matchable(value: str) -> str:
    if not matching.can_match(value):
        raise rule("must hold a letter or a digit (blanks, punctuation and symbols alone match nothing)")
    return value


Keyword = Annotated[str, Field(min_length=1, max_length=100, examples=["promo"]), AfterValidator(_matchable)]
Keywords = Annotated[list[Keyword], Field(max_length=100, description=(
    "Matched against the text ignoring case and accents (`Café` matches `cafe`)."))]
MatchType = Literal[MATCH_TYPES]  # type: ignore[valid-type]
ButtonLabel = Annotated[str, Field(min_length=1, max_length=255, examples=["Open the guide"], description=(
    "Stored whole; the platforms show the first 20 characters. Give it with `buttonUrl`, or neither."))]


ButtonUrl = Annotated[HttpsUrl, Field(max_length=2048, examples=["https://example.com/guide"],
                                      description="Absolute https URL; with `buttonLabel`.")]

TRIGGER_HELP = (
    "`conversation_started`: every new conversation on the account (the contact wrote first, or it was started "
    "through the API); `comment_automation`: conversations that the automation `automationId` sent its DM to; "
    "`story_reply`: a contact's reply to one of the account's stories, filtered by `keywords` and `matchType` "
    "(no keywords: every story reply); `manual`: only `POST /v1/sequences/{id}/enroll`.")


class Step(Body):
    delay_minutes: Annotated[int, Field(ge=0, le=MAX_DELAY_MINUTES, description=(
        "Minutes after the previous step's due time (the first step: after enrolment)."))]
    text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT, examples=["Did you get a chance to look?"])] = Field(
        LEFT_OUT, description="Required, unless the step sends a WhatsApp `template`.")
    button_label: ButtonLabel = LEFT_OUT
    button_url: ButtonUrl = LEFT_OUT
    template: Template = Field(LEFT_OUT, description=(
        "WhatsApp only, instead of `text`: an approved template, checked when saved; it reaches the contact also "
        "outside the 24 h window. Takes no button."))


Steps = Annotated[list[Step], Field(min_length=1, max_length=MAX_STEPS)]


# -- requests ----------------------------------------------------------------------------------


class CreateSequence(Body):
    account_id: Id
    name: Name
    trigger: Literal[TRIGGERS] = Field(description=TRIGGER_HELP)  # type: ignore[valid-type]
    automation_id: Id = Field(LEFT_OUT, description=(
        "Required with trigger `comment_automation`: a comment automation on the same account."))
    keywords: Keywords = Field(default_factory=list)
    match_type: MatchType = Field("contains", description=(
        "How `keywords` meet a story reply: `contains` (a keyword appears in the text), `exact` (the whole text "
        "equals a keyword, blanks and punctuation around it ignored) or `any`. Default `contains`."))
    stop_on_reply: bool = Field(False, description=(
        "When true, a message from the contact after enrolment stops the enrolment (`status: stopped`, "
        "`reason: replied`) before any further step. Default false."))
    steps: Steps
    status: Literal[STATUSES] = Field("active", description=(  # type: ignore[valid-type]
        "`paused`: no step is sent and no trigger enrols; on resume the steps that fell due meanwhile are sent "
        "at once, in order."))


class UpdateSequence(Body):
    """The fields to change; the ones left out keep their value."""

    name: Name = LEFT_OUT
    trigger: Literal[TRIGGERS] = Field(LEFT_OUT, description=TRIGGER_HELP)  # type: ignore[valid-type]
    automation_id: Id | None = Field(LEFT_OUT, description=(
        "Required with trigger `comment_automation`; cleared when the trigger changes to another one."))
    keywords: Keywords = LEFT_OUT
    match_type: MatchType = LEFT_OUT
    stop_on_reply: bool = LEFT_OUT
    steps: Steps = LEFT_OUT
    status: Literal[STATUSES] = LEFT_OUT  # type: ignore[valid-type]


class UpdateSequenceTool(UpdateSequence):
    """`update_sequence` as an MCP tool: the sequence's id is an argument (on /v1, the path)."""

    sequence_id: Id


class SequenceQuery(PageQuery):
    account_id: Id = LEFT_OUT
    status: Literal[STATUSES] = LEFT_OUT  # type: ignore[valid-type]


class EnrollParameters(Query):
    conversation_id: Id = Field(LEFT_OUT, description="The conversation to enrol (or in the JSON body).")


class EnrollBody(Body):
    conversation_id: Id = Field(LEFT_OUT, description="The conversation to enrol (or in the query).")


class EnrollTool(Body):
    """`enroll_in_sequence` as an MCP tool."""

    sequence_id: Id
    conversation_id: Id


# -- records -----------------------------------------------------------------------------------


class StepRecord(Record):
    delay_minutes: int
    text: str | None
    template: SentTemplate | None = None
    button_label: str | None = None
    button_url: str | None = None


def _empty(value: Any) -> Any:
    return [] if value is None else value


class Sequence(Record):
    id: str
    account_id: str
    name: str
    trigger: Literal[TRIGGERS]  # type: ignore[valid-type]
    automation_id: str | None
    keywords: Annotated[list[str], BeforeValidator(_empty)]
    match_type: MatchType
    stop_on_reply: bool
    steps: list[StepRecord]
    status: Literal[STATUSES]  # type: ignore[valid-type]
    created_at: Instant
    updated_at: Instant


class SequenceDeleted(Record):
    id: str
    deleted: bool
    cancelled_enrollments: int = Field(ge=0, description="Active enrolments that were cancelled.")


class StepOutcome(Record):
    step: int = Field(ge=1, description="The step's number, from 1.")
    status: Literal[STEP_OUTCOMES] = Field(description=(  # type: ignore[valid-type]
        "`queued`: handed to sending (its message's status tells the rest); `skipped`: not sent, see `reason`."))
    message_id: str | None
    reason: str | None = Field(description="Why a step was skipped, e.g. `outside_messaging_window`.")
    at: Instant


class Enrollment(Record):
    id: str
    sequence_id: str
    conversation_id: str
    status: Literal[ENROLLMENT_STATUSES]  # type: ignore[valid-type]
    current_step: int = Field(ge=0, description="Steps handled so far (sent or skipped): 0 before the first.")
    next_step_at: NullableInstant = Field(description="When the next step is due; null once ended.")
    enrolled_at: Instant
    ended_at: NullableInstant
    reason: str | None = Field(description=(
        "Why it stopped or was cancelled: `replied`, `sequence_deleted`, `account_disconnected`."))
    history: Annotated[list[StepOutcome], BeforeValidator(_empty)] = Field(description="Each step handled, in order.")
    created_at: Instant
    updated_at: Instant
