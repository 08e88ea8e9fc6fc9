"""`SWITCHBOARD_LOG_FORMAT=json`: one JSON object a line, carrying the request id and the workspace
of the request a line was written for, and never a key."""

from __future__ import annotations

import io
import json
import logging
import subprocess

import httpx2

from http_api.routes import workspaces as workspace_routes
from service.identity import bootstrap
from storage.db import connection
from switchboard.app import create_app
from switchboard.json_logs import JsonFormatter
from tests.conftest import bearer
from tests.support.live_server import free_port, live_server
from tests.support.processes import service_env, switchboard, wait_healthy


def test_serve_writes_one_json_object_a_line(service, tmp_path):
    port = free_port()
    env = service_env(service, SWITCHBOARD_LOG_FORMAT="json", SWITCHBOARD_BASE_URL=f"http://127.0.0.1:{port}")
    log = tmp_path / "serve.log"
    with log.open("w") as err:
        process = subprocess.Popen(switchboard("serve", "--port", str(port)), env=env, stdout=subprocess.DEVNULL,
                                   stderr=err)
        try:
            wait_healthy(f"http://127.0.0.1:{port}", process)
        finally:
            process.terminate()
            process.wait(timeout=15)
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert lines  # uvicorn's start and stop, at least
    assert all({"time", "level", "logger", "message", "requestId"} <= set(line) for line in lines)
    assert all(line["time"].endswith("Z") for line in lines)
    assert any(line["logger"].startswith("uvicorn") for line in lines)


def test_a_line_written_for_a_request_names_it_and_its_workspace(service, monkeypatch):
    listed = workspace_routes.OPERATIONS[0]
    assert (listed.method, listed.path) == ("GET", "/workspaces")
    original = listed.handler

    def logging_handler(call):
        logging.getLogger("switchboard.test").warning("listing workspaces for Authorization: Bearer %s",
                                                      tenant["apiKey"])
        return original(call)

    monkeypatch.setattr(listed, "handler", logging_handler)
    captured = io.StringIO()
    handler = logging.StreamHandler(captured)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with connection():
            tenant = bootstrap.bootstrap(email="owner@example.com", password="long enough password")
        with live_server(create_app(service, worker=False)) as url:
            answer = httpx2.get(url + "/v1/workspaces", headers={**bearer(tenant["apiKey"]), "X-Request-Id": "req-42"})
    finally:
        root.removeHandler(handler)
    assert answer.status_code == 200
    lines = [json.loads(line) for line in captured.getvalue().splitlines()]
    mine = [line for line in lines if line["logger"] == "switchboard.test"]
    assert len(mine) == 1
    assert mine[0]["requestId"] == "req-42"
    assert mine[0]["workspaceId"] == tenant["workspaceId"]
    assert mine[0]["level"] == "WARNING"
    assert "Bearer [REDACTED]" in mine[0]["message"]
    assert tenant["apiKey"] not in captured.getvalue()
