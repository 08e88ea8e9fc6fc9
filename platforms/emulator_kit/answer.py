"""The emulator's JSON answers: every character outside ASCII written as its `\\u` escape, as Graph
writes its answers. The same JSON to any reader; and a lone surrogate that a caller sent (`"\\ud800"`:
`json.loads` takes it, UTF-8 cannot hold it) goes back as the escape it came in, where a plain
`JSONResponse` would fail to encode it and answer 500."""

from __future__ import annotations

import json
from typing import Any

from starlette import responses


class JSONResponse(responses.JSONResponse):
    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def asked(data: dict[str, Any], fields: list[str]) -> dict[str, Any]:
    """A Graph read's answer: the fields it asked for (and `id`), as Graph answers; all of them when
    it asked for none (the node's default fields)."""
    wanted = [name for name in fields if name]
    if not wanted:
        return data
    return {key: value for key, value in data.items() if key in wanted or key == "id"}
