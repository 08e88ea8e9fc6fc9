"""Encryption of platform credentials at rest, with a key derived from SWITCHBOARD_SECRET_KEY."""

from __future__ import annotations

import base64
import json
from functools import lru_cache
from typing import Any, cast

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from kit import settings


def derive_key(secret_key: str, purpose: bytes) -> bytes:
    """32 bytes for one purpose, derived from SWITCHBOARD_SECRET_KEY (HKDF-SHA256)."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=b"switchboard", info=purpose).derive(secret_key.encode())


@lru_cache(maxsize=4)
def _fernet(secret_key: str) -> Fernet:
    return Fernet(base64.urlsafe_b64encode(derive_key(secret_key, b"platform-credentials")))


def encrypt_json(value: dict[str, Any]) -> bytes:
    return _fernet(settings.current().secret_key).encrypt(json.dumps(value).encode())


def decrypt_json(blob: bytes | memoryview | None) -> dict[str, Any]:
    """The credentials sealed in `blob`, a fresh dict on every call (callers may change theirs)."""
    if blob is None:
        return {}
    return cast(dict[str, Any], json.loads(_opened(settings.current().secret_key, bytes(blob))))


# Every message a worker sends opens its account's credentials; their sealed bytes change only
# when the credentials do, so the last few opened are kept by those bytes (the decryption was 6-7 %
# of a broadcasting worker's sampled time, 75,000 of a send's 2.5 M instructions). The process
# holds the key that opens them anyway.
@lru_cache(maxsize=1024)
def _opened(secret_key: str, blob: bytes) -> bytes:
    try:
        return _fernet(secret_key).decrypt(blob)
    except InvalidToken as exc:  # the secret key changed: the credentials are unreadable
        raise ValueError("stored credentials cannot be decrypted with the current secret key") from exc
