"""Encryption of platform credentials at rest, with keys derived from SWITCHBOARD_SECRET_KEY.

The setting may list several keys, newest first: the newest encrypts, every one of them decrypts.
So a key is rotated without downtime: the new key is put first, every process restarted with the
list, `switchboard secrets rotate` rewrites what is stored with the newest, and the old key can go.
"""

from __future__ import annotations

import base64
import json
from functools import lru_cache
from typing import Any, cast

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from kit import settings


def derive_key(secret_key: str, purpose: bytes) -> bytes:
    """32 bytes for one purpose, derived from SWITCHBOARD_SECRET_KEY (HKDF-SHA256)."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=b"switchboard", info=purpose).derive(secret_key.encode())


@lru_cache(maxsize=4)
def _fernet(secret_key: str) -> Fernet:
    return Fernet(base64.urlsafe_b64encode(derive_key(secret_key, b"platform-credentials")))


@lru_cache(maxsize=4)
def _fernets(secret_keys: tuple[str, ...]) -> MultiFernet:
    """Encrypts with the first (newest) key, decrypts with whichever key opens the token."""
    return MultiFernet([_fernet(key) for key in secret_keys])


def _keys() -> tuple[str, ...]:
    return settings.current().secret_keys


def encrypt_json(value: dict[str, Any]) -> bytes:
    return _fernets(_keys()).encrypt(json.dumps(value).encode())


def decrypt_json(blob: bytes | memoryview | None) -> dict[str, Any]:
    """The credentials sealed in `blob`, a fresh dict on every call (callers may change theirs)."""
    if blob is None:
        return {}
    return cast(dict[str, Any], json.loads(_opened(_keys(), bytes(blob))))


def sealed_with_newest(blob: bytes) -> bool:
    """Whether `blob` is already encrypted with the newest key (nothing for a rotation to do)."""
    try:
        _fernet(_keys()[0]).decrypt(blob)
    except InvalidToken:
        return False
    return True


def reseal(blob: bytes) -> bytes:
    """`blob` encrypted again with the newest key, its content unchanged. Raises `ValueError` when no
    key opens it."""
    try:
        return _fernets(_keys()).rotate(blob)
    except InvalidToken as exc:
        raise ValueError("stored credentials cannot be decrypted with any of the secret keys") from exc


# Every message a worker sends opens its account's credentials; their sealed bytes change only
# when the credentials do, so the last few opened are kept by those bytes (the decryption was 6-7 %
# of a broadcasting worker's sampled time, 75,000 of a send's 2.5 M instructions). The process
# holds the keys that open them anyway.
@lru_cache(maxsize=1024)
def _opened(secret_keys: tuple[str, ...], blob: bytes) -> bytes:
    try:
        return _fernets(secret_keys).decrypt(blob)
    except InvalidToken as exc:  # the secret key changed: the credentials are unreadable
        raise ValueError("stored credentials cannot be decrypted with the current secret key") from exc
