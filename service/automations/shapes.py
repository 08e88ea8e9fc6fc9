"""The shapes of comment automations and their logs: what `/v1` and the MCP tools take and answer."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field

from kit import matching
from kit.matching import MATCH_TYPES
from kit.shapes import LEFT_OUT, Body, Id, Instant, PageQuery, Record, is_https_url, rule

STATUSES = ("active", "paused")
DM_STATUSES = ("pending", "sending", "sent", "delivered", "read", "failed", "unknown")
REPLY_STATUSES = ("pending", "posting", "posted", "failed", "unknown")
MAX_TEXT = 4096

Name = Annotated[str, Field(min_length=1, max_length=255)]
MediaId = Annotated[str, Field(min_length=1, max_length=255, examples=["17895695668004550"])]
def _matchable(value: str) -> str:
    if not matching.can_match(value):
        raise rule("must hold a letter or a digit (blanks, punctuation and symbols alone match nothing)")
    return value


Keyword = Annotated[str, Field(min_length=1, max_length=100, examples=["price"]), AfterValidator(_matchable)]
MatchType = Literal[MATCH_TYPES]  # type: ignore[valid-type]


def _https_or_empty(value: str) -> str:
    if value != "" and not is_https_url(value):
        raise rule("must be an absolute https URL (or \"\" to remove the button)")
    return value


# "" is a value here: it removes the button (both fields).
DmButtonLabel = Annotated[str, Field(max_length=255, examples=["Prices"], description=(
    "Stored whole; the platforms show the first 20 characters. Give it with `dmButtonUrl`, or neither; `\"\"` "
    "removes the button."))]
DmButtonUrl = Annotated[str, AfterValidator(_https_or_empty), Field(
    max_length=2048, examples=["https://example.com/prices"], json_schema_extra={"format": "uri"},
    description="Absolute https URL, with `dmButtonLabel`; `\"\"` removes the button.")]

PublicReplyText = Annotated[str, Field(min_length=1, max_length=MAX_TEXT, examples=["Sent you a DM!"])]
MEDIA_HELP = ("The platform's ids of the posts to watch. Empty (the default): every post of the account, also "
              "later ones.")
KEYWORDS_HELP = ("Matched against the comment ignoring case and accents (`Café` matches `cafe`). Required unless "
                 "`matchType` is `any`.")
MATCH_HELP = ("`contains` (a keyword appears in the comment), `exact` (the whole comment equals a keyword, blanks and "
              "punctuation around it ignored) or `any` (every comment).")
ONCE_HELP = ("At most one DM per commenter for this automation, also when their comments arrive at once; a comment "
             "from someone already messaged is logged as skipped (`reason: once_per_user`). Default false.")


# -- requests ----------------------------------------------------------------------------------


class CreateCommentAutomation(Body):
    account_id: Id = Field(description="An Instagram or Facebook account (the platforms with private replies).")
    name: Name
    media_ids: Annotated[list[MediaId], Field(max_length=500, description=MEDIA_HELP)] = Field(default_factory=list)
    keywords: Annotated[list[Keyword], Field(max_length=100, description=KEYWORDS_HELP)] = Field(
        default_factory=list)
    match_type: MatchType = Field(description=MATCH_HELP)
    dm_text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT, examples=["Here is our price list"], description=(
        "The private reply sent to the commenter (within the platform's own text limit)."))]
    dm_button_label: DmButtonLabel = LEFT_OUT
    dm_button_url: DmButtonUrl = LEFT_OUT
    public_reply_text: PublicReplyText | None = Field(None, description="Posted under the comment when set.")
    once_per_user: bool = Field(False, description=ONCE_HELP)
    status: Literal[STATUSES] = Field("active", description="`paused`: comments are ignored.")  # type: ignore[valid-type]


class UpdateCommentAutomation(Body):
    """Any subset; the fields left out keep their value. `dmButtonLabel: ""` or `dmButtonUrl: ""` removes
    the button (both fields); `publicReplyText: null` removes the public reply."""

    name: Name = LEFT_OUT
    media_ids: Annotated[list[MediaId], Field(max_length=500, description=MEDIA_HELP)] = LEFT_OUT
    keywords: Annotated[list[Keyword], Field(max_length=100, description=KEYWORDS_HELP)] = LEFT_OUT
    match_type: MatchType = Field(LEFT_OUT, description=MATCH_HELP)
    dm_text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT)] = LEFT_OUT
    dm_button_label: DmButtonLabel = LEFT_OUT
    dm_button_url: DmButtonUrl = LEFT_OUT
    public_reply_text: PublicReplyText | None = LEFT_OUT
    once_per_user: bool = Field(LEFT_OUT, description=ONCE_HELP)
    status: Literal[STATUSES] = LEFT_OUT  # type: ignore[valid-type]


class UpdateCommentAutomationTool(UpdateCommentAutomation):
    """`update_comment_automation` as an MCP tool: the automation's id is an argument (on /v1, the path)."""

    automation_id: Id


class AutomationQuery(PageQuery):
    account_id: Id = LEFT_OUT
    status: Literal[STATUSES] = LEFT_OUT  # type: ignore[valid-type]


# -- records -----------------------------------------------------------------------------------


class AutomationStats(Record):
    triggered: int = Field(ge=0, description="Comments the automation acted on (a DM or a public reply queued).")
    dms_sent: int = Field(ge=0, description="Private replies the platform accepted.")
    replies_posted: int = Field(ge=0, description="Public replies posted.")
    skipped: int = Field(ge=0, description="Matching comments it did not act on (see the log's `reason`).")


def _empty(value: Any) -> Any:
    return [] if value is None else value


class CommentAutomation(Record):
    id: str
    account_id: str
    name: str
    media_ids: Annotated[list[str], BeforeValidator(_empty)]
    keywords: Annotated[list[str], BeforeValidator(_empty)]
    match_type: MatchType
    dm_text: str
    dm_button_label: str | None
    dm_button_url: str | None
    public_reply_text: str | None
    once_per_user: bool
    status: Literal[STATUSES]  # type: ignore[valid-type]
    stats: AutomationStats
    created_at: Instant
    updated_at: Instant


class AutomationDeleted(Record):
    id: str
    deleted: bool


class AutomationLog(Record):
    id: str = Field(examples=["cal_01jd8x2m4q7r9t5v3w6y8z0b1c"])
    automation_id: str
    comment_id: str = Field(examples=["17858893269000001"], description="The platform's id of the comment.")
    media_id: str | None = Field(examples=["17895695668004550"])
    commenter_id: str | None = Field(examples=["6301234567890123"], description="The platform's id of its author.")
    commenter_handle: str | None = Field(examples=["ana.silva"])
    text: str | None = Field(examples=["Qual o preço?"])
    matched: bool = Field(description="Whether the comment matched the keywords.")
    dm_status: Literal[DM_STATUSES] | None = Field(description=(  # type: ignore[valid-type]
        "The private reply's message status (as in the inbox); null when none was sent."))
    reply_status: Literal[REPLY_STATUSES] | None = Field(description=(  # type: ignore[valid-type]
        "The public reply's status; null when none was due."))
    reason: str | None = Field(description=(
        "Why the automation did not do everything: `no_match`, `once_per_user`, `already_replied` (the comment "
        "had its private reply), `outside_messaging_window` (the comment is older than the 7 days of private "
        "replies), `account_disconnected`."))
    conversation_id: str | None = Field(description="The conversation with the commenter, where the DM is.")
    message_id: str | None = Field(description="The private reply's message.")
    created_at: Instant
