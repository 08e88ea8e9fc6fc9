"""Cross-domain reactions: declared here, connected in one place.

When one domain's change matters to another (a contact's message stops a sequence, a comment
triggers an automation, a finished message moves a broadcast's counts), the domain where it
happens sends a named signal from this module, and the composition root (`switchboard/app.py:
wire`) connects the receivers. Reading the sender, you see the signal's name and its text here;
looking the name up in `wire()` shows who reacts. Nothing connects itself when imported.

Every receiver runs in the sender's transaction. A signal marked `isolated` runs each receiver in
a savepoint of its own and logs a receiver's failure: a failing feature must not undo the change
that was being made (a stored message, a stored platform event). The others let a failure reach
the sender, whose transaction then rolls back as a whole.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, ParamSpec

from platforms.inbound import InboundEvent
from storage.db import db
from storage.models import Account, Conversation, Message

log = logging.getLogger("switchboard.signals")

P = ParamSpec("P")


class Signal(Generic[P]):
    """A named point other domains react to, with its receivers in the order they were connected."""

    def __init__(self, name: str, *, isolated: bool) -> None:
        self.name = name
        self.isolated = isolated
        self.receivers: list[Callable[P, Any]] = []

    def connect(self, receiver: Callable[P, Any]) -> None:
        self.receivers.append(receiver)

    def send(self, *args: P.args, **kwargs: P.kwargs) -> list[Any]:
        """Run every receiver; their answers, in order (None for an isolated receiver that failed)."""
        if not self.isolated:
            return [receiver(*args, **kwargs) for receiver in self.receivers]
        answers = []
        for receiver in self.receivers:
            try:
                with db.atomic():  # a savepoint: a failing receiver does not undo the sender's change
                    answers.append(receiver(*args, **kwargs))
            except Exception:
                log.exception("%s: receiver %s failed", self.name, getattr(receiver, "__qualname__", receiver))
                answers.append(None)
        return answers

    def __bool__(self) -> bool:
        return bool(self.receivers)


class KindSignal:
    """A platform event arriving for an account, with receivers per kind of event (`comment`, ...)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.by_kind: dict[str, Signal[[Account, InboundEvent]]] = {}

    def connect(self, receiver: Callable[[Account, InboundEvent], Any], *kinds: str) -> None:
        for kind in kinds:
            self.by_kind.setdefault(kind, Signal(f"{self.name}:{kind}", isolated=True)).connect(receiver)

    def send(self, account: Account, event: InboundEvent) -> None:
        signal = self.by_kind.get(event.kind)
        if signal is not None:
            signal.send(account, event)


Rider = Callable[["MessageFinished"], tuple[str, tuple[Any, ...]]]


class SourceSignal:
    """An outbound message reaching its final status, with receivers per source (`broadcast`, ...):
    the sender can tell that no one listens for a source and leave out the transaction a receiver
    would run in.

    A `rider` of a source is a statement instead of a receiver, for a `sent` outcome: SQL from code
    with `?` placeholders, ending in a WHERE clause, that the sender runs with the outcome (on
    PostgreSQL in the outcome's own statement, atomic without a transaction around it). A receiver
    connected with `sent=False` hears every outcome but `sent`, which its source's rider records."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.by_source: dict[str, Signal[[MessageFinished]]] = {}
        self.unsent: dict[str, Signal[[MessageFinished]]] = {}
        self.riders: dict[str, list[Rider]] = {}

    def connect(self, receiver: Callable[[MessageFinished], Any], *sources: str, sent: bool = True) -> None:
        hearing = self.by_source if sent else self.unsent
        for source in sources:
            hearing.setdefault(source, Signal(f"{self.name}:{source}", isolated=False)).connect(receiver)

    def ride(self, rider: Rider, *sources: str) -> None:
        for source in sources:
            self.riders.setdefault(source, []).append(rider)

    def listens(self, source: str, status: str | None = None) -> bool:
        """Whether a receiver hears this source's messages (with `status`: those that end in it)."""
        return source in self.by_source or (status != "sent" and source in self.unsent)

    def riding(self, done: MessageFinished) -> list[tuple[str, tuple[Any, ...]]]:
        """The statements that go with this `sent` outcome."""
        return [rider(done) for rider in self.riders.get(done.source, ())]

    def send(self, done: MessageFinished) -> None:
        signal = self.by_source.get(done.source)
        if signal is not None:
            signal.send(done)
        if done.status != "sent":
            signal = self.unsent.get(done.source)
            if signal is not None:
                signal.send(done)

    def __bool__(self) -> bool:
        return bool(self.by_source or self.unsent or self.riders)


@dataclass(frozen=True)
class MessageFinished:
    """An outbound message reached a final status (`sent`, `failed` or `unknown`; `unknown` may later
    turn `sent` when a late answer comes)."""

    message_id: str
    source: str  # inbox | broadcast | sequence | automation: receivers look only at their own
    status: str
    at: dt.datetime
    error: str | None


# -- the signals -------------------------------------------------------------------------------
platform_event = KindSignal("platform_event")
"""(account, event): a platform event stored for the first time at `/hooks`, by its kind: the inbox
takes messages, echoes and receipts, automations take comments, posts take native posts."""

conversation_started: Signal[[Conversation, str]] = Signal("conversation_started", isolated=True)
"""(conversation, how): a conversation was made; how is "inbound" (the contact wrote first), "api"
or "comment" (a comment automation is about to send its private reply). Sequences enrol here."""

contact_wrote: Signal[[Conversation, Message, InboundEvent]] = Signal("contact_wrote", isolated=True)
"""(conversation, message, event): a contact's message was stored (event.kind tells a story reply).
Sequences stop on a reply and enrol on story replies here."""

message_finished = SourceSignal("message_finished")
"""A message the engine sent reached its final status, in the finishing transaction, by the
message's source: broadcasts move their recipient and counts."""

message_failed_later: Signal[[Message, str]] = Signal("message_failed_later", isolated=False)
"""(message, reason): a platform reported a `sent` message as not delivered (WhatsApp's status
webhook), in the receipt's transaction: broadcast recipients follow their message."""

account_described: Signal[[str, str, dict[str, Any]]] = Signal("account_described", isolated=False)
"""(account_id, platform, capabilities): an account's record is being built; what the inbox knows of
the account (how its messages arrive, its poll, its quota) is added to its `capabilities` here."""

account_deleting: Signal[[str]] = Signal("account_deleting", isolated=False)
"""(account_id) -> (name, count): an account is being deleted for good, in that transaction; each
domain deletes the rows it keeps for the account and says how many of what went."""

events_committed: Signal[[]] = Signal("events_committed", isolated=False)
"""A transaction that wrote outbox events committed: the queue starts the dispatcher at once rather
than at the next scheduler tick (which remains the safety net)."""

ALL: list[Signal[Any] | KindSignal | SourceSignal] = [
    platform_event, conversation_started, contact_wrote, message_finished, message_failed_later, account_described,
    account_deleting, events_committed,
]


def disconnect_all() -> None:
    """Forget every receiver (the composition root connects them again)."""
    for signal in ALL:
        if isinstance(signal, KindSignal):
            signal.by_kind.clear()
        elif isinstance(signal, SourceSignal):
            signal.by_source.clear()
            signal.unsent.clear()
            signal.riders.clear()
        else:
            signal.receivers.clear()
