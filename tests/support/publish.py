"""Publishing at the adapter level the way the service does it (`service/publishing.py`): one
`publish_step` after another, each with the progress the previous one returned."""

from __future__ import annotations

from typing import Any

from platforms.base import AccountContext, Adapter, MediaItem, PublishedPost, PublishPending


def publish(adapter: Adapter, account: AccountContext, *, text: str, media: list[MediaItem],
            options: dict[str, Any], max_steps: int = 50) -> PublishedPost:
    """The published post, or what a step raised. The service waits `poll_after` between steps for
    the platform's processing; the sandbox has none unless a test sets it (control `processing`),
    so the next step runs at once. Still pending after `max_steps` steps fails the test."""
    progress: dict[str, Any] | None = None
    for _ in range(max_steps):
        step = adapter.publish_step(account, text=text, media=media, options=options, progress=progress)
        if not isinstance(step, PublishPending):
            return step
        progress = step.progress
    raise AssertionError(f"still pending after {max_steps} steps: {progress}")
