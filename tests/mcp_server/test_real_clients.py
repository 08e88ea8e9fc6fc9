"""Third-party MCP clients, end to end: `mcp-remote` (the bridge Claude Desktop users run) and the
official TypeScript SDK's client go through the whole OAuth flow with the consent page in Chromium (mcp-remote
also with a client metadata document, coming back on a port of its own),
then call a read and a write tool; the MCP Inspector's CLI lists the tools with an API key.

The npm packages (and the Node they need) are pinned in `tests/clients/package-lock.json`, installed
by this module when missing (`npm ci`). Slow (an install, a browser, Node start-ups): outside the
default run; `.ci/run` and `make test-slow` run it.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import secrets
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from storage.db import connection
from storage.models import User
from tests.conftest import bearer
from tests.support.live_server import free_port, live_server
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import Tls, make_tls

CLIENTS = Path(__file__).resolve().parents[1] / "clients"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"]
WAIT = 120  # seconds: Node's start-up and the OAuth round trips on a busy machine

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.shared_service,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Chromium is not installed"),
    pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed"),
]


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Tls:
    return make_tls(tmp_path_factory.mktemp("tls"), "localhost")


@pytest.fixture(scope="module")
def live_overrides(tls: Tls) -> dict[str, Any]:
    # The service fetches client metadata documents from a local https host (its own CA).
    return {"webhook_ca_bundle": tls.ca_path, "webhook_allow_private": True}


@contextlib.contextmanager
def metadata_document(tls: Tls, redirect_uri: str) -> Iterator[str]:
    """An https host publishing one client's metadata document, as a client's vendor would; yields its URL."""
    box: list[str] = []

    async def document(request: Request) -> JSONResponse:
        return JSONResponse({"client_id": box[0], "client_name": "Bridge with a metadata document",
                             "redirect_uris": [redirect_uri], "token_endpoint_auth_method": "none",
                             "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]})

    path = f"/mcp-remote-{secrets.token_hex(4)}.json"  # its own URL: documents are cached by URL
    with live_server(Starlette(routes=[Route(path, document)]), ssl_certfile=tls.cert_path) as base:
        box.append(base.replace("http://127.0.0.1", "https://localhost") + path)
        yield box[0]


@pytest.fixture(scope="module")
def node_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment the clients run in: the pinned packages installed, their Node first on PATH,
    a home of their own (mcp-remote keeps its tokens there)."""
    if not (CLIENTS / "node_modules" / ".package-lock.json").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=CLIENTS, check=True, timeout=900,
                       capture_output=True)
    home = tmp_path_factory.mktemp("node-home")
    return {**os.environ, "PATH": f"{CLIENTS / 'node_modules' / '.bin'}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(home), "MCP_REMOTE_CONFIG_DIR": str(home / ".mcp-auth"), "NO_COLOR": "1",
            "DISPLAY": "", "BROWSER": "true"}


def _lines(stream: IO[str], into: queue.Queue[str]) -> None:
    for line in stream:
        into.put(line.rstrip("\n"))


class Process:
    """A client process whose output lines are read as they come."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(args, cwd=CLIENTS, env=env, text=True, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.out: queue.Queue[str] = queue.Queue()
        self.err: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        for stream, into in ((self.process.stdout, self.out), (self.process.stderr, self.err)):
            threading.Thread(target=_lines, args=(stream, into), daemon=True).start()

    def line(self, source: queue.Queue[str], wanted: Any) -> str:
        """The next line of `source` for which `wanted(line)` holds (within WAIT seconds)."""
        while True:
            try:
                line = source.get(timeout=WAIT)
            except queue.Empty:
                raise AssertionError("no such line; the process said:\n" + "\n".join(self.seen[-40:])) from None
            self.seen.append(line)
            if wanted(line):
                return line

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()


@pytest.fixture
def page() -> Iterator[Any]:
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        try:
            yield browser.new_page()
        finally:
            browser.close()


def _consent_in_browser(page: Any, authorize_url: str, email: str, workspace_id: str) -> None:
    """What the person does: opens the link the client printed, signs in, allows."""
    page.goto(authorize_url)
    page.fill("#email", email)
    page.fill("#password", "correct horse")
    page.click("button[type=submit]")
    page.wait_for_url("**/oauth/authorize?**")
    page.select_option("#workspaceId", workspace_id)
    page.click("button[value=allow]")
    page.wait_for_load_state()


def _email(tenant: dict[str, str]) -> str:
    with connection():
        return str(User.get_by_id(tenant["userId"]).email)


def _hooks(client, tenant) -> list[str]:
    return [hook["url"] for hook in client.get("/v1/webhooks", headers=bearer(tenant["apiKey"])).json()["data"]]


def test_mcp_remote_connects_through_consent_and_calls_a_read_and_a_write_tool(node_env, page, server_url, client,
                                                                               tenant):
    account = connect_account(client, tenant, "telegram")
    bridge = Process(["mcp-remote", f"{server_url}/mcp", "--allow-http"], node_env)
    try:
        bridge.line(bridge.err, lambda line: "Please authorize this client by visiting" in line)
        authorize_url = bridge.line(bridge.err, lambda line: line.startswith("http"))
        _consent_in_browser(page, authorize_url.strip(), _email(tenant), tenant["workspaceId"])
        assert "error" not in page.url

        bridge.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "claude-desktop-like", "version": "1.0"}}})
        assert json.loads(bridge.line(bridge.out, lambda line: '"id":1' in line))["result"]["serverInfo"]["name"] \
            == "switchboard"
        bridge.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        bridge.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "list_accounts", "arguments": {}}})
        listed = json.loads(bridge.line(bridge.out, lambda line: '"id":2' in line))["result"]
        assert [a["id"] for a in listed["structuredContent"]["data"]] == [account["id"]]
        bridge.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": {"name": "create_webhook", "arguments": {"url": "https://127.0.0.1:9/from-bridge"}}})
        made = json.loads(bridge.line(bridge.out, lambda line: '"id":3' in line))["result"]
        assert made.get("isError") is not True, made
    finally:
        bridge.stop()
    assert _hooks(client, tenant) == ["https://127.0.0.1:9/from-bridge"]


def test_mcp_remote_with_a_metadata_document_comes_back_on_a_port_of_its_own(node_env, page, server_url, client,
                                                                             tenant, tls):
    """The document names `localhost:3334`; the bridge listens where it likes (here another port) and
    the service lets it, as RFC 8252 has it for loopback redirects."""
    account = connect_account(client, tenant, "telegram")
    port = free_port()
    with metadata_document(tls, "http://localhost:3334/oauth/callback") as document:
        bridge = Process(["mcp-remote", f"{server_url}/mcp", str(port), "--client-metadata-url", document], node_env)
        try:
            bridge.line(bridge.err, lambda line: "Please authorize this client by visiting" in line)
            authorize_url = bridge.line(bridge.err, lambda line: line.startswith("http")).strip()
            assert f"redirect_uri=http%3A%2F%2Flocalhost%3A{port}%2Foauth%2Fcallback" in authorize_url
            _consent_in_browser(page, authorize_url, _email(tenant), tenant["workspaceId"])
            bridge.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
            bridge.line(bridge.out, lambda line: '"id":1' in line)
            bridge.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            bridge.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": {"name": "list_accounts", "arguments": {}}})
            listed = json.loads(bridge.line(bridge.out, lambda line: '"id":2' in line))["result"]
            assert [a["id"] for a in listed["structuredContent"]["data"]] == [account["id"]]
        finally:
            bridge.stop()


def test_the_typescript_sdk_connects_through_consent_and_calls_a_read_and_a_write_tool(node_env, page, server_url,
                                                                                       client, tenant):
    account = connect_account(client, tenant, "telegram")
    app = Process(["node", "ts_sdk_client.mjs", f"{server_url}/mcp", "list_accounts", "{}", "create_webhook",
                   json.dumps({"url": "https://127.0.0.1:9/from-ts"})], node_env)
    try:
        authorize = json.loads(app.line(app.out, lambda line: line.startswith('{"authorize"')))["authorize"]
        _consent_in_browser(page, authorize, _email(tenant), tenant["workspaceId"])
        tools = json.loads(app.line(app.out, lambda line: line.startswith('{"tools"')))["tools"]
        assert {"list_accounts", "send_message", "upload_media"} <= set(tools)
        read = json.loads(app.line(app.out, lambda line: line.startswith('{"read"')))["read"]
        assert [a["id"] for a in read["structuredContent"]["data"]] == [account["id"]]
        write = json.loads(app.line(app.out, lambda line: line.startswith('{"write"')))["write"]
        assert write.get("isError") is not True, write
    finally:
        app.stop()
    assert _hooks(client, tenant) == ["https://127.0.0.1:9/from-ts"]


def test_the_inspector_cli_lists_the_tools_with_an_api_key(node_env, server_url, tenant):
    listed = subprocess.run(
        ["mcp-inspector", "--cli", f"{server_url}/mcp", "--transport", "http",
         "--header", f"Authorization: Bearer {tenant['apiKey']}", "--method", "tools/list"],
        cwd=CLIENTS, env=node_env, capture_output=True, text=True, timeout=WAIT)
    assert listed.returncode == 0, listed.stderr
    names = {tool["name"] for tool in json.loads(listed.stdout)["tools"]}
    assert {"list_accounts", "create_post", "send_message", "upload_media"} <= names
