"""`SWITCHBOARD_LOG_FORMAT=json`: one JSON object a line, for a log collector to index.

Each line has `time` (UTC, ISO 8601), `level`, `logger`, `message`, `requestId` (of the request the
line was written for, else null) and `workspaceId` where the caller is known; a logged fault adds
`exception` (its frames and type, never its text). Messages are redacted as the text format's are.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from kit import log_context
from platforms.http import redact
from platforms.log_format import ServiceFormatter


class JsonFormatter(ServiceFormatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace(
                "+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": redact(record.getMessage()),
            "requestId": log_context.request_id.get(),
        }
        workspace = log_context.workspace_id.get()
        if workspace is not None:
            line["workspaceId"] = workspace
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)
