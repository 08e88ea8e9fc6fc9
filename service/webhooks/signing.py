"""Signing outbound webhooks: endpoint secrets (random, encrypted at rest because they must be
readable to sign, shown once) and the two signature schemes every delivery carries."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from functools import lru_cache
from typing import Any

from kit import clock, crypto
from service.common.configured import Configured
from storage.models import WebhookEndpoint

settings = Configured(__name__)  # handed in by the composition root (wire)


def new_secret() -> str:
    # The standard alphabet, padded: the Standard Webhooks libraries decode it with a
    # non-validating b64decode that would silently drop url-safe `-` and `_`.
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def seal(value: Any) -> bytes:
    return crypto.encrypt_json({"v": value})


@lru_cache(maxsize=4096)
def unseal(blob: bytes, secret_key: str) -> Any:
    # Cached on the ciphertext: a worker signs many deliveries with one endpoint's secret, and
    # Fernet decryption per attempt would be most of the signing cost.
    return crypto.decrypt_json(blob)["v"]


def signing_secrets(endpoint: WebhookEndpoint, *, at: Any = None) -> list[str]:
    """The secrets that sign now: the current one first, then those rotated out less than 24 h ago."""
    moment = at or clock.now()
    key = settings().secret_key
    out = [unseal(bytes(endpoint.secret), key)]
    if endpoint.previous_secrets is not None:
        for old in unseal(bytes(endpoint.previous_secrets), key):
            if old["expiresAt"] > clock.iso(moment):
                out.append(old["secret"])
    return out


def signature_header(body: bytes, secrets_: list[str], timestamp: int) -> str:
    """`t=<unix>,v1=<hex>[,v1=<hex>]`: HMAC-SHA256 keyed with the whole `whsec_...` string (Stripe's scheme)."""
    signed = str(timestamp).encode() + b"." + body
    parts = [f"t={timestamp}"]
    parts += ["v1=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest() for secret in secrets_]
    return ",".join(parts)


def _standard_key(secret: str) -> bytes:
    """The HMAC key of Standard Webhooks: the base64-decoded part after `whsec_`. Secrets made before
    the standard alphabet (unpadded base64url) decode with the url-safe alphabet."""
    encoded = secret.removeprefix("whsec_")
    padded = encoded + "=" * (-len(encoded) % 4)
    if "-" in encoded or "_" in encoded or not encoded.endswith("="):
        return base64.urlsafe_b64decode(padded)
    return base64.b64decode(padded)


def standard_headers(event_id: str, body: bytes, secrets_: list[str], timestamp: int) -> dict[str, str]:
    """`webhook-id`, `webhook-timestamp`, `webhook-signature` (`v1,<base64>` per live secret,
    space-separated): what the `standardwebhooks` libraries verify."""
    signed = f"{event_id}.{timestamp}.".encode() + body
    signatures = [
        "v1," + base64.b64encode(hmac.new(_standard_key(secret), signed, hashlib.sha256).digest()).decode()
        for secret in secrets_
    ]
    return {"webhook-id": event_id, "webhook-timestamp": str(timestamp), "webhook-signature": " ".join(signatures)}
