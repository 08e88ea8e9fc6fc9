"""Asking the person before a tool reaches people: an elicitation, over the stateless server.

The service runs MCP without sessions (any API process serves any request), so it asks the way
protocol revision 2026-07-28 lets a stateless server ask: the first `tools/call` is answered with an
`input_required` result holding the question (an `elicitation/create` form with no fields: the
person accepts or declines), and the client calls again with the person's answer and the
`requestState` it was given, which the SDK seals (AES-GCM, bound to this request and this
credential) so that no client can make one up. The state also holds a digest of the tool's
arguments: the answer confirms this exact call, not another one sent with the same state.

A client that declares no elicitation, or that speaks an earlier revision (which could only be
asked over a session's back channel), is not asked: the tool behaves as it always has.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ElicitRequest, ElicitRequestFormParams, InputRequiredResult, TextContent
from mcp_types.version import is_version_at_least

from kit.errors import ServiceError

# The first revision in which a stateless server can ask (an `input_required` result).
ASKING_REVISION = "2026-07-28"
QUESTION = "confirm"  # the key of the one input request


def can_ask(context: Context[Any, Any]) -> bool:
    version = context.protocol_version
    if version is None or not is_version_at_least(version, ASKING_REVISION):
        return False
    capabilities = context.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    if elicitation is None:
        return False
    # An empty `elicitation: {}` means form mode (the revisions before modes were named).
    return elicitation.form is not None or elicitation.url is None


def _fingerprint(tool: str, arguments: dict[str, Any]) -> str:
    text = json.dumps([tool, arguments], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _answer(context: Context[Any, Any], fingerprint: str) -> tuple[str, str] | None:
    """(the person's action, the question asked) when this call carries an answer to our question."""
    state = context.request_state
    if state is None:
        return None
    try:
        data = json.loads(state)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("confirm") != fingerprint:
        return None  # another call's answer, or none of ours: ask again
    response = (context.input_responses or {}).get(QUESTION)
    action = getattr(response, "action", None)
    return (action, str(data.get("question", ""))) if isinstance(action, str) else None


async def confirmed(
    context: Context[Any, Any], tool: Any, arguments: dict[str, Any],
    question: Callable[[], Awaitable[str | None]],
) -> Literal[True] | CallToolResult | InputRequiredResult:
    """True when the call may go ahead (the person accepted, or there is nothing to ask); else
    the question to send, or the answer saying that the person declined and nothing happened."""
    fingerprint = _fingerprint(tool.name, arguments)
    answered = _answer(context, fingerprint)
    if answered is not None:
        action, asked = answered
        if action == "accept":
            return True
        moved = "declined" if action == "decline" else "dismissed the question"
        return _declined(ServiceError(f"Nothing was done: the person {moved} ({asked})", code="declined"))
    question_now = await question()
    if question_now is None:
        return True
    return InputRequiredResult(
        input_requests={QUESTION: ElicitRequest(params=ElicitRequestFormParams(
            message=question_now, requested_schema={"type": "object", "properties": {}}))},
        request_state=json.dumps({"confirm": fingerprint, "question": question_now}, ensure_ascii=False),
    )


def _declined(error: ServiceError) -> CallToolResult:
    body = error.body()
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
                          structured_content=body, is_error=True)
