"""What a log line says about the request it was written for: its id and, once the caller is
known, its workspace. Set by the front doors, read by the JSON log format (`switchboard.json_logs`);
context variables, so each request (and the storage thread running its work) sees its own."""

from __future__ import annotations

from contextvars import ContextVar

request_id: ContextVar[str | None] = ContextVar("request_id", default=None)
workspace_id: ContextVar[str | None] = ContextVar("workspace_id", default=None)
