"""`notifications/resources/updated` for `switchboard://inbox` when a message arrives.

A client subscribes with `subscriptions/listen` (protocol 2026-07-28: the listen request's answer is
the stream, so the stateless server can hold it). This module is the SDK's `SubscriptionBus` for
those streams, with two things the SDK's in-memory bus does not do:

- **Tenancy.** Each listener is registered with the workspace (and, for a `profiles` key, the
  profiles) of the credential that opened it, read from the request's token when it subscribes; a
  message arriving in one workspace never notifies a listener of another.
- **Every process.** A message can arrive in any process (a platform webhook reaching another API
  process, an inbox poll in a worker). So while a workspace has listeners here, this process looks
  at the workspace's most recently active conversations once a second (an index range, a few rows)
  and notifies when one of them holds a message the contact sent since the last look (its unread
  count went up, or it changed with messages unread).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.shared.subscriptions import ResourceUpdated, ServerEvent

from kit import clock
from service.inbox import conversations
from storage import requests

INBOX_URI = "switchboard://inbox"
INTERVAL_SECONDS = 1.0
WINDOW = 50  # the conversations looked at each time: the most recently active of the workspace

log = logging.getLogger("switchboard.mcp")


@dataclass
class _Listener:
    workspace_id: str | None  # None: a listener the SDK registered without a credential: never told
    profile_ids: frozenset[str] | None
    since: dt.datetime
    deliver: Callable[[ServerEvent], None]

    def sees(self, profile_id: str) -> bool:
        return self.profile_ids is None or profile_id in self.profile_ids


def _who() -> tuple[str | None, frozenset[str] | None]:
    token = get_access_token()
    claims = token.claims if token is not None else None
    if not claims:
        return None, None
    profile_ids = claims.get("profile_ids") if claims.get("kind") == "key" else None
    return claims.get("workspace_id"), None if profile_ids is None else frozenset(profile_ids)


def _recent(workspace_id: str) -> Callable[[bool], list[tuple[str, str, int, Any]]]:
    return lambda _on_loop: conversations.recent_activity(workspace_id=workspace_id, limit=WINDOW)


class InboxBus:
    """A `SubscriptionBus` (see the module's docstring)."""

    def __init__(self, interval: float = INTERVAL_SECONDS) -> None:
        self.interval = interval
        self._listeners: dict[object, _Listener] = {}
        self._seen: dict[str, dict[str, tuple[int, Any]]] = {}  # workspace → conversation → (unread, updated)
        self._task: asyncio.Task[None] | None = None

    async def publish(self, event: ServerEvent) -> None:
        # The SDK's own events (none are published today) go to every listener; the inbox's are
        # told by `_look` to the listeners of their workspace only.
        if isinstance(event, ResourceUpdated):
            return
        for listener in list(self._listeners.values()):
            listener.deliver(event)

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        workspace_id, profile_ids = _who()
        token = object()
        self._listeners[token] = _Listener(workspace_id, profile_ids, clock.now(), listener)
        if workspace_id is not None and (self._task is None or self._task.done()):
            self._task = asyncio.get_running_loop().create_task(self._watch())

        def unsubscribe() -> None:
            self._listeners.pop(token, None)

        return unsubscribe

    def _workspaces(self) -> set[str]:
        return {listener.workspace_id for listener in self._listeners.values() if listener.workspace_id}

    async def _watch(self) -> None:
        while workspaces := self._workspaces():
            for workspace_id in workspaces:
                try:
                    rows = await requests.run(_recent(workspace_id), transaction="read", on_loop=True)
                except Exception:  # storage unreachable for a moment: look again next time
                    log.warning("the inbox watch could not read workspace %s", workspace_id)
                    continue
                self._look(workspace_id, rows)
            for gone in set(self._seen) - workspaces:
                del self._seen[gone]
            await asyncio.sleep(self.interval)

    def _look(self, workspace_id: str, rows: list[tuple[str, str, int, Any]]) -> None:
        before = self._seen.get(workspace_id, {})
        arrived: list[tuple[str, Any]] = []  # (profile, when) of conversations with a new message
        for conversation_id, profile_id, unread, updated_at in rows:
            old = before.get(conversation_id)
            if unread > 0 and (old is None or unread > old[0] or (updated_at != old[1])):
                arrived.append((profile_id, updated_at))
        self._seen[workspace_id] = {row[0]: (row[2], row[3]) for row in rows}
        for listener in list(self._listeners.values()):
            if listener.workspace_id != workspace_id:
                continue
            if any(listener.sees(profile) and when > listener.since for profile, when in arrived):
                with contextlib.suppress(Exception):  # a closed stream: its own cleanup removes it
                    listener.deliver(ResourceUpdated(uri=INBOX_URI))
