"""Every MCP client snippet of the README parses as its client reads it, names `/mcp` of the
service `make serve` starts, and connects: the official SDK client, pointed at the URL it names
(on this test's port), goes through consent and lists the tools."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from storage.db import connection
from storage.models import User
from tests.support.oauth_flow import Consent, provider, sign_in

README = Path(__file__).resolve().parents[2] / "README.md"
SERVE_URL = "http://127.0.0.1:8000/mcp"


def snippets() -> dict[str, str]:
    """{client: the URL its snippet names}, read from the README's section on assistants."""
    section = README.read_text().split("## Connecting an AI assistant", 1)[1].split("\n## ", 1)[0]
    found: dict[str, str] = {}
    label = None
    for block in re.split(r"(```\w*\n.*?```)", section, flags=re.S):
        if not block.startswith("```"):
            labels = re.findall(r"^\*\*([^*]+)\*\*", block, flags=re.M)  # a paragraph naming its client
            label = labels[0] if labels else label
            continue
        kind, body = block.split("\n", 1)[0][3:], block.split("\n", 1)[1].rsplit("```", 1)[0]
        if kind == "sh":
            words = shlex.split(body.strip())
            assert words[:5] == ["claude", "mcp", "add", "--transport", "http"]
            found[f"{label} (command)"] = words[6]
            continue
        config = json.loads(body)
        if "servers" in config:  # VS Code
            server = config["servers"]["switchboard"]
            assert server["type"] == "http"
            found[label] = server["url"]
        elif "command" in config["mcpServers"]["switchboard"]:  # Claude Desktop, through mcp-remote
            server = config["mcpServers"]["switchboard"]
            assert server["command"] == "npx" and "mcp-remote" in server["args"]
            found[label] = server["args"][-1]
        else:  # Claude Code's .mcp.json, Cursor
            server = config["mcpServers"]["switchboard"]
            assert server.get("type", "http") == "http"
            found[f"{label} (file)" if label in found or f"{label} (command)" in found else label] = server["url"]
    return found


def test_every_client_snippet_connects_with_the_official_client(server_url, tenant):
    named = snippets()
    assert set(named) == {"Claude Code (command)", "Claude Code (file)", "Claude Desktop", "Cursor", "VS Code"}
    assert set(named.values()) == {SERVE_URL}
    with connection():
        email = User.get_by_id(tenant["userId"]).email
    here = urlsplit(server_url)

    async def connect(url: str) -> set[str]:
        target = urlsplit(url)._replace(netloc=here.netloc).geturl()  # the same URL, on this test's port
        async with httpx2.AsyncClient(base_url=server_url, timeout=30) as browser:
            await sign_in(browser, email, "correct horse")
            auth = provider(server_url, browser, Consent(workspace_id=tenant["workspaceId"]))
            async with (
                httpx2.AsyncClient(auth=auth, timeout=30) as http,
                Client(streamable_http_client(target, http_client=http)) as client,
            ):
                return {tool.name for tool in (await client.list_tools()).tools}

    for client_name, url in named.items():
        tools = asyncio.run(connect(url))
        assert {"list_accounts", "send_message"} <= tools, client_name
