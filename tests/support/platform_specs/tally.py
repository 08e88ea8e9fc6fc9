"""How many adapter requests the check saw in the session, by platform: printed at the session's end
(under pytest-xdist each worker hands its count to the controller). `SWITCHBOARD_SPEC_RECORD=<file>`
also appends every request seen, as JSON lines, for recording the adapters' own requests."""

from __future__ import annotations

import base64
import json
import os
from collections import Counter
from typing import Any

import pytest

from tests.support import platform_specs

_TOTAL: Counter[str] = Counter()


def record(seen: list[platform_specs.Seen]) -> None:
    path = os.environ.get("SWITCHBOARD_SPEC_RECORD")
    if not path:
        return
    with open(path, "a") as out:
        for each in seen:
            out.write(json.dumps({
                "platform": each.platform, "method": each.method, "path": each.path, "query": each.query,
                "content_type": each.content_type, "body": base64.b64encode(each.body).decode(),
                "headers": each.headers,
                "answer": None if each.answer is None else {
                    "status": each.answer.status, "content_type": each.answer.content_type,
                    "body": base64.b64encode(each.answer.body).decode()},
            }) + "\n")


def pytest_sessionfinish(session: pytest.Session) -> None:
    output: dict[str, Any] | None = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["platform_requests"] = dict(platform_specs.SEEN_BY_PLATFORM)
    else:
        _TOTAL.update(platform_specs.SEEN_BY_PLATFORM)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    _TOTAL.update(getattr(node, "workeroutput", {}).get("platform_requests", {}))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _TOTAL:
        return
    by_platform = ", ".join(f"{name} {count}" for name, count in sorted(_TOTAL.items()))
    terminalreporter.write_line(
        f"platform requests checked against their published descriptions: {sum(_TOTAL.values())} ({by_platform})")
