"""Ids: prefixed, time-ordered, the same 26 characters as the digit-by-digit encoding they replaced."""

from __future__ import annotations

import random

from kit import ids


def _digit_by_digit(number: int, length: int) -> str:
    chars = []
    for _ in range(length):
        number, rest = divmod(number, 32)
        chars.append(ids._ALPHABET[rest])
    return "".join(reversed(chars))


def test_an_id_encodes_its_milliseconds_and_random_bits_as_before(monkeypatch):
    draw = random.Random(35)
    for millis in (0, 1, 1_764_000_000_000, (1 << 50) - 1, *(draw.getrandbits(50) for _ in range(200))):
        bits = draw.getrandbits(80)
        monkeypatch.setattr(ids.time, "time_ns", lambda millis=millis: millis * 1_000_000 + 999_999)
        monkeypatch.setattr(ids.secrets, "randbits", lambda count, bits=bits: bits)
        assert ids.new_id("msg") == f"msg_{_digit_by_digit(millis, 10)}{_digit_by_digit(bits, 16)}"


def test_ids_sort_by_the_moment_they_were_made(monkeypatch):
    made = []
    for millis in (1_764_000_000_000, 1_764_000_000_001, 1_764_000_100_000):
        monkeypatch.setattr(ids.time, "time_ns", lambda millis=millis: millis * 1_000_000)
        made.append(ids.new_id("bcr"))
    assert made == sorted(made)
    assert all(len(made_id) == len("bcr_") + 26 for made_id in made)


def test_the_first_id_of_an_instant_sorts_after_every_earlier_id_and_before_every_later_one(monkeypatch):
    draw = random.Random(36)
    cut = 1_764_000_000_000
    for millis, bits in [(cut - 1, (1 << 80) - 1), (cut, 0), (cut, (1 << 80) - 1), (cut + 1, 0),
                         *((draw.randrange(cut - 10**9, cut + 10**9), draw.getrandbits(80)) for _ in range(200))]:
        monkeypatch.setattr(ids.time, "time_ns", lambda millis=millis: millis * 1_000_000)
        monkeypatch.setattr(ids.secrets, "randbits", lambda count, bits=bits: bits)
        made = ids.new_id("evt")
        assert (made < ids.first_at("evt", cut / 1000)) == (millis < cut), (millis, made)
