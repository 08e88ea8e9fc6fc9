"""Pure ASGI middleware for every answer: a request id, and a 500 that tells nothing of the fault."""

from __future__ import annotations

import logging
import random
import re
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from http_api.routing import render_json

log = logging.getLogger("switchboard.http")
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")


class RequestContext:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = ""
        for name, value in scope["headers"]:
            if name == b"x-request-id":
                given = value.decode("latin-1")
        # Request ids need to be unique, not secret: no system call for randomness per request.
        request_id = given if _REQUEST_ID.fullmatch(given) else f"req_{random.getrandbits(96):024x}"
        scope.setdefault("state", {})["request_id"] = request_id
        id_header = (b"x-request-id", request_id.encode())
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", ()))
                if any(name.lower() == b"x-request-id" for name, _ in headers):
                    headers = [(name, value) for name, value in headers if name.lower() != b"x-request-id"]
                headers.append(id_header)
                message["headers"] = headers
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception as error:
            if started:
                return  # the app's own handler has answered 500 and logged the fault
            if isinstance(error, ValueError) and "NUL (0x00)" in str(error):
                # psycopg2 refusing a NUL for PostgreSQL's text: input no edge check named (a form
                # field, say), the caller's to mend rather than a fault of ours.
                await _answer(send_with_id, 400, "bad_request", "The request holds a NUL character, which is not text.")
                return
            log.exception("unhandled error in request %s", request_id)
            await _answer(send_with_id, 500, "internal_error",
                          f"Something went wrong on our side. Quote request id {request_id} when reporting it.")


async def _answer(send: Any, status: int, code: str, message: str) -> None:
    body = render_json({"error": {"code": code, "message": message}})
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
