"""The scheduler's job for media: uploads never completed are removed once they expire."""

from __future__ import annotations

from service.media import ops as media

_EVERY = 50  # ticks
_ticks = 0


def forget_expired_uploads() -> None:
    global _ticks
    _ticks += 1
    if _ticks % _EVERY == 1:
        media.forget_expired()
