"""The shapes of connected accounts: what `/v1` and the MCP tools take and answer."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, computed_field

from kit.shapes import LEFT_OUT, Body, Id, Instant, NullableInstant, PageQuery, Record
from service.accounts import adapters
from service.common import signals

PLATFORMS = ("instagram", "whatsapp", "tiktok", "telegram", "youtube", "x", "facebook", "meta_ads", "linkedin")
STATUSES = ("connected", "disconnected")


# -- requests ----------------------------------------------------------------------------------


class AccountQuery(PageQuery):
    profile_id: Id = LEFT_OUT
    platform: Literal[PLATFORMS] = LEFT_OUT  # type: ignore[valid-type]
    status: Literal[STATUSES] = LEFT_OUT  # type: ignore[valid-type]


class AccountRef(Body):
    """An MCP tool's argument naming one account (on /v1, the path)."""

    account_id: Id


# -- records -----------------------------------------------------------------------------------


class Account(Record):
    id: str
    profile_id: str
    platform: Literal[PLATFORMS]  # type: ignore[valid-type]
    platform_account_id: str
    username: str | None
    display_name: str | None
    status: Literal[STATUSES]  # type: ignore[valid-type]
    needs_reauth: bool = Field(description="True when the platform rejected the stored credentials.")
    connected_at: Instant
    disconnected_at: NullableInstant
    created_at: Instant
    updated_at: Instant

    @computed_field(description=(  # type: ignore[prop-decorator]
        "What the platform allows: limits, media, buttons, window, pace; `conversationKind` (`direct`, or "
        "`comment_thread` on YouTube) and `inbound` (`webhook`, `poll`, `webhook_or_poll`). On X, TikTok and "
        "YouTube also `inbox`: how messages arrive now (`arrivesBy`), `lastPolledAt`, TikTok's "
        "`businessAccount` (false: a personal account, `dm` false) and YouTube's `quota` of the day "
        "(`accountUnitsToday`, `projectUnitsToday`, `dailyLimit`, `pollBudget`). On TikTok `grants`: "
        "`{messaging: connected|missing|lapsed}`, TikTok API for Business's separate grant that messaging "
        "takes (`dm` false until it is `connected`)."))
    @property
    def capabilities(self) -> dict[str, Any]:
        found = adapters.capabilities(self.platform)
        signals.account_described.send(self.id, self.platform, found)  # the inbox adds where it stands
        if adapters.adapter(self.platform).grants:
            # The separate grants' states, read from the stored credentials (never shown themselves).
            states = adapters.grant_states_of(self.id)
            found["grants"] = states
            if states.get("messaging", "connected") != "connected":
                found["dm"] = False  # until the messaging grant is connected
        return found


class AccountDeleted(Record):
    id: str
    deleted: bool
    post_targets: int = Field(ge=0)
    conversations: int = Field(ge=0)


# Platform data passed through as the platform gave it: the models describe it (for the document
# and the tools' output schemas), the answers are not rebuilt from them.


class PublishOptions(Record):
    """TikTok: nickname, username, avatarUrl, privacyLevels, commentDisabled, duetDisabled, stitchDisabled,
    maxVideoDurationSec (live from the platform); other platforms: their static choices."""

    model_config = ConfigDict(extra="allow")
    platform: Literal[PLATFORMS]  # type: ignore[valid-type]


class InstagramParticipant(Record):
    model_config = ConfigDict(extra="allow")
    id: str
    username: str | None = None


class InstagramConversation(Record):
    model_config = ConfigDict(extra="allow")
    id: str
    updated_time: str | None = None
    participants: list[InstagramParticipant]


class InstagramConversations(Record):
    data: list[InstagramConversation]


class TemplateInfo(Record):
    """An approved WhatsApp message template of the account."""

    name: str
    language: str
    category: str
    parameters: int = Field(ge=0, description="How many parameters its body takes (`{{1}}`, `{{2}}`, ...).")
    parameter_format: Literal["POSITIONAL", "NAMED"] = Field("POSITIONAL", description=(
        "NAMED: its body's placeholders are names (`{{first_name}}`); give `parameters` in the order of "
        "`parameterNames`."))
    parameter_names: list[str] = Field(default_factory=list, description="A NAMED template's placeholders, in order.")
    header_format: Literal["IMAGE", "VIDEO", "DOCUMENT"] | None = Field(None, description=(
        "A media header: a send gives its `headerMediaUrl`."))
    header_variable: bool = Field(False, description=(
        "Its TEXT header has a variable (`{{1}}`, or a name): a send gives its value as `headerText`."))
    header_parameter_name: str | None = Field(None, description="A NAMED template's header variable's name.")
    button_parameters: list[int] = Field(default_factory=list, description=(
        "Indexes of its URL buttons that take a variable: a send gives one `buttonParameters` value each, in order."))


class Templates(Record):
    data: list[TemplateInfo]
