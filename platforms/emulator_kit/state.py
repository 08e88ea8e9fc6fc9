"""State of the sandbox platforms: accounts, tokens, contacts, comments, posts, what was sent,
faults, latency and rate windows. One lock guards it all (handlers are short).

The state lives in memory and, when the emulator has a `StateStore`, in its SQLite file too:
every change is noted in the current request's `Changes` (a context variable set by
`persist.Persist`), and written before that request's answer leaves. A change made outside a
request is written at once. Rate windows are not kept: they last a second.
"""

from __future__ import annotations

import contextvars
import hashlib
import itertools
import json
import secrets
import string
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from platforms.emulator_kit.store import Batch, StateStore

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


def sandbox_followers(account: Account) -> int:
    """A new sandbox account's followers: a count of its own (1,000 to 4,999), the same for the same
    id, so a sandbox's analytics do not start at zero."""
    digest = hashlib.sha256(f"followers:{account.platform}:{account.id}".encode()).digest()
    return 1000 + int.from_bytes(digest[:2], "big") % 4000


def followers_gained(account: Account, day: Any) -> int:
    """The followers the sandbox account gained on that UTC day (0 to 9), the same on every ask: the
    history that Instagram's insights and LinkedIn's follower statistics answer with."""
    digest = hashlib.sha256(f"gained:{account.platform}:{account.id}:{day}".encode()).digest()
    return digest[0] % 10


def token_digest(value: str) -> str:
    """What the sandbox keeps of a token or code it issued or accepted: its SHA-256. A real token
    pasted into a trial setup is never on disk in the clear, and a caller's token is still found."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class Token:
    digest: str  # `token_digest` of the token
    platform: str
    account_id: str
    kind: str  # access | refresh | user | page | code
    expires_at: float | None = None
    revoked: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    # The token itself, only on the copy `issue` hands back to be answered; never kept.
    value: str = field(default="", repr=False)

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
    path: str | None = None  # only requests whose path contains this (e.g. "comments")
    hold_seconds: float = 0.0  # status 504: the request is held this long first (a platform that stops answering)


@dataclass
class Changes:
    """What one request changed: keys into the state, serialised when the request answers."""

    accounts: set[tuple[str, str]] = field(default_factory=set)
    contacts: set[tuple[str, str, str]] = field(default_factory=set)
    comments: set[tuple[str, str, str]] = field(default_factory=set)
    tokens: set[str] = field(default_factory=set)  # digests
    codes: set[str] = field(default_factory=set)  # digests
    # Rows of a file written before tokens were kept as digests, keyed by the token in the clear.
    dropped_tokens: set[str] = field(default_factory=set)
    dropped_codes: set[str] = field(default_factory=set)
    sent: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    faults: set[str] = field(default_factory=set)
    latency: set[str] = field(default_factory=set)


CHANGES: contextvars.ContextVar[Changes | None] = contextvars.ContextVar("sandbox_changes", default=None)


def account_from(data: dict[str, Any]) -> Account:
    data = dict(data)
    data["contacts"] = {}  # loaded from their own rows
    # Comments are rows of their own too; a sandbox file written before they were kept them here.
    data["comments"] = {k: Comment(**v) for k, v in data.get("comments", {}).items()}
    return Account(**data)


class Counter:
    """Increasing ids; with a store, handed out from blocks reserved in the file first, so that no
    id is ever given twice, not even after a crash (a restart skips the rest of a block)."""

    def __init__(self, name: str, start: int, store: StateStore | None, block: int = 1000) -> None:
        self.name, self.start, self.store, self.block = name, start, store, block
        self._lock = threading.Lock()
        self._next = self._ceiling = start
        self._plain = itertools.count(start)

    def take(self) -> int:
        if self.store is None:
            return next(self._plain)
        with self._lock:
            if self._next >= self._ceiling:
                self._next = self.store.reserve(self.name, self.block, self.start)
                self._ceiling = self._next + self.block
            value = self._next
            self._next += 1
            return value


class EmulatorState:
    def __init__(self, store: StateStore | None = None) -> None:
        self.lock = threading.Lock()
        self.store = store
        self.accounts: dict[tuple[str, str], Account] = {}
        self.tokens: dict[str, Token] = {}
        self.codes: dict[str, Any] = {}
        self.sent: dict[str, list[dict[str, Any]]] = {}
        self.faults: dict[str, list[Fault]] = {}
        self.latency_ms: dict[str, int] = {}
        self.rate_windows: dict[tuple[str, str], deque[float]] = {}
        # The rate windows' clock: a test that needs a burst inside one window holds it still.
        self.monotonic: Callable[[], float] = time.monotonic
        self._ids = Counter("accounts", 1, store, block=100)
        self._serial = Counter("serial", 1000, store)
        if store is not None:
            self._load(store)

    def _load(self, store: StateStore) -> None:
        loaded = store.load()
        for data in loaded.accounts:
            account = account_from(data)
            self.accounts[(account.platform, account.id)] = account
        for platform, account_id, data in loaded.contacts:
            owner = self.accounts.get((platform, account_id))
            if owner is not None:
                owner.contacts[data["id"]] = Contact(**data)
        # Comments an earlier file kept inside their account's row get rows of their own now: the
        # account's row is written without them from its next lookup on.
        kept_inside = Changes(comments={(account.platform, account.id, comment_id)
                                        for account in self.accounts.values() for comment_id in account.comments})
        for platform, account_id, data in loaded.comments:
            owner = self.accounts.get((platform, account_id))
            if owner is not None:
                owner.comments[data["id"]] = Comment(**data)
        cleared = self._load_secrets(loaded.tokens, loaded.codes)
        for platform, entry in loaded.sent:
            self.sent.setdefault(platform, []).append(entry)
        for platform, faults in loaded.faults.items():
            self.faults[platform] = [Fault(**f) for f in faults]
        self.latency_ms.update(loaded.latency)
        if kept_inside.comments:
            store.write(self.batch(kept_inside))
        if cleared.tokens or cleared.codes or cleared.accounts:
            store.write(self.batch(cleared))
            store.scrub()

    def _load_secrets(self, tokens: list[dict[str, Any]], codes: dict[str, dict[str, Any]]) -> Changes:
        """Tokens and codes by their digests. A file written before they were kept so holds them in
        the clear (and each adopted bot's token in its account): those are rewritten as digests,
        and the clear rows dropped; the changes returned say which."""
        cleared = Changes()
        for data in tokens:
            if "digest" not in data:
                clear = data.pop("value")
                data["digest"] = token_digest(clear)
                cleared.tokens.add(data["digest"])
                cleared.dropped_tokens.add(clear)
            self.tokens[data["digest"]] = Token(**data)
        for key, data in codes.items():
            digest = data.pop("digest", None)
            if digest is None:
                digest = token_digest(key)
                cleared.codes.add(digest)
                cleared.dropped_codes.add(key)
            self.codes[digest] = data  # raw dicts: `EmulatorBase` rebuilds its codes from them
        for account in self.accounts.values():
            if account.extra.pop("bot_token", None) is not None:
                cleared.accounts.add((account.platform, account.id))
        return cleared

    # -- persistence -------------------------------------------------------------------------
    def _changes(self) -> Changes | None:
        """The current request's changes; None when there is nothing to keep them for."""
        if self.store is None:
            return None
        return CHANGES.get() or Changes()

    def _noted(self, changes: Changes) -> None:
        if CHANGES.get() is not changes:  # outside a request: write at once
            self.write(self.batch(changes))

    def touch(self, account: Account) -> None:
        changes = self._changes()
        if changes is not None:
            changes.accounts.add((account.platform, account.id))
            self._noted(changes)

    def touch_contact(self, account: Account, contact_id: str) -> None:
        changes = self._changes()
        if changes is not None:
            changes.contacts.add((account.platform, account.id, contact_id))
            self._noted(changes)

    def touch_comment(self, account: Account, comment_id: str) -> None:
        changes = self._changes()
        if changes is not None:
            changes.comments.add((account.platform, account.id, comment_id))
            self._noted(changes)

    def touch_token(self, token: Token) -> None:
        changes = self._changes()
        if changes is not None:
            changes.tokens.add(token.digest)
            self._noted(changes)

    def touch_code(self, code: str) -> None:
        changes = self._changes()
        if changes is not None:
            changes.codes.add(code)
            self._noted(changes)

    def touch_faults(self, platform: str) -> None:
        changes = self._changes()
        if changes is not None:
            changes.faults.add(platform)
            self._noted(changes)

    def set_latency(self, platform: str, milliseconds: int) -> None:
        self.latency_ms[platform] = milliseconds
        changes = self._changes()
        if changes is not None:
            changes.latency.add(platform)
            self._noted(changes)

    def batch(self, changes: Changes) -> Batch:
        """Serialise what `changes` names (on the thread that mutates the state, under the lock)."""
        batch = Batch()
        with self.lock:
            for key in changes.accounts:
                account = self.accounts.get(key)
                if account is not None:
                    # Contacts and comments are rows of their own, written when one changes
                    # (`touch_contact`, `touch_comment`).
                    data = asdict(replace(account, contacts={}, comments={}))
                    del data["contacts"], data["comments"]
                    batch.accounts[key] = json.dumps(data)
            for platform, account_id, contact_id in changes.contacts:
                owner = self.accounts.get((platform, account_id))
                contact = owner.contacts.get(contact_id) if owner is not None else None
                if contact is not None:
                    batch.contacts[(platform, account_id, contact_id)] = json.dumps(asdict(contact))
            for platform, account_id, comment_id in changes.comments:
                owner = self.accounts.get((platform, account_id))
                comment = owner.comments.get(comment_id) if owner is not None else None
                if comment is not None:
                    batch.comments[(platform, account_id, comment_id)] = json.dumps(asdict(comment))
            for digest in changes.tokens:
                token = self.tokens.get(digest)
                if token is not None:
                    data = asdict(token)
                    del data["value"]
                    batch.tokens[digest] = json.dumps(data)
            batch.dropped_tokens = set(changes.dropped_tokens)
            batch.dropped_codes = set(changes.dropped_codes)
            for value in changes.codes:
                code = self.codes.get(value)
                if code is not None:
                    data = code if isinstance(code, dict) else asdict(code)
                    # Marks the row as keyed by the code's digest (a file written before held codes).
                    batch.codes[value] = json.dumps({**data, "digest": True})
            batch.sent = [(platform, json.dumps(entry)) for platform, entry in changes.sent]
            for platform in changes.faults:
                batch.faults[platform] = json.dumps([asdict(f) for f in self.faults.get(platform, [])])
            for platform in changes.latency:
                batch.latency[platform] = self.latency_ms.get(platform, 0)
        return batch

    def write(self, batch: Batch) -> None:
        if self.store is not None:
            self.store.write(batch)

    # -- ids ---------------------------------------------------------------------------------
    def next_number(self) -> int:
        return self._ids.take()

    def serial(self) -> int:
        return self._serial.take()

    # -- accounts ----------------------------------------------------------------------------
    def add_account(self, account: Account) -> Account:
        if not account.followers:
            account.followers = sandbox_followers(account)
        with self.lock:
            self.accounts[(account.platform, account.id)] = account
        self.touch(account)
        return account

    def account(self, platform: str, account_id: str) -> Account | None:
        """The account, noted as changed: whoever asks for it may change it."""
        account = self.accounts.get((platform, account_id))
        if account is not None:
            self.touch(account)
        return account

    def accounts_where(self, platform: str, predicate: Any) -> list[Account]:
        """Read-only listing (nothing is noted as changed)."""
        with self.lock:
            return [a for (p, _), a in self.accounts.items() if p == platform and predicate(a)]

    def find_account(self, platform: str, predicate: Any) -> Account | None:
        found = None
        with self.lock:
            for (p, _), account in self.accounts.items():
                if p == platform and predicate(account):
                    found = account
                    break
        if found is not None:
            self.touch(found)
        return found

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
        value = value or (prefix + random_token(40))
        token = Token(
            token_digest(value),
            platform,
            account_id,
            kind,
            None if ttl is None else time.time() + ttl,
            extra=dict(extra),
        )
        with self.lock:
            self.tokens[token.digest] = token
        self.touch_token(token)
        return replace(token, value=value)

    def token(self, platform: str, value: str | None, kinds: tuple[str, ...] = ("access",)) -> Token | None:
        """A valid token of `platform` of one of `kinds`, or None."""
        if not value:
            return None
        token = self.tokens.get(token_digest(value))
        if token is None or token.platform != platform or token.kind not in kinds or not token.valid():
            return None
        return token

    def knows(self, value: str) -> bool:
        """Whether the sandbox ever issued or accepted this token (of any platform, valid or not)."""
        return token_digest(value) in self.tokens

    def age_tokens(self, platform: str, account_id: str, seconds: float) -> list[Token]:
        """Make the account's expiring tokens `seconds` older: they lapse that much sooner."""
        aged = []
        with self.lock:
            for token in self.tokens.values():
                if token.platform == platform and token.account_id == account_id and token.expires_at is not None:
                    token.expires_at -= seconds
                    aged.append(token)
        for token in aged:
            self.touch_token(token)
        return aged

    def expire_tokens(self, platform: str, account_id: str, kinds: tuple[str, ...]) -> int:
        expired = []
        with self.lock:
            for token in self.tokens.values():
                if token.platform == platform and token.account_id == account_id and token.kind in kinds:
                    token.expires_at = time.time() - 1
                    expired.append(token)
        for token in expired:
            self.touch_token(token)
        return len(expired)

    # -- records -----------------------------------------------------------------------------
    def record(self, platform: str, entry: dict[str, Any]) -> None:
        with self.lock:
            self.sent.setdefault(platform, []).append(entry)
        changes = self._changes()
        if changes is not None:
            changes.sent.append((platform, entry))
            self._noted(changes)

    def records(self, platform: str, account_id: str | None) -> list[dict[str, Any]]:
        with self.lock:
            rows = list(self.sent.get(platform, []))
        return [row for row in rows if account_id is None or row["platformAccountId"] == account_id]

    # -- faults, rates -----------------------------------------------------------------------
    def take_fault(self, platform: str, account_id: str | None, path: str = "") -> Fault | None:
        taken = None
        with self.lock:
            for fault in self.faults.get(platform, []):
                if (fault.remaining > 0 and (fault.account_id is None or fault.account_id == account_id)
                        and (fault.path is None or fault.path in path)):
                    fault.remaining -= 1
                    taken = fault
                    break
        if taken is not None:
            self.touch_faults(platform)
        return taken

    def over_rate(self, platform: str, key: str, per_second: int, *, seconds: float = 1.0) -> bool:
        """True when `key` already made `per_second` calls in the last `seconds` (a sliding window)."""
        return self.admit(platform, key, per_second, seconds=seconds) is None

    def admit(self, platform: str, key: str, per_second: int, *, seconds: float = 1.0) -> float | None:
        """The instant (wall clock) a call of `key` is let through, or None when it already made
        `per_second` calls in the last `seconds` (a sliding window). Both clocks are read under the
        lock: the window holds the instants in the order the calls were let through (an instant read
        before a wait for the lock, then appended after a later one, let a 31st call in), and the
        sent log can record the instant the platform counted."""
        with self.lock:
            now = self.monotonic()
            window = self.rate_windows.setdefault((platform, key), deque())
            while window and window[0] <= now - seconds:
                window.popleft()
            if len(window) >= per_second:
                return None
            window.append(now)
            return time.time()
