"""One outcome policy per kind of work, declared as data, and the one function that maps an
attempt's failure to the row's next state with it.

Every kind answers the same four failures of an adapter (docs/architecture.md) the same way, only with
its own numbers and words: `RetryLater(delay)` waits the platform's delay and tries again until the
kind's attempt cap; an indeterminate failure (no answer, so the side effect may have happened)
ends the row in the kind's lost status when the kind is at most once, and is tried again like a
transient failure when it is at least once; `ReauthRequired`, a refusal (`Rejected`, ...) or a
`Conflict` (the account went away) fail the row. `Transient` is a failure of the kind's own making
that is worth another attempt on the kind's backoff schedule (a webhook endpoint answering 500).
A recurring chore (an armed kind: an account's inbox poll) goes back to idle whatever failed, due
again after its own interval, or after the platform's delay when that is longer (`idle_after`).

Every kind of the engine declares its policy in its domain's `work.py`, beside the kind, even one
whose work calls no platform (a sequence's step): what a failure does to a row is read there, and
nowhere is it decided by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from kit import clock
from kit.errors import Conflict
from kit.settings import Settings
from platforms.base import Indeterminate, PlatformFailure, ReauthRequired, RetryLater

REAUTH = "The platform refused the stored credentials; reconnect the account."


class Transient(PlatformFailure):
    """An attempt that failed in a way worth repeating later, on the kind's own backoff schedule."""


@dataclass(frozen=True)
class Policy:
    """How a kind's rows move after a failed attempt.

    `max_attempts` counts every attempt (the first too); `backoff[n - 1]` is the wait after the n-th
    failed attempt when the failure names none (past its end: its last entry). Either may be a
    function of the service's settings, for numbers read from them. Texts take `{at}` (the next
    attempt), `{attempts}` and `{message}` (the failure's); a text of None leaves the error column
    as it is, and so does an `error_column` of None (a table that keeps no error). `failed_texts`
    words a final failure by its class (the first that matches), else its own message.
    """

    retry_status: str  # the ready status a row waits in for its next attempt
    failed_status: str
    max_attempts: int | Callable[[Settings], int]
    lost_status: str | None = None  # at most once: where an indeterminate failure ends; None: tried again
    backoff: Sequence[float] | Callable[[Settings], Sequence[float]] = (30.0,)
    min_delay: float = 0.05
    error_column: str | None = "error"
    failed_texts: tuple[tuple[type[Exception], str], ...] = ()
    retry_text: str | None = "The platform asked to slow down; next attempt at {at}."
    gave_up_text: str = "The platform kept asking to slow down; gave up after {attempts} attempts."
    lost_text: str | None = ("No answer from the platform: {message}. "
                             "It may or may not have happened, so it is not done again.")
    conflict_text: str | None = "The account was disconnected."  # None: the conflict's own message
    # A recurring chore: any failure puts it in `failed_status` (its idle status), due again after
    # this many seconds (a `RetryLater`'s delay when longer). None: the usual mapping above.
    idle_after: float | Callable[[Settings], float] | None = None

    @property
    def at_most_once(self) -> bool:
        return self.lost_status is not None

    def cap(self, settings: Settings) -> int:
        return self.max_attempts(settings) if callable(self.max_attempts) else self.max_attempts

    def delays(self, settings: Settings) -> Sequence[float]:
        return self.backoff(settings) if callable(self.backoff) else self.backoff

    def idle_seconds(self, settings: Settings) -> float | None:
        return self.idle_after(settings) if callable(self.idle_after) else self.idle_after

    def failed_text(self, failure: PlatformFailure | Conflict) -> str:
        for kind, text in self.failed_texts:
            if isinstance(failure, kind):
                return text.format(message=failure.message)
        return failure.message


@dataclass(frozen=True)
class Next:
    """A row's next state: its status, the error to record (None: leave it) and when it is due again."""

    status: str
    error: str | None
    next_attempt_at: datetime | None = None
    idle: bool = False  # a recurring chore back to idle: due again at `next_attempt_at`, not retried

    @property
    def again(self) -> bool:
        """The row waits in its retry status for another attempt."""
        return self.next_attempt_at is not None and not self.idle


# A platform that keeps failing (5xx, unreachable) names a short wait every time: taken as it comes,
# twelve attempts five seconds apart gave a message up after one minute of an outage the platform
# recovered from a minute later. After `EXACT_WAITS` such waits in a row, each doubles, up to
# `MAX_OUTAGE_WAIT`: a kind's attempts then span about twenty minutes of outage, and a platform that
# is down is asked less and less often, not in a loop.
EXACT_WAITS = 3
MAX_OUTAGE_WAIT = 300.0


def outage_delay(delay: float, attempts: int) -> float:
    """The wait before the next attempt after the `attempts`-th one was told to wait `delay`."""
    if attempts <= EXACT_WAITS:
        return delay
    return float(max(delay, min(delay * 2 ** (attempts - EXACT_WAITS), MAX_OUTAGE_WAIT)))


def next_state(policy: Policy, attempts: int, failure: PlatformFailure | Conflict, *, settings: Settings,
               at: datetime | None = None) -> Next:
    """The row's next state after its `attempts`-th attempt failed with `failure`: the one mapping."""
    moment = at or clock.now()
    idle = policy.idle_seconds(settings)
    if idle is not None:
        wait = max(idle, failure.delay_seconds) if isinstance(failure, RetryLater) else idle
        return Next(policy.failed_status, None, moment + timedelta(seconds=wait), idle=True)
    if isinstance(failure, Indeterminate) and policy.lost_status is not None:
        text = policy.lost_text.format(message=failure.message) if policy.lost_text else None
        return Next(policy.lost_status, text)
    if isinstance(failure, (RetryLater, Transient, Indeterminate)):
        if attempts < policy.cap(settings):
            if isinstance(failure, RetryLater):
                delay = outage_delay(failure.delay_seconds, attempts)
            else:
                delays = policy.delays(settings)
                delay = delays[min(attempts, len(delays)) - 1] if delays else 0.0
            later = moment + timedelta(seconds=max(delay, policy.min_delay))
            if isinstance(failure, RetryLater):
                text = policy.retry_text.format(at=clock.iso(later)) if policy.retry_text else None
            else:
                text = failure.message
            return Next(policy.retry_status, text, later)
        if isinstance(failure, RetryLater):
            return Next(policy.failed_status, policy.gave_up_text.format(attempts=attempts))
        return Next(policy.failed_status, policy.failed_text(failure))
    if isinstance(failure, ReauthRequired):
        return Next(policy.failed_status, REAUTH)
    if isinstance(failure, Conflict):
        return Next(policy.failed_status, policy.conflict_text or failure.message)
    return Next(policy.failed_status, policy.failed_text(failure))
