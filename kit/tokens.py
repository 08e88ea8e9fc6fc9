"""Random secrets and how they are kept: generated from the CSPRNG, stored as SHA-256, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

API_KEY_PATTERN = re.compile(r"sk_[0-9a-f]{64}")


def sha256_hex(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def new_api_key() -> str:
    return "sk_" + secrets.token_hex(32)


def api_key_prefix(key: str) -> str:
    return key[:11]  # "sk_" + first 8 hex


def same_hash(stored: str, presented: str) -> bool:
    return hmac.compare_digest(stored.encode(), sha256_hex(presented).encode())
