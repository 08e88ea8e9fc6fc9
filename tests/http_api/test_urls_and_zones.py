"""One reading of a URL (port range, brackets, IDNA) and one of a time zone for every front door:
what `urlsplit` or `ZoneInfo` let through used to be a 500 somewhere; now it is a 4xx naming the
field from /v1, MCP, the CSV import and the dashboard alike."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from tests.conftest import bearer
from tests.support.oauth_flow import call_tool_raw, hand_made_tokens, hidden
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service

BAD_URLS = ["https://example.com:65536/x.png", "https://[::1]:99999/x.png", "https://\u2460\u2461\u2466.0.0.1/x.png",
            "https://[::1/x.png", "https://example.com:0/x.png"]
BAD_ZONES = ["Europe", "a" * 300, "../../etc/passwd", "Mars/Olympus"]


def _tool(browser: httpx2.Client, token: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    answer = call_tool_raw(browser, token, name, arguments)
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]


@pytest.mark.parametrize("url", BAD_URLS)
def test_a_url_no_connection_could_use_is_a_422_naming_it_from_v1_and_mcp(client, tenant, browser, url):
    headers = bearer(tenant["apiKey"])
    for path in ("/v1/webhooks", "/v1/media/import"):
        answer = client.post(path, headers=headers, json={"url": url})
        assert answer.status_code == 422, (path, answer.text)
        assert answer.json()["error"]["details"][0]["field"] == "url"
    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    for tool in ("create_webhook", "import_media"):
        refused = _tool(browser, tokens["access_token"], tool, {"url": url})
        assert refused["isError"] is True
        assert refused["structuredContent"]["error"]["code"] == "validation_failed", (tool, refused)
    assert client.get("/v1/webhooks", headers=headers).json()["data"] == []


def test_a_csv_rows_bad_media_url_and_a_cell_over_128_kib_are_named_per_row(client, tenant):
    bot = connect_account(client, tenant, "x")
    long_text = "x" * 200_000  # over the csv module's default field limit (128 KiB)
    csv_text = ("content,accounts,mediaUrls\n"
                f"Hello,{bot['id']},https://\u2460\u2461\u2466.0.0.1/x.png\n"
                f"{long_text},{bot['id']},\n")
    answer = client.post("/v1/posts/import", headers={**bearer(tenant["apiKey"]), "content-type": "text/csv"},
                         params={"dryRun": "true"}, content=csv_text.encode())
    assert answer.status_code == 200, answer.text
    errors = answer.json()["errors"]
    assert [(e["row"], e["field"]) for e in errors] == [(1, "mediaUrls"), (2, "content")], errors


def test_the_dashboard_reads_zones_and_urls_as_v1_does(browser, client, tenant):
    for zone in BAD_ZONES:
        answer = browser.get("/dashboard/calendar", params={"tz": zone})
        assert answer.status_code == 422, (zone, answer.status_code)
        assert "IANA time zone" in answer.text
    youtube = connect_account(client, tenant, "youtube")
    composer = browser.get("/dashboard/posts/new")
    form = {"csrf_token": hidden(composer.text, "csrf_token"), "workspaceId": tenant["workspaceId"],
            "accounts": youtube["id"], "action": "schedule", "text": "t"}
    cases = [("0001-01-01T00:00", "Asia/Tokyo"), ("9999-12-31T23:59", "America/New_York"),
             ("2030-01-01T10:00", "Europe"), ("2030-01-01T10:00", "a" * 300)]
    for publish_at, zone in cases:
        answer = browser.post("/dashboard/posts/check", data={**form, f"publishAt-{youtube['id']}": publish_at,
                                                              "timezone": zone})
        assert answer.status_code in (200, 422), (publish_at, zone, answer.status_code)
        assert "Traceback" not in answer.text and "internal_error" not in answer.text
    webhooks = browser.get("/dashboard/webhooks")
    for url in BAD_URLS:
        answer = browser.post("/dashboard/webhooks", data={"csrf_token": hidden(webhooks.text, "csrf_token"),
                                                           "workspaceId": tenant["workspaceId"], "url": url})
        assert answer.status_code == 422, (url, answer.status_code)
    assert client.get("/v1/webhooks", headers=bearer(tenant["apiKey"])).json()["data"] == []
