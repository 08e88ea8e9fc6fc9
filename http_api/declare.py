"""Shorthands for declaring operations in the route modules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from http_api.routing import Call, Handler, Operation, Shape
from storage.requests import Transaction

# Every authenticated operation can answer these; the OpenAPI document lists them once per operation.
COMMON_ERRORS = (400, 401, 403, 404, 413, 415, 422, 429)


def op(
    method: str,
    path: str,
    handler: Handler,
    *,
    summary: str,
    tag: str,
    operation_id: str,
    ok: int = 200,
    answer: Shape | None = None,
    body: Shape | None = None,
    body_required: bool = True,
    query: Shape | None = None,  # a list's query names page and limit itself (`PageQuery`)
    errors: tuple[int, ...] = (),
    auth: bool = True,
    description: str = "",
    waits: bool = False,
    transaction: Transaction | Literal[""] = "",
    resume: Callable[[Call, str], Any] | None = None,
    stream: Callable[[Any], Any] | None = None,
    raw_body: str | None = None,
) -> Operation:
    responses: dict[int, Shape | None] = {ok: answer}
    if auth:
        # Any POST can meet an Idempotency-Key that was used with another body: 409.
        for status in COMMON_ERRORS + errors + ((409,) if method == "POST" else ()):
            responses[status] = None
    else:
        for status in errors:
            responses[status] = None
    return Operation(
        method=method,
        path=path,
        handler=handler,
        summary=summary,
        tag=tag,
        operation_id=operation_id,
        responses=responses,
        body=body,
        body_required=body_required,
        query=query,
        auth=auth,
        description=description,
        waits=waits,
        transaction=transaction,
        resume=resume,
        stream=stream,
        raw_body=raw_body,
    )
