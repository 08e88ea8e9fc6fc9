"""`message_record`: a message's record built straight from its row is, byte for byte, the JSON the
record's validation gives (`Message.model_validate(row).dump()`), and an outbound message's event
carries the record of the row as the engine left it."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pydantic
import pytest

from platforms.base import SentMessage
from service.engine import core as engine
from service.inbox import work as inbox_work
from service.inbox.shapes import Message as MessageRecord
from service.inbox.shapes import message_record
from storage.db import connection, db
from storage.hot import columns, from_row
from storage.models import Event, Message
from tests.support.factories import queue_message


def _same(row: Message) -> None:
    expected = json.dumps(MessageRecord.model_validate(row).dump(), ensure_ascii=False)
    assert json.dumps(message_record(row), ensure_ascii=False) == expected


def _row(**values: Any) -> Message:
    base: dict[str, Any] = {
        "id": "msg_1", "conversation": "cnv_1", "direction": "outbound", "text": "héllo", "button_label": None,
        "button_url": None, "status": "pending", "platform_message_id": None, "error": None, "source": "inbox",
        "template": None, "media_ids": None, "comment_id": None,
        "created_at": dt.datetime(2026, 11, 26, 23, 0, 1, 12345), "updated_at": dt.datetime(2026, 11, 26, 23, 0, 2),
    }
    base.update(values)
    # The values as a row hands them over, unconverted (what `storage.hot.from_row` keeps of a row).
    row = from_row(Message, [None] * len(columns(Message)))
    row.__data__.update(base)
    return row


@pytest.mark.parametrize("values", [
    {},
    {"status": "sent", "platform_message_id": "tg-1"},
    {"status": "failed", "error": "the platform refused: \"no\" ✗"},
    {"button_label": "Open", "button_url": "https://example.com/a?b=c"},
    {"media_ids": ["med_1", "med_2"]},
    {"media_ids": []},
    {"direction": "inbound", "status": "received", "text": None, "source": "inbox"},
    {"source": "broadcast", "status": "unknown", "error": "no answer"},
    # SQLite rows read by raw SQL carry the text peewee wrote; PostgreSQL's may carry an offset.
    {"created_at": "2026-11-26 23:00:01.012345", "updated_at": "2026-11-26 23:00:02"},
    {"created_at": dt.datetime(2026, 11, 27, 0, 0, 1, tzinfo=dt.timezone(dt.timedelta(hours=1)))},
    # What it does not build itself goes through the record's validation.
    {"template": {"name": "hello", "language": "en", "parameters": ["a"], "extra": 1}},
])
def test_the_record_from_the_row_is_the_validated_records_json(values):
    _same(_row(**values))


def test_a_row_the_record_refuses_is_refused_as_before():
    for values in ({"status": "lost"}, {"text": 5}, {"created_at": None}, {"media_ids": ["med_1", 2]},
                   {"created_at": "2026-11-26"}):
        with pytest.raises(pydantic.ValidationError):
            message_record(_row(**values))


def test_rows_read_from_storage(tenant):
    queued = queue_message(tenant)
    with connection(), db.atomic():
        Message.update(button_label="Go", button_url="https://example.com", media_ids=["med_9"]).where(
            Message.id == queued.id).execute()
    with connection():
        _same(Message.get_by_id(queued.id))
    _same(queued)


def test_the_sent_event_carries_the_record_of_the_row_as_finished(tenant):
    queued = queue_message(tenant)
    with connection():
        with db.atomic():
            found = engine.claim(inbox_work.MESSAGE_WORK, queued.id, joined=inbox_work._JOINED)
            assert found is not None
            loaded = inbox_work._load(found)
            assert loaded is not None
        with db.atomic():
            inbox_work._finish(found, loaded, SentMessage("tg-77", False, {}))
        row = Message.get_by_id(queued.id)
        (event,) = Event.select().where(Event.workspace == tenant["workspaceId"], Event.type == "message.sent")
    assert row.status == "sent" and row.platform_message_id == "tg-77"
    assert json.dumps(event.data) == json.dumps(MessageRecord.model_validate(row).dump())
