"""The media library (CONTRACT section 3, "Posts and media"): list, delete, import from an https URL,
through /v1 and through MCP's `list_media` and `import_media`. Imports fetch from a real HTTPS server
on loopback (a throwaway CA that the service is told to trust)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import httpx2
import pytest

from kit import clock
from tests.conftest import bearer
from tests.support.oauth_flow import call_tool_raw, hand_made_tokens
from tests.support.posts import JPEG, MP4, upload
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service

def _tool(browser: httpx2.Client, token: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    answer = call_tool_raw(browser, token, name, arguments)
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]


def test_a_url_becomes_a_media_with_the_type_its_bytes_prove(client, tenant, files):
    headers = bearer(tenant["apiKey"])
    made = client.post("/v1/media/import", headers=headers, json={"url": f"{files}/clip"})
    assert made.status_code == 201, made.text
    record = made.json()
    assert record["contentType"] == "video/mp4"  # from the bytes, not the server's header
    assert record["size"] == len(MP4) and record["filename"] == "clip"
    assert client.get(record["url"]).content == MP4  # platforms fetch it from there
    assert client.get(f"/v1/media/{record['id']}", headers=headers).json() == record

    refusals = {url: client.post("/v1/media/import", headers=headers, json={"url": url})
                for url in (f"{files}/page.html", f"{files}/moved", f"{files}/missing", "http://example.com/a.jpg")}
    for url, answer in refusals.items():
        assert answer.status_code == 422, (url, answer.text)
        assert answer.json()["error"]["details"][0]["field"] == "url"
    assert "redirects are not followed" in refusals[f"{files}/moved"].json()["error"]["message"]
    assert [m["id"] for m in client.get("/v1/media", headers=headers).json()["data"]] == [record["id"]]


def test_the_library_lists_newest_first_and_a_media_a_scheduled_post_needs_stays(client, tenant):
    headers = bearer(tenant["apiKey"])
    bot = connect_account(client, tenant, "telegram")
    first = upload(client, tenant, JPEG, "image/jpeg", "first.jpg")
    second = upload(client, tenant, MP4, "video/mp4", "second.mp4")
    client.post("/v1/media/uploads", headers=headers, json={"filename": "never.jpg", "contentType": "image/jpeg",
                                                            "size": 10})  # never completed: not listed
    page = client.get("/v1/media", headers=headers, params={"limit": 1}).json()
    assert [m["id"] for m in page["data"]] == [second["id"]]
    assert page["pagination"] == {"page": 1, "limit": 1, "total": 2, "pages": 2}
    assert client.get("/v1/media", headers=headers, params={"page": 2, "limit": 1}).json()["data"][0]["id"] == \
        first["id"]

    later = (clock.now() + dt.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    post = client.post("/v1/posts", headers=headers, json={
        "content": "Tomorrow", "mediaIds": [first["id"]], "scheduledFor": later,
        "targets": [{"accountId": bot["id"], "options": {"chatId": "@news"}}]}).json()
    held = client.delete(f"/v1/media/{first['id']}", headers=headers)
    assert held.status_code == 409 and post["id"] in held.json()["error"]["message"]

    assert client.delete(f"/v1/posts/{post['id']}", headers=headers).status_code == 200
    gone = client.delete(f"/v1/media/{first['id']}", headers=headers)
    assert gone.status_code == 204 and gone.content == b""
    assert client.get(f"/v1/media/{first['id']}", headers=headers).status_code == 404
    assert client.get(first["url"]).status_code == 404
    assert [m["id"] for m in client.get("/v1/media", headers=headers).json()["data"]] == [second["id"]]
    assert client.delete(f"/v1/media/{first['id']}", headers=headers).status_code == 404


def test_a_media_of_another_workspace_is_not_found(client, tenant, other_tenant):
    mine = upload(client, tenant, JPEG, "image/jpeg")
    assert client.delete(f"/v1/media/{mine['id']}", headers=bearer(other_tenant["apiKey"])).status_code == 404
    assert client.get("/v1/media", headers=bearer(other_tenant["apiKey"])).json()["data"] == []


def test_an_assistant_imports_an_image_and_posts_it(client, tenant, browser, files):
    bot = connect_account(client, tenant, "telegram")
    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    token = tokens["access_token"]
    imported = _tool(browser, token, "import_media", {"url": f"{files}/photo.jpg"})
    assert imported.get("isError") is not True, imported
    media = imported["structuredContent"]
    assert media["contentType"] == "image/jpeg" and media["filename"] == "photo.jpg"
    listed = _tool(browser, token, "list_media", {})["structuredContent"]
    assert [m["id"] for m in listed["data"]] == [media["id"]]
    assert listed == client.get("/v1/media", headers=bearer(tenant["apiKey"])).json()

    refused = _tool(browser, token, "import_media", {"url": f"{files}/page.html"})
    assert refused["isError"] is True
    assert refused["structuredContent"]["error"]["code"] == "validation_failed"

    post = _tool(browser, token, "create_post", {"content": "Fresh", "mediaIds": [media["id"]], "publishNow": True,
                                                 "targets": [{"accountId": bot["id"], "options": {"chatId": "@n"}}]})
    assert post.get("isError") is not True, post
    assert post["structuredContent"]["mediaIds"] == [media["id"]]
