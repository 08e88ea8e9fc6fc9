"""`/hooks/{platform}`: where platforms deliver their webhooks. Bad signature → 403, nothing stored.
GET answers the platform's subscription check: Meta's `hub.challenge`, X's `crc_token`."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from http_api.routing import error_response, json_response, read_body
from kit import json_input
from kit.errors import NotFound, ServiceError
from service.accounts.shapes import PLATFORMS
from service.inbox import inbound
from storage.db import connection, db


def _receive(platform: str, request: Request, raw: bytes) -> Response:
    query = dict(request.query_params)
    inbound.verify(platform, request.headers, raw, query)
    # A platform retries (and Telegram stalls the bot's queue) on anything but a 2xx: a lone
    # surrogate in a signed body is kept as U+FFFD rather than refused.
    payload = json_input.decode(raw, replace_surrogates=True)
    with connection(), db.atomic():
        stored = inbound.receive(platform, payload, query)
    return json_response(200, {"received": stored})


async def hook(request: Request) -> Response:
    platform = request.path_params["platform"]
    try:
        if platform not in PLATFORMS:
            raise NotFound("No such platform.")
        if request.method == "GET":
            # The platform's subscription check: Meta's challenge echoed as text, X's CRC answered in JSON.
            answer = inbound.answer_check(platform, request.query_params)
            return json_response(200, answer) if isinstance(answer, dict) else PlainTextResponse(answer)
        raw = await read_body(request)
        return await run_in_threadpool(_receive, platform, request, raw)
    except ServiceError as error:
        return error_response(error)


ROUTES = [Route("/hooks/{platform}", hook, methods=["GET", "POST"])]
