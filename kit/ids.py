"""Opaque, prefixed, time-ordered ids (`ws_01JD...`): sortable like ULIDs, unguessable like tokens."""

from __future__ import annotations

import secrets
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lower case


def _base32(number: int, length: int) -> str:
    chars = []
    for _ in range(length):
        number, rest = divmod(number, 32)
        chars.append(_ALPHABET[rest])
    return "".join(reversed(chars))


# `_base32(millis, 10) + _base32(random, 16)` as 13 lookups of two characters (10 bits each): a
# fan-out makes two ids a recipient, and the digit-by-digit loop took about half their cost.
_PAIRS = [first + second for first in _ALPHABET for second in _ALPHABET]
_SHIFTS = tuple(range(120, -1, -10))
_MILLIS_BITS = (1 << 50) - 1


def new_id(prefix: str) -> str:
    """`prefix_` + 10 characters of milliseconds + 16 random characters (80 bits)."""
    value = ((time.time_ns() // 1_000_000 & _MILLIS_BITS) << 80) | secrets.randbits(80)
    return prefix + "_" + "".join([_PAIRS[(value >> shift) & 1023] for shift in _SHIFTS])


def first_at(prefix: str, epoch_seconds: float) -> str:
    """The least id `new_id(prefix)` makes in this instant's millisecond: every id made earlier sorts
    before it, so a primary key finds the rows older than an instant without an index of its own."""
    value = (int(epoch_seconds * 1000) & _MILLIS_BITS) << 80
    return prefix + "_" + "".join([_PAIRS[(value >> shift) & 1023] for shift in _SHIFTS])
