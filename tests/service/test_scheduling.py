"""`scheduledFor` read as the contract says: offsets, IANA zones, and the two DST rules."""

from __future__ import annotations

import datetime as dt

from kit.scheduling import due_at


def test_an_instant_with_an_offset_is_that_instant_whatever_the_timezone():
    assert due_at("2031-06-01T12:00:00+02:00", "Asia/Tokyo") == (dt.datetime(2031, 6, 1, 10, 0), [])


def test_a_naive_time_is_read_in_its_timezone():
    assert due_at("2031-01-15T09:00:00", "America/New_York") == (dt.datetime(2031, 1, 15, 14, 0), [])
    assert due_at("2031-07-15T09:00:00", "America/New_York") == (dt.datetime(2031, 7, 15, 13, 0), [])


def test_a_time_in_the_spring_gap_moves_forward_by_the_gap():
    # 2031-03-09: New York jumps from 02:00 EST to 03:00 EDT; 02:30 does not exist, 03:30 EDT is meant.
    assert due_at("2031-03-09T02:30:00", "America/New_York") == (dt.datetime(2031, 3, 9, 7, 30), [])


def test_a_time_in_the_autumn_overlap_takes_the_first_occurrence():
    # 2031-11-02: 01:30 happens twice in New York; the first is 01:30 EDT (05:30Z), not EST (06:30Z).
    assert due_at("2031-11-02T01:30:00", "America/New_York") == (dt.datetime(2031, 11, 2, 5, 30), [])


def test_refusals_name_their_field():
    assert [p.field for p in due_at("2031-01-15T09:00:00", None)[1]] == ["scheduledFor"]
    assert [p.field for p in due_at("2031-01-15T09:00:00", "Mars/Olympus")[1]] == ["timezone"]
    assert [p.field for p in due_at("2031-01-15T09:00:00", "../../etc/passwd")[1]] == ["timezone"]
    assert [p.field for p in due_at("not a time", "UTC")[1]] == ["scheduledFor"]
    assert [p.message for p in due_at("2020-01-15T09:00:00Z", None)[1]] == ["must not be in the past"]
