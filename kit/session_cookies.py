"""Starlette's signed session cookie, verified with any of the secret keys (newest first).

Starlette signs with one key; a rotation of `SWITCHBOARD_SECRET_KEY` would then sign every person
out. Here the newest key signs and the older ones still verify, as itsdangerous allows.
"""

from __future__ import annotations

from typing import Any

import itsdangerous
from starlette.middleware.sessions import SessionMiddleware as StarletteSessionMiddleware
from starlette.types import ASGIApp


class SessionMiddleware(StarletteSessionMiddleware):
    def __init__(self, app: ASGIApp, /, *, secret_keys: tuple[str, ...], **kwargs: Any) -> None:
        super().__init__(app, secret_key=secret_keys[0], **kwargs)
        # itsdangerous signs with the last key of the list and verifies with each: oldest first.
        self.signer = itsdangerous.TimestampSigner(list(reversed(secret_keys)))
