"""The settings a module of the service reads, handed in by the composition root.

Settings are passed in, never fetched from a process-wide global deep inside a domain. A module
that reads them declares `settings = Configured(__name__)` and reads `settings()`; `wire()` hands
each such module the service's settings by name, so reading `wire()` shows every module that runs
on them. A module read before it was handed any fails at once instead of reading someone else's.
(The engine's kinds get theirs through the engine: `service.engine.core.configure`.)
"""

from __future__ import annotations

from kit.settings import Settings


class Configured:
    """One module's handle on the settings `wire()` gave it."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self._settings: Settings | None = None

    def configure(self, settings: Settings) -> None:
        self._settings = settings

    @property
    def configured(self) -> bool:
        return self._settings is not None

    def __call__(self) -> Settings:
        if self._settings is None:
            raise RuntimeError(f"{self.owner} reads settings that the composition root has not handed it (wire)")
        return self._settings
