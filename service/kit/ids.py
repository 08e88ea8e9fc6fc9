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


def new_id(prefix: str) -> str:
    """`prefix_` + 10 characters of milliseconds + 16 random characters (80 bits)."""
    millis = time.time_ns() // 1_000_000
    return f"{prefix}_{_base32(millis, 10)}{_base32(secrets.randbits(80), 16)}"
