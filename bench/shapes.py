"""The pydantic shapes against the field specs they replaced, in the same run (no server, no database).

Three figures, each new against old, alternating rounds so that both share the machine's weather:
- validating a typical `POST /v1/inbox/conversations` body (and a bad one: the 422 path);
- a page of 100 conversations from the inbox's raw SQL rows (tuples, SQLite's timestamp text) to the
  answer's JSON bytes, as `GET /v1/conversations` does;
- the same for 100 messages from Peewee rows (datetimes), as `GET /v1/conversations/{id}/messages`.
Goal: not slower. `old_validation.py` next to this file is the retired spec module, kept only for this.

    python bench/shapes.py [--rounds 15] [--repeat 200]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import old_validation as old

from kit import clock, shapes
from kit.errors import ValidationFailed
from kit.pagination import Page, records
from service.inbox.shapes import Conversation, Message, StartConversation
from storage import hot_inbox
from storage.models import Message as MessageRow

# -- the old declarations and builders, as they were ------------------------------------------------

OLD_START = old.Obj(
    name="StartConversation",
    fields={
        "accountId": old.ID,
        "contactHandle": old.Str(min_length=1, max_length=255),
        "contactName": old.Str(max_length=255, nullable=True),
        "externalConversationId": old.Str(min_length=1, max_length=255),
    },
    required=("accountId",),
)


def _old_iso(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{value[:10]}T{value[11:19]}Z"


def old_conversation(row: tuple[Any, ...]) -> dict[str, Any]:
    (id_, account_id, platform, handle, name, external_id, last_message_at, last_inbound_at, unread, status,
     created_at, updated_at) = row
    return {
        "id": id_, "accountId": account_id, "platform": platform, "contactHandle": handle, "contactName": name,
        "externalConversationId": external_id, "lastMessageAt": _old_iso(last_message_at),
        "lastInboundAt": _old_iso(last_inbound_at), "unreadCount": unread, "status": status,
        "createdAt": _old_iso(created_at), "updatedAt": _old_iso(updated_at),
    }


def old_message(message: MessageRow) -> dict[str, Any]:
    return {
        "id": message.id, "conversationId": message.conversation_id, "direction": message.direction,
        "text": message.text, "buttonLabel": message.button_label, "buttonUrl": message.button_url,
        "status": message.status, "platformMessageId": message.platform_message_id, "error": message.error,
        "source": message.source, "createdAt": clock.iso(message.created_at),
        "updatedAt": clock.iso(message.updated_at),
    }


# -- inputs ----------------------------------------------------------------------------------------

BODY = {"accountId": "acc_01m84jdek71nrwf9c8x8zhre7j", "contactHandle": "@dana_k",
        "contactName": "Dana Kowalski", "externalConversationId": "778812345"}
BAD_BODY = {"accountId": "", "contactHandle": 5, "contactName": "x" * 300, "nickname": "dk"}
STAMP = "2026-11-21 09:30:00.123456"
CONVERSATION_ROWS = [
    (f"conv_{n:026d}", "acc_01m84jdek71nrwf9c8x8zhre7j", "telegram", f"contact{n}", f"Contact {n}", str(7700 + n),
     STAMP, STAMP if n % 3 else None, n % 5, "open", STAMP, STAMP)
    for n in range(100)
]
MOMENT = dt.datetime(2026, 11, 21, 9, 30, 0, 123456)
MESSAGE_ROWS = [
    MessageRow(id=f"msg_{n:026d}", conversation=f"conv_{n:026d}", direction="outbound" if n % 2 else "inbound",
               text=f"Hello number {n}", button_label=None, button_url=None, status="sent",
               platform_message_id=str(90000 + n), error=None, source="inbox", created_at=MOMENT, updated_at=MOMENT)
    for n in range(100)
]


def old_page(data: list[dict[str, Any]]) -> bytes:
    """The answer as the old routing wrote it: dicts, then `json.dumps`."""
    body = {"data": data, "pagination": {"page": 1, "limit": 100, "total": 100, "pages": 1}}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def new_conversations() -> bytes:
    rows = [dict(zip(hot_inbox.COLUMNS, row, strict=True)) for row in CONVERSATION_ROWS]
    return Page(Conversation, records(Conversation, rows), 1, 100, 100).json()


def new_messages() -> bytes:
    return Page(Message, records(Message, MESSAGE_ROWS), 1, 100, 100).json()


def _refused(validate: Callable[[], Any]) -> None:
    try:
        validate()
    except ValidationFailed:
        return
    raise AssertionError("the bad body passed")


CASES: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
    "valid body": (lambda: OLD_START.validate(BODY), lambda: shapes.parse(StartConversation, BODY)),
    "bad body (422)": (lambda: _refused(lambda: OLD_START.validate(BAD_BODY)),
                       lambda: _refused(lambda: shapes.parse(StartConversation, BAD_BODY))),
    "100 conversations": (lambda: old_page([old_conversation(row) for row in CONVERSATION_ROWS]),
                          new_conversations),
    "100 messages": (lambda: old_page([old_message(row) for row in MESSAGE_ROWS]), new_messages),
}


def _time(fn: Callable[[], Any], repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    # Same answers first: the comparison means nothing if the new build differs from the old.
    for name in ("100 conversations", "100 messages"):
        old_fn, new_fn = CASES[name]
        assert json.loads(new_fn()) == json.loads(old_fn()), name
    print(f"{'case':<20} {'old µs':>10} {'new µs':>10} {'old/new':>9}")
    for name, (old_fn, new_fn) in CASES.items():
        olds, news = [], []
        for _ in range(args.rounds):
            olds.append(_time(old_fn, args.repeat))
            news.append(_time(new_fn, args.repeat))
        old_median, new_median = statistics.median(olds), statistics.median(news)
        print(f"{name:<20} {old_median * 1e6:>10.1f} {new_median * 1e6:>10.1f} {old_median / new_median:>8.2f}x")


if __name__ == "__main__":
    main()
