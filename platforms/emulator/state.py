"""In-memory state of the sandbox platforms: accounts, tokens, contacts, comments, posts, what was
sent, faults, latency and rate windows. One lock guards it all (handlers are short)."""

from __future__ import annotations

import itertools
import secrets
import string
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

WINDOW_SECONDS = 24 * 3600
PRIVATE_REPLY_SECONDS = 7 * 24 * 3600


def random_token(length: int = 32, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


@dataclass
class Contact:
    id: str
    handle: str | None = None
    name: str | None = None
    last_inbound: float | None = None
    conversation_id: str = ""
    updated: float = 0.0


@dataclass
class Comment:
    id: str
    media_id: str
    from_id: str
    from_handle: str | None
    text: str
    created: float
    private_replied: bool = False


@dataclass
class Account:
    platform: str
    id: str
    username: str
    display_name: str
    followers: int = 0
    contacts: dict[str, Contact] = field(default_factory=dict)
    comments: dict[str, Comment] = field(default_factory=dict)
    posts: dict[str, dict[str, Any]] = field(default_factory=dict)
    containers: dict[str, dict[str, Any]] = field(default_factory=dict)
    uploads: dict[str, dict[str, Any]] = field(default_factory=dict)
    subscribed_fields: list[str] = field(default_factory=list)
    webhook_url: str | None = None
    webhook_secret: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Token:
    value: str
    platform: str
    account_id: str
    kind: str  # access | refresh | user | page | code
    expires_at: float | None = None
    revoked: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def valid(self, now: float | None = None) -> bool:
        if self.revoked:
            return False
        return self.expires_at is None or (now or time.time()) < self.expires_at


@dataclass
class Fault:
    account_id: str | None
    remaining: int
    status: int
    retry_after: float


class EmulatorState:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.accounts: dict[tuple[str, str], Account] = {}
        self.tokens: dict[str, Token] = {}
        self.sent: dict[str, list[dict[str, Any]]] = {}
        self.faults: dict[str, list[Fault]] = {}
        self.latency_ms: dict[str, int] = {}
        self.rate_windows: dict[tuple[str, str], deque[float]] = {}
        self._ids = itertools.count(1)
        self._serial = itertools.count(1000)

    # -- ids ---------------------------------------------------------------------------------
    def next_number(self) -> int:
        return next(self._ids)

    def serial(self) -> int:
        return next(self._serial)

    # -- accounts ----------------------------------------------------------------------------
    def add_account(self, account: Account) -> Account:
        with self.lock:
            self.accounts[(account.platform, account.id)] = account
        return account

    def account(self, platform: str, account_id: str) -> Account | None:
        return self.accounts.get((platform, account_id))

    def find_account(self, platform: str, predicate: Any) -> Account | None:
        with self.lock:
            for (p, _), account in self.accounts.items():
                if p == platform and predicate(account):
                    return account
        return None

    # -- tokens ------------------------------------------------------------------------------
    def issue(
        self,
        platform: str,
        account_id: str,
        kind: str,
        ttl: float | None,
        *,
        prefix: str = "",
        value: str = "",
        **extra: Any,
    ) -> Token:
        token = Token(
            value or (prefix + random_token(40)),
            platform,
            account_id,
            kind,
            None if ttl is None else time.time() + ttl,
            extra=dict(extra),
        )
        with self.lock:
            self.tokens[token.value] = token
        return token

    def token(self, platform: str, value: str | None, kinds: tuple[str, ...] = ("access",)) -> Token | None:
        """A valid token of `platform` of one of `kinds`, or None."""
        if not value:
            return None
        token = self.tokens.get(value)
        if token is None or token.platform != platform or token.kind not in kinds or not token.valid():
            return None
        return token

    def expire_tokens(self, platform: str, account_id: str, kinds: tuple[str, ...]) -> int:
        count = 0
        with self.lock:
            for token in self.tokens.values():
                if token.platform == platform and token.account_id == account_id and token.kind in kinds:
                    token.expires_at = time.time() - 1
                    count += 1
        return count

    # -- records -----------------------------------------------------------------------------
    def record(self, platform: str, entry: dict[str, Any]) -> None:
        with self.lock:
            self.sent.setdefault(platform, []).append(entry)

    def records(self, platform: str, account_id: str | None) -> list[dict[str, Any]]:
        with self.lock:
            rows = list(self.sent.get(platform, []))
        return [row for row in rows if account_id is None or row["platformAccountId"] == account_id]

    # -- faults, rates -----------------------------------------------------------------------
    def take_fault(self, platform: str, account_id: str | None) -> Fault | None:
        with self.lock:
            for fault in self.faults.get(platform, []):
                if fault.remaining > 0 and (fault.account_id is None or fault.account_id == account_id):
                    fault.remaining -= 1
                    return fault
        return None

    def over_rate(self, platform: str, key: str, per_second: int) -> bool:
        now = time.monotonic()
        with self.lock:
            window = self.rate_windows.setdefault((platform, key), deque())
            while window and window[0] <= now - 1.0:
                window.popleft()
            if len(window) >= per_second:
                return True
            window.append(now)
            return False
