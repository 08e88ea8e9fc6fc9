"""Tools need the token's scopes: a read token cannot call a write tool (one is added to the registry
for this module's tests, on a service of their own), and every tool is annotated."""

from __future__ import annotations

import uuid

import httpx2
import pytest

from mcp_server import tools as mcp_tools
from service.identity import bootstrap as bootstrap_module
from service.identity import workspace_shapes, workspaces
from storage.db import connection
from storage.models import Profile
from switchboard.app import create_app
from tests.support.live_server import live_server
from tests.support.oauth_flow import browser_sign_in, call_tool_raw, hand_made_tokens


def rpc(answer: httpx2.Response) -> dict:
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]


# --- scopes, with a write tool added to the registry for this test --------------------------------

CREATE_PROFILE = mcp_tools.ToolDef(
    "create_profile", workspaces.create_profile, "write", "Create a profile.",
    model=workspace_shapes.CreateProfile, output=workspace_shapes.Profile)


@pytest.fixture
def server_with_write_tool(service, monkeypatch):
    monkeypatch.setattr(mcp_tools, "TOOLS", [*mcp_tools.TOOLS, CREATE_PROFILE])
    port = int(service.base_url.rsplit(":", 1)[1])
    with live_server(create_app(service, worker=False), port=port) as url:
        yield url


def test_a_read_token_cannot_call_a_write_tool(server_with_write_tool, service):
    with connection():
        email = f"scopes-{uuid.uuid4().hex[:8]}@example.com"
        tenant = bootstrap_module.bootstrap(email=email, password="correct horse")
    with httpx2.Client(base_url=server_with_write_tool, timeout=30) as http:
        browser_sign_in(http, email, "correct horse")
        _, read_only = hand_made_tokens(http, workspace_id=tenant["workspaceId"], scope="read")
        assert read_only["scope"] == "read"
        # A step-up, not a tool error (the MCP authorization spec, RFC 6750 §3.1): the HTTP answer
        # to the call is 403 naming the scopes the call needs beside those granted.
        refused = call_tool_raw(http, read_only["access_token"], "create_profile", {"name": "Nope"})
        assert refused.status_code == 403
        challenge = refused.headers["www-authenticate"]
        assert challenge.startswith("Bearer ")
        assert 'error="insufficient_scope"' in challenge
        assert 'scope="read write"' in challenge
        assert f'resource_metadata="{server_with_write_tool}/.well-known/oauth-protected-resource/mcp"' in challenge
        # The read tools still answer on the same token.
        assert rpc(call_tool_raw(http, read_only["access_token"], "list_accounts")).get("isError") is not True

        _, write_only = hand_made_tokens(http, workspace_id=tenant["workspaceId"], scope="write")
        no_read = call_tool_raw(http, write_only["access_token"], "list_accounts")
        assert no_read.status_code == 403
        assert 'scope="read write"' in no_read.headers["www-authenticate"]

        _, both = hand_made_tokens(http, workspace_id=tenant["workspaceId"], scope="read write")
        made = rpc(call_tool_raw(http, both["access_token"], "create_profile", {"name": "From the assistant"}))
        assert made.get("isError") is not True
        assert made["structuredContent"]["workspaceId"] == tenant["workspaceId"]
    with connection():
        assert [p.name for p in Profile.select().where(Profile.workspace == tenant["workspaceId"])
                .order_by(Profile.created_at)] == ["Main", "From the assistant"]


def test_the_401_follows_rfc_6750(server_with_write_tool):
    with httpx2.Client(base_url=server_with_write_tool, timeout=30) as http:
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        headers = {"Accept": "application/json, text/event-stream"}
        anonymous = http.post("/mcp", json=listing, headers=headers)
        stale = http.post("/mcp", json=listing, headers={**headers, "Authorization": "Bearer mcp_at_not-a-token"})
    metadata = f'resource_metadata="{server_with_write_tool}/.well-known/oauth-protected-resource/mcp"'
    # No credentials: told where to get some and what to ask for, with no error code (RFC 6750 §3.1).
    assert anonymous.status_code == 401
    assert anonymous.headers["www-authenticate"].startswith("Bearer ")
    assert "error=" not in anonymous.headers["www-authenticate"]
    assert metadata in anonymous.headers["www-authenticate"]
    assert 'scope="read write"' in anonymous.headers["www-authenticate"]
    # A bearer that is no good: the same, with `invalid_token`.
    assert stale.status_code == 401
    assert 'error="invalid_token"' in stale.headers["www-authenticate"]
    assert metadata in stale.headers["www-authenticate"]
    assert "mcp_at_not-a-token" not in stale.text


def test_tools_are_annotated(server_with_write_tool, service):
    with connection():
        email = f"ann-{uuid.uuid4().hex[:8]}@example.com"
        tenant = bootstrap_module.bootstrap(email=email, password="correct horse")
    with httpx2.Client(base_url=server_with_write_tool, timeout=30) as http:
        browser_sign_in(http, email, "correct horse")
        _, tokens = hand_made_tokens(http, workspace_id=tenant["workspaceId"])
        listed = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                           headers={"Authorization": f"Bearer {tokens['access_token']}",
                                    "Accept": "application/json, text/event-stream",
                                    "MCP-Protocol-Version": "2025-06-18"}).json()["result"]["tools"]
    by_name = {tool["name"]: tool for tool in listed}
    assert by_name["list_accounts"]["annotations"]["readOnlyHint"] is True
    assert by_name["create_profile"]["annotations"]["readOnlyHint"] is False
    assert set(by_name["list_accounts"]["inputSchema"]["properties"]) == {"profileId", "platform", "status", "page", "limit"}
    assert by_name["list_accounts"]["inputSchema"]["properties"]["limit"]["anyOf"][0]["maximum"] == 100
