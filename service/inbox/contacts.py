"""Contact handles in one normal form per platform, so that one contact is one conversation.

`@Bea`, `bea` and `BEA` are the same Instagram or Telegram user (handles are case-insensitive on
every platform here); `+44 20 7946 0958`, `0044 20 7946 0958` and `442079460958` are the same
WhatsApp number, kept in E.164 (`+442079460958`). The normal form is what is stored and shown as
`contactHandle`, and what the per-account unique index compares.
"""

from __future__ import annotations

import re

from platforms import registry

MAX_HANDLE_LENGTH = 255
_PHONE_PUNCTUATION = re.compile(r"[\s().\-/]")
_E164_DIGITS = re.compile(r"[1-9][0-9]{6,14}")  # ASCII digits: `\d` also takes ١٢٣


class InvalidHandle(ValueError):
    """The handle cannot name a contact on that platform; the message says why, for a person."""


def normalise_handle(platform: str, handle: str) -> str:
    """The stored form of a handle given by a caller; `InvalidHandle` when it cannot be one."""
    if registry.declared(platform).inbox_rules.phone_handles:
        return _e164(handle)
    value = handle.strip()
    value = value[1:] if value.startswith("@") else value
    value = value.lower()
    if not value:
        raise InvalidHandle("must not be empty")
    if len(value) > MAX_HANDLE_LENGTH:
        raise InvalidHandle(f"must be at most {MAX_HANDLE_LENGTH} characters long")
    if any(char.isspace() for char in value):
        raise InvalidHandle("must not contain blanks")
    return value


def normalise_inbound_handle(platform: str, handle: str | None) -> str | None:
    """The stored form of a handle a platform sent us; never refuses (a webhook is stored as it came)."""
    if not handle:
        return None
    try:
        return normalise_handle(platform, handle)
    except InvalidHandle:
        cleaned = handle.strip().lower()[:MAX_HANDLE_LENGTH]
        return cleaned or None


def _e164(handle: str) -> str:
    value = _PHONE_PUNCTUATION.sub("", handle)
    if value.startswith("00"):
        value = value[2:]
    elif value.startswith("+"):
        value = value[1:]
    if not _E164_DIGITS.fullmatch(value):
        raise InvalidHandle("must be a phone number in international form, e.g. +442079460958")
    return "+" + value
