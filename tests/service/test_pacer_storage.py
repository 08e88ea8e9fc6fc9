"""The pace kept in the database (the embedded setup's, and any setup whose queue is not Redis):
slots one interval apart from now, to the millisecond, on either database."""

from __future__ import annotations

import time
import uuid

import pytest

from service.inbox.pacer import StoragePacer
from storage.db import connection


@pytest.mark.usefixtures("service")
def test_slots_start_now_and_follow_one_interval_apart():
    pacer, account = StoragePacer(), f"acc_{uuid.uuid4().hex}"
    with connection():
        first = pacer.reserve(account, 0.05, max_wait=1.0)
        second = pacer.reserve(account, 0.05, max_wait=1.0)
    # An instant of today kept in four bytes is rounded to 128 s: the first slot would be up to a
    # minute away for an account that has sent nothing.
    assert first.granted and first.wait == pytest.approx(0, abs=0.01)
    assert second.granted and second.wait == pytest.approx(0.05, abs=0.02)


@pytest.mark.usefixtures("service")
def test_a_pause_holds_the_next_slot_until_it_ends():
    pacer, account = StoragePacer(), f"acc_{uuid.uuid4().hex}"
    with connection():
        pacer.pause(account, 3.0)
        paused = time.time() + 3.0
        refused = pacer.reserve(account, 0.05, max_wait=1.0)
        granted = pacer.reserve(account, 0.05, max_wait=5.0)
    assert not refused.granted and refused.wait == pytest.approx(3.0, abs=0.1)
    assert granted.granted and time.time() + granted.wait == pytest.approx(paused, abs=0.1)
