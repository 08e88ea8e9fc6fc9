"""Posts imported from CSV (CONTRACT section 3, `POST /v1/posts/import`, and MCP `import_posts_csv`):
a dry run reports every row and saves nothing; an import saves every row or none."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest

from kit import clock
from storage.db import connection
from storage.models import Event
from tests.conftest import bearer
from tests.support.file_server import file_server
from tests.support.oauth_flow import call_tool_raw, hand_made_tokens
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import Tls, make_tls

pytestmark = pytest.mark.shared_service

CSV = {"Content-Type": "text/csv"}


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Tls:
    return make_tls(tmp_path_factory.mktemp("tls"), "localhost")


@pytest.fixture(scope="module")
def live_overrides(tls: Tls) -> dict[str, Any]:
    return {"webhook_ca_bundle": tls.ca_path}


@pytest.fixture(scope="module")
def files(tls: Tls) -> Iterator[str]:
    with file_server(tls) as base:
        yield base


def _in(days: int) -> str:
    return (clock.now() + dt.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _posts(client, tenant) -> list[dict]:
    return client.get("/v1/posts", headers=bearer(tenant["apiKey"]), params={"limit": 100}).json()["data"]


def test_a_dry_run_reports_each_row_and_an_invalid_file_saves_nothing(client, tenant):
    headers = {**bearer(tenant["apiKey"]), **CSV}
    x = connect_account(client, tenant, "x")
    page = connect_account(client, tenant, "facebook")
    wa = connect_account(client, tenant, "whatsapp")
    text = ("content,accounts,scheduledFor,timezone,firstComment\n"
            f"Fine,{x['id']} {page['id']},{_in(2)},,\n"
            f"{'漢' * 141},{x['id']},,,\n"                      # 2: over X's 280
            f"Lost,acc_nobody,,,\n"                              # 3: no such account
            f"When?,{page['id']},2026-12-01T09:00:00,,\n"         # 4: a wall time without a zone
            f"Comment,{wa['id']},,,Hello\n"                      # 5: WhatsApp publishes nothing
            f"\"Quoted, with a comma\",{page['id']},2030-06-01 09:00,Europe/Paris,More below\n")
    report = client.post("/v1/posts/import", params={"dryRun": "true"}, headers=headers, content=text.encode())
    assert report.status_code == 200, report.text
    body = report.json()
    assert body["rows"] == 6 and body["valid"] == 2
    assert [(e["row"], e["field"]) for e in body["errors"]] == [
        (2, "content"), (3, "accounts"), (4, "scheduledFor"), (5, "accounts")]
    assert "acc_nobody" in body["errors"][1]["message"]
    assert _posts(client, tenant) == []

    refused = client.post("/v1/posts/import", headers=headers, content=text.encode())
    assert refused.status_code == 422
    assert refused.json()["error"]["errors"] == body["errors"]
    assert refused.json()["error"]["details"][0]["field"] == "rows[2].content"
    assert _posts(client, tenant) == []  # all rows or none


def test_an_import_saves_every_row_in_order_with_its_media(client, tenant, files):
    headers = {**bearer(tenant["apiKey"]), **CSV}
    page = connect_account(client, tenant, "facebook")
    insta = connect_account(client, tenant, "instagram")
    text = ("content,accounts,scheduledFor,timezone,mediaUrls,firstComment\n"
            f"Draft one,{page['id']},,,,\n"
            f"Photo day,{insta['id']} {page['id']},2030-06-01 09:00,Europe/Paris,{files}/photo.jpg,Link in bio\n"
            f"A clip,{insta['id']},{_in(3)},,{files}/clip.mp4 {files}/photo.jpg,\n")  # a carousel
    made = client.post("/v1/posts/import", headers=headers, content=text.encode())
    assert made.status_code == 201, made.text
    created = made.json()["created"]
    assert len(created) == 3
    got = [client.get(f"/v1/posts/{post_id}", headers=bearer(tenant["apiKey"])).json() for post_id in created]
    assert [p["content"] for p in got] == ["Draft one", "Photo day", "A clip"]
    assert [p["status"] for p in got] == ["draft", "scheduled", "scheduled"]
    assert got[1]["scheduledFor"] == "2030-06-01T07:00:00Z"  # 09:00 in Paris, summer time
    assert [t["accountId"] for t in got[1]["targets"]] == [insta["id"], page["id"]]
    library = client.get("/v1/media", headers=bearer(tenant["apiKey"])).json()["data"]
    by_id = {m["id"]: m for m in library}
    assert [by_id[m]["contentType"] for m in got[2]["mediaIds"]] == ["video/mp4", "image/jpeg"]
    assert got[1]["mediaIds"] == [got[2]["mediaIds"][1]]  # one URL, fetched once
    with connection():
        scheduled = [e.data["id"] for e in Event.select().where(Event.workspace == tenant["workspaceId"],
                                                                 Event.type == "post.scheduled")]
    assert sorted(scheduled) == sorted(created[1:])


def test_a_media_url_that_fails_refuses_the_whole_file(client, tenant, files):
    headers = {**bearer(tenant["apiKey"]), **CSV}
    page = connect_account(client, tenant, "facebook")
    text = ("content,accounts,mediaUrls\n"
            f"Good,{page['id']},{files}/photo.jpg\n"
            f"Bad,{page['id']},{files}/page.html\n")
    refused = client.post("/v1/posts/import", headers=headers, content=text.encode())
    assert refused.status_code == 422, refused.text
    assert [(e["row"], e["field"]) for e in refused.json()["error"]["errors"]] == [(2, "mediaUrls")]
    assert _posts(client, tenant) == []
    assert client.get("/v1/media", headers=bearer(tenant["apiKey"])).json()["data"] == []  # none kept


def test_files_that_are_not_a_csv_of_posts_are_refused_clearly(client, tenant):
    headers = {**bearer(tenant["apiKey"]), **CSV}
    page = connect_account(client, tenant, "facebook")
    too_many = "content,accounts\n" + "".join(f"Post {n},{page['id']}\n" for n in range(1001))
    cases = {"": "body", "content,accounts\n": "body", "text,where\nhi,there\n": "body",
             too_many: "body", "content,accounts\n\"open,quote\n": "body"}
    for text, field in cases.items():
        answer = client.post("/v1/posts/import", headers=headers, content=text.encode())
        assert answer.status_code == 422, (text[:40], answer.text)
        assert answer.json()["error"]["details"][0]["field"] == field
    assert client.post("/v1/posts/import", headers=headers, content=b"\xff\xfe").status_code == 422
    as_json = client.post("/v1/posts/import", headers=bearer(tenant["apiKey"]), json={"content": "x"})
    assert as_json.status_code == 415
    assert _posts(client, tenant) == []


def test_a_retried_import_under_its_key_makes_its_posts_once(client, tenant):
    headers = {**bearer(tenant["apiKey"]), **CSV, "Idempotency-Key": "import-1"}
    page = connect_account(client, tenant, "facebook")
    text = f"content,accounts\nOne,{page['id']}\nTwo,{page['id']}\n".encode()
    first = client.post("/v1/posts/import", headers=headers, content=text)
    again = client.post("/v1/posts/import", headers=headers, content=text)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert len(_posts(client, tenant)) == 2


def test_an_assistant_checks_then_imports_a_file(client, tenant, browser):
    page = connect_account(client, tenant, "facebook")
    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    token = tokens["access_token"]
    text = f"content,accounts,scheduledFor\nMonday,{page['id']},{_in(5)}\nBad,acc_none,\n"
    checked = call_tool_raw(browser, token, "import_posts_csv", {"csv": text, "dryRun": True}).json()["result"]
    assert checked["structuredContent"]["rows"] == 2 and checked["structuredContent"]["valid"] == 1
    assert checked["structuredContent"]["created"] == [] and _posts(client, tenant) == []
    refused = call_tool_raw(browser, token, "import_posts_csv", {"csv": text}).json()["result"]
    assert refused["isError"] is True
    assert refused["structuredContent"]["error"]["errors"] == checked["structuredContent"]["errors"]
    done = call_tool_raw(browser, token, "import_posts_csv",
                         {"csv": text.rsplit("Bad", 1)[0]}).json()["result"]["structuredContent"]
    assert done["rows"] == 1 and [p["id"] for p in _posts(client, tenant)] == done["created"]
