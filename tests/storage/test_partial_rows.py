"""Rows read with some of their columns (`storage.hot.from_row` with names): in tests, a column not read raises."""

from __future__ import annotations

from datetime import datetime

import pytest

from storage import hot
from storage.models import Message


def _partial() -> Message:
    return hot.from_row(Message, ("msg_1", "conv_1", "hi", "2026-01-02 03:04:05"),
                        ("id", "conversation_id", "text", "created_at"))


def test_a_partial_row_reads_what_it_holds_converted():
    message = _partial()
    assert (message.id, message.conversation_id, message.text) == ("msg_1", "conv_1", "hi")
    assert message.created_at == datetime(2026, 1, 2, 3, 4, 5)


def test_a_column_the_row_was_not_read_with_raises_instead_of_reading_none():
    message = _partial()
    with pytest.raises(LookupError, match="'status' was not read with this row"):
        _ = message.status
    assert hot.from_row(Message, [None] * len(hot.columns(Message))).status is None  # a whole row: as read


def test_outside_tests_a_partial_row_reads_none_for_what_it_lacks(monkeypatch):
    monkeypatch.setattr(hot, "_strict_partial", False)
    assert _partial().status is None
