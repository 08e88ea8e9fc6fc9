"""Per-credential request rate, counted in storage so that every API process shares one budget.

A fixed one-minute window per credential. Writing the shared counter on every request would make
each GET a write transaction, so a process *leases* a few tokens at a time: it adds the lease to
the shared counter in one upsert and spends the tokens locally. The counter therefore always
holds at least what was admitted, so processes together never admit more than the limit. Leases
shrink as the window's budget runs low (one token at a time at the end), so the only cost is
that up to an eighth of what is left may sit unused in another process's lease.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import NamedTuple

from kit import clock, tokens
from kit.errors import RateLimited
from storage import hot
from storage.db import WriteNeeded, db
from storage.models import RateLimitCounter

WINDOW_SECONDS = 60
# A lease is at most the larger of these: 32 tokens, or 1/64 of the limit (a key allowed a million
# requests a minute leases 15,625 at a time, not 32: leasing is a write, which the event loop's
# read path hands to a thread).
MAX_LEASE = 32
LEASE_SHARE = 64


class Quota(NamedTuple):  # made on every request: a tuple is quicker to build than a dataclass
    limit: int
    remaining: int
    reset: int  # unix seconds when the window ends

    def headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset),
        }


@dataclass
class _Lease:
    window: int
    counted: int  # the shared counter after this process's last lease
    unspent: int  # tokens of that lease not yet used here


_leases: dict[str, _Lease] = {}
_lock = threading.Lock()


def _lease_size(limit: int, counted: int) -> int:
    return max(1, min(max(MAX_LEASE, limit // LEASE_SHARE), (limit - counted) // 8))


def hit(credential_id: str, *, limit: int, at: float | None = None, leased_only: bool = False) -> Quota:
    """Admit one request or raise RateLimited (with the quota headers and Retry-After).

    `leased_only`: spend a token this process already leased, or raise `WriteNeeded` (and spend
    nothing) when admitting the request needs a lease from storage."""
    moment = int(at if at is not None else clock.epoch())
    window = moment - moment % WINDOW_SECONDS
    reset = window + WINDOW_SECONDS
    with _lock:
        lease = _leases.get(credential_id)
        if lease is not None and lease.window == window and lease.unspent > 0:
            lease.unspent -= 1
            return Quota(limit, max(limit - lease.counted, 0) + lease.unspent, reset)
        counted_before = lease.counted if lease is not None and lease.window == window else 0
    if leased_only:
        raise WriteNeeded()
    size = _lease_size(limit, counted_before)
    # Its own transaction: the count stands even when the request it admitted fails.
    with db.atomic():
        counted = hot.count_request(credential_id, window, size)
    granted = max(0, min(size, limit - (counted - size)))
    with _lock:
        # Threads of this process that found the lease spent all leased at once: each one's grant
        # joins the tokens already here instead of overwriting them (overwritten tokens are counted
        # in storage but never spent, and the key gets fewer requests than its limit).
        current = _leases.get(credential_id)
        pool, seen = granted, counted
        if current is not None and current.window == window:
            pool += current.unspent
            seen = max(seen, current.counted)
        admitted = pool > 0
        unspent = pool - 1 if admitted else 0
        _leases[credential_id] = _Lease(window, seen, unspent)
    quota = Quota(limit, max(limit - seen, 0) + unspent, reset)
    if not admitted:
        raise RateLimited(
            f"More than {limit} requests a minute with this key.",
            headers={**quota.headers(), "Retry-After": str(max(reset - moment, 1))},
        )
    return quota


def forget_old_windows(*, before: float | None = None) -> int:
    moment = int(before if before is not None else clock.epoch())
    return int(RateLimitCounter.delete().where(RateLimitCounter.window_start < moment - 2 * WINDOW_SECONDS).execute())


# -- dashboard sign-in -------------------------------------------------------------------------
# Failed sign-ins are counted per e-mail and per client address in fixed 15-minute windows, in the
# same shared table (so every process sees them). A row is keyed by its window's *end*, which keeps
# it clear of `forget_old_windows` until two minutes after the window is over. At the limit, every
# attempt (the right password too: else guessing would go on) is refused until the window ends and
# never longer, so the real person is locked out at most 15 minutes.
SIGN_IN_WINDOW_SECONDS = 15 * 60
SIGN_IN_FAILURES = 10


def _sign_in_keys(email: str, address: str | None) -> list[str]:
    keys = ["si:e:" + tokens.sha256_hex(email.strip().lower())[:32]]
    if address:
        keys.append("si:a:" + tokens.sha256_hex(address)[:32])
    return keys


def _sign_in_window() -> tuple[int, int]:
    moment = int(clock.epoch())
    return moment, moment - moment % SIGN_IN_WINDOW_SECONDS + SIGN_IN_WINDOW_SECONDS


def check_sign_in(*, email: str, address: str | None) -> None:
    """Raise `RateLimited` (with `Retry-After`) when the e-mail or the address has failed too often."""
    moment, end = _sign_in_window()
    failures = (RateLimitCounter.select(RateLimitCounter.count)
                .where(RateLimitCounter.key_id.in_(_sign_in_keys(email, address)),
                       RateLimitCounter.window_start == end)
                .scalars())
    if any(count >= SIGN_IN_FAILURES for count in failures):
        raise RateLimited("Too many failed sign-ins; try again later.",
                          headers={"Retry-After": str(max(end - moment, 1))})


def sign_in_failed(*, email: str, address: str | None) -> None:
    """Count one failed sign-in (in the caller's short transaction)."""
    _, end = _sign_in_window()
    for key in _sign_in_keys(email, address):
        hot.count_request(key, end, 1)
