"""A post's targets checked before anything is saved: every problem in one 422, each named by its
field (`targets[1].content`, `mediaIds`). What differs per platform is asked of its adapter (its
capabilities as data, its `post_rules`); the service never branches on a platform's name.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from dataclasses import dataclass
from typing import Any

from kit import scheduling
from kit.errors import FieldProblem, ValidationFailed
from platforms.base import PlatformFailure
from platforms.rules import MediaInfo, PostDraft, PreviewPart
from service.accounts import adapters
from service.identity.auth import Actor
from service.media import ops as media
from service.posts.records import options_of
from storage.db import reading
from storage.models import Account, Media


@dataclass(frozen=True)
class Checked:
    accounts: list[Account]
    due: dt.datetime | None
    media: list[Media]


def check_target(index: int, account: Account, text: str, items: list[Media], options: dict[str, Any],
                 live_options: dict[str, Any] | None, option_media: dict[str, Media] | None = None
                 ) -> list[FieldProblem]:
    """One target against its platform: the capabilities' limits and media kinds (data), then the
    platform's own rules (`platforms/<name>/rules.py`)."""
    where = f"targets[{index}]"
    adapter = adapters.adapter(account.platform)
    capabilities = adapter.capabilities
    if not capabilities.publish:
        return [FieldProblem(f"{where}.accountId", f"{account.platform} accounts do not publish posts")]
    draft = PostDraft(platform=account.platform, where=where, text=text, media=tuple(_info(m) for m in items),
                      options=options, live_options=live_options,
                      option_media={key: _info(row) for key, row in (option_media or {}).items()})
    problems = adapter.post_rules.text_problems(draft, capabilities)
    videos = draft.videos
    if capabilities.post_media == "required_image_or_video" and not items:
        problems.append(FieldProblem("mediaIds", f"{account.platform} needs an image or a video"))
    if capabilities.post_media == "required_video" and not videos:
        problems.append(FieldProblem("mediaIds", f"{account.platform} needs a video"))
    if capabilities.max_media is not None and len(items) > capabilities.max_media:
        problems.append(FieldProblem("mediaIds", f"{account.platform} takes at most {capabilities.max_media} items"))
    if videos and not capabilities.video_posts:
        problems.append(FieldProblem("mediaIds", f"{account.platform} posts take text and images only"))
    return problems + adapter.post_rules.check(draft)


def _info(row: Media) -> MediaInfo:
    return MediaInfo(content_type=str(row.content_type), size=int(row.size))

def _load_accounts(actor: Actor, targets: list[Any]) -> tuple[list[Account | None], list[FieldProblem]]:
    problems: list[FieldProblem] = []
    wanted = [t.account_id for t in targets]
    found = {a.id: a for a in Account.select().where(Account.id.in_(wanted), Account.workspace == actor.workspace_id)}
    accounts: list[Account | None] = []
    seen: set[str] = set()
    for index, target in enumerate(targets):
        account = found.get(target.account_id)
        if account is None:
            problems.append(FieldProblem(f"targets[{index}].accountId", "is not an account of this workspace"))
        elif target.account_id in seen:
            problems.append(FieldProblem(f"targets[{index}].accountId", "is already a target of this post"))
            account = None
        else:
            actor.require_profile(account.profile_id)
            if account.status != "connected":
                problems.append(FieldProblem(f"targets[{index}].accountId", "is disconnected"))
                account = None
        seen.add(target.account_id)
        accounts.append(account)
    return accounts, problems


# Publish options read from the platform (TikTok's creator_info: 20 queries a minute per account): a
# batch of posts (a week scheduled at once) reads them once a minute, not once a post. Kept per
# process, briefly.
CREATOR_INFO_TTL = 60.0
_creator_cache: dict[str, tuple[float, dict[str, Any]]] = {}
_creator_lock = threading.Lock()


def live_options(account: Account) -> dict[str, Any] | None:
    """What a post to the account is checked against beyond its own options, where its platform's
    rules read some (`PostRules.publish_options`): from the platform, or the stored credentials."""
    rules = adapters.adapter(account.platform).post_rules
    if rules.publish_options == "credentials":
        return rules.options_from_credentials(adapters.context(account).credentials)
    if rules.publish_options == "platform":
        return _read_options(account)
    return None


def _read_options(account: Account) -> dict[str, Any] | None:
    moment = time.monotonic()
    with _creator_lock:
        cached = _creator_cache.get(account.id)
    if cached is not None and cached[0] > moment:
        return cached[1]
    try:
        live = adapters.call(account, lambda adapter, ctx: adapter.publish_options(ctx))
    except PlatformFailure:
        return None
    with _creator_lock:
        _creator_cache[account.id] = (moment + CREATOR_INFO_TTL, live)
    return live


def check(actor: Actor, *, content: str, media_ids: list[str], targets: list[Any], scheduled_for: str | None,
          timezone: str | None, publish_now: bool | None) -> Checked:
    """Every rule of a post, before anything is saved; some platforms' publish options are read live
    from the platform (so call this outside a write transaction)."""
    problems: list[FieldProblem] = []
    if scheduled_for is not None and publish_now:
        problems.append(FieldProblem("publishNow", "give scheduledFor or publishNow, not both"))
    due, time_problems = scheduling.due_at(scheduled_for, timezone)
    problems += time_problems
    with reading():
        found_media = media.completed(actor.workspace_id, media_ids)
        named = [str(options_of(t)["thumbnailMediaId"]) for t in targets if "thumbnailMediaId" in options_of(t)]
        option_media = media.completed(actor.workspace_id, named) if named else {}
        accounts, account_problems = _load_accounts(actor, targets)
    problems += account_problems
    for index, media_id in enumerate(media_ids):
        if media_id not in found_media:
            problems.append(FieldProblem(f"mediaIds[{index}]", "is not a completed media of this workspace"))
    items = [found_media[m] for m in media_ids if m in found_media]
    for index, (target, account) in enumerate(zip(targets, accounts, strict=True)):
        if account is None:
            continue
        text = target.content if target.content is not None else content
        problems += check_target(index, account, text, items, options_of(target), live_options(account),
                                 option_media)
    if problems:
        raise ValidationFailed("Some targets cannot take this post.", details=problems)
    return Checked([a for a in accounts if a is not None], due, items)


# -- for the composer ------------------------------------------------------------------------------
@dataclass(frozen=True)
class TextMeasure:
    """A text as one platform counts it: `used` of `limit` (None: the platform sets no limit)."""

    platform: str
    used: int
    limit: int | None
    unit: str

    @property
    def over(self) -> bool:
        return self.limit is not None and self.used > self.limit


def measure(*, platform: str, text: str, with_media: bool = False) -> TextMeasure:
    """How `platform` counts `text` for a post, with the very rule `check` applies (X weighs it: a
    link 23, CJK and emoji 2; the others count characters against the text or caption limit)."""
    adapter = adapters.adapter(platform)
    rules = adapter.post_rules
    return TextMeasure(platform, rules.text_size(text), rules.text_limit(adapter.capabilities, with_media=with_media),
                       rules.text_unit)


def preview(*, platform: str, text: str, options: dict[str, Any], with_media: bool = False
            ) -> tuple[PreviewPart, ...]:
    """The post as `platform` shows it (its text cut and folded, then a thread's posts), by the very
    rules `check` applies."""
    adapter = adapters.adapter(platform)
    return adapter.post_rules.preview(text, options, adapter.capabilities, with_media=with_media)
