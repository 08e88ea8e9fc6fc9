"""What the platforms' rules tests share: a target as the service hands it to a platform's rules."""

from __future__ import annotations

from typing import Any

from kit.errors import FieldProblem
from platforms.registry import declared
from platforms.rules import MediaInfo, PostDraft

IMAGE = MediaInfo("image/jpeg", 200_000)
VIDEO = MediaInfo("video/mp4", 5_000_000)


def problems(platform: str, text: str = "hello", media: tuple[MediaInfo, ...] = (), options: dict[str, Any] | None = None,
             **draft: Any) -> dict[str, str]:
    """Every problem the platform finds in one target (its text, its media mix, its options), by field."""
    adapter = declared(platform)
    target = PostDraft(platform=platform, where="targets[0]", text=text, media=media, options=options or {}, **draft)
    found: list[FieldProblem] = adapter.post_rules.text_problems(target, adapter.capabilities)
    found += adapter.post_rules.check(target)
    return {problem.field: problem.message for problem in found}
