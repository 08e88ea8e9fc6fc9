"""The studio's moves, steps and picked posts as plain HTTP, the way a browser without JavaScript
sends them: a post moved through its "Move to…" page (confirmed from → to first; a refusal in words,
the page kept), a sequence's spare step row and remove boxes, an automation's posts given by id.
The same in Chromium: test_studio_week_browser.py."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.conftest import bearer
from tests.support.oauth_flow import hidden
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service


def _scheduled(client: Any, tenant: dict[str, str], at: str, zone: str | None = None) -> dict[str, Any]:
    account = connect_account(client, tenant, "linkedin")
    body: dict[str, Any] = {"content": "Quarterly update", "targets": [{"accountId": account["id"]}],
                            "scheduledFor": at}
    if zone:
        body["timezone"] = zone
    made = client.post("/v1/posts", headers=bearer(tenant["apiKey"]), json=body)
    assert made.status_code == 201, made.text
    return dict(made.json())


def _post(client: Any, tenant: dict[str, str], post_id: str) -> dict[str, Any]:
    return dict(client.get(f"/v1/posts/{post_id}", headers=bearer(tenant["apiKey"])).json())


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#39;", "'")


def test_a_move_is_confirmed_from_to_and_made_in_the_posts_own_time_zone(browser, client, tenant):
    ahead = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=10)
    post = _scheduled(client, tenant, f"{ahead.isoformat()}T09:00:00", zone="Europe/Berlin")
    move = f"/dashboard/posts/{post['id']}/move"
    back = f"/dashboard/calendar?view=week&date={ahead.isoformat()}&tz=UTC"

    asked = browser.get(move, params={"tz": "UTC", "back": back, "date": (ahead + dt.timedelta(days=1)).isoformat(),
                                      "time": "15:45"})
    assert asked.status_code == 200
    said = _text(asked.text)
    when = ahead + dt.timedelta(days=1)
    now_utc = dt.datetime.combine(ahead, dt.time(9), ZoneInfo("Europe/Berlin")).astimezone(dt.UTC).strftime("%H:%M")
    assert f"From {ahead:%A} {ahead.day} {ahead:%B %Y}, {now_utc} → to {when:%A} {when.day} {when:%B %Y}, 15:45" in said
    assert _post(client, tenant, post["id"])["scheduledFor"].startswith(ahead.isoformat())  # asking moves nothing

    form = {"csrf_token": hidden(asked.text, "csrf_token"), "workspaceId": tenant["workspaceId"],
            "date": when.isoformat(), "time": "15:45", "tz": "UTC", "back": back}
    unconfirmed = browser.post(move, data=form)
    assert unconfirmed.status_code == 200 and "Move this post?" in unconfirmed.text
    assert _post(client, tenant, post["id"])["scheduledFor"].startswith(ahead.isoformat())
    moved = browser.post(move, data={**form, "confirmed": "yes"})
    assert moved.status_code == 303
    assert moved.headers["location"].startswith("/dashboard/calendar?")
    assert "view=week" in moved.headers["location"]
    after = _post(client, tenant, post["id"])
    assert after["scheduledFor"] == f"{when.isoformat()}T15:45:00Z"
    assert after["timezone"] == "Europe/Berlin"  # the post keeps its zone


def test_a_refused_move_says_why_in_words_and_keeps_the_page(browser, client, tenant):
    ahead = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=3)
    post = _scheduled(client, tenant, f"{ahead.isoformat()}T10:00:00Z")
    move = f"/dashboard/posts/{post['id']}/move"
    page = browser.get(move)
    form = {"csrf_token": hidden(page.text, "csrf_token"), "workspaceId": tenant["workspaceId"], "tz": "UTC",
            "date": "2020-01-01", "time": "10:00", "confirmed": "yes"}

    past = browser.get(move, params={"date": "2020-01-01", "time": "10:00", "tz": "UTC"})
    assert past.status_code == 422
    assert "The new time must not be in the past." in _text(past.text)
    assert 'name="confirmed"' not in past.text  # nothing to confirm
    refused = browser.post(move, data=form)
    assert refused.status_code == 422
    assert "The new time must not be in the past." in _text(refused.text)
    assert "scheduledFor" not in refused.text
    assert 'value="2020-01-01"' in refused.text  # the form as it was sent
    in_the_dialog = browser.post(move, data={**form, "part": "confirm"})
    assert in_the_dialog.status_code == 422 and "<html" not in in_the_dialog.text
    assert "The new time must not be in the past." in _text(in_the_dialog.text)

    bad_zone = browser.get(move, params={"date": ahead.isoformat(), "time": "11:00", "tz": "Lisbon"})
    assert bad_zone.status_code == 422
    assert "The calendar's time zone must be an IANA time zone name" in _text(bad_zone.text)

    client.delete(f"/v1/posts/{post['id']}", headers=bearer(tenant["apiKey"]))
    gone = browser.post(move, data={**form, "date": ahead.isoformat(), "part": "confirm"})
    assert gone.status_code == 404 and "This post no longer exists." in gone.text
    assert browser.get(move).status_code == 404


def test_a_published_post_offers_no_move(browser, client, tenant):
    account = connect_account(client, tenant, "linkedin")
    made = client.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={
        "content": "Live now", "targets": [{"accountId": account["id"]}], "publishNow": True}).json()
    page = browser.get(f"/dashboard/posts/{made['id']}/move")
    assert page.status_code == 409
    assert "cannot change; only drafts and scheduled posts can" in _text(page.text)
    assert 'name="confirmed"' not in page.text


def test_without_javascript_a_sequence_takes_a_new_step_in_its_spare_row_and_drops_a_ticked_one(
        browser, client, tenant):
    bot = connect_account(client, tenant, "telegram")
    new = browser.get("/dashboard/sequences/new")
    assert len(re.findall(r'name="step-\d+-text"', new.text)) == 2  # a step and a spare row
    form = {"csrf_token": hidden(new.text, "csrf_token"), "workspaceId": tenant["workspaceId"],
            "accountId": bot["id"], "name": "Follow-up", "trigger": "manual", "status": "active",
            "step-1-delay": "0", "step-1-text": "Hello", "step-2-delay": "60", "step-2-text": "Still there?"}
    saved = browser.post("/dashboard/sequences/new", data=form)
    assert saved.status_code == 303
    (sequence,) = client.get("/v1/sequences", headers=bearer(tenant["apiKey"])).json()["data"]
    page = browser.get(f"/dashboard/sequences/{sequence['id']}")
    assert len(re.findall(r'name="step-\d+-text"', page.text)) == 3  # its two steps and one spare, not four
    assert "Remove step 2 when saving" in page.text

    edited = {**form, "step-1-remove": "on", "step-3-delay": "5", "step-3-text": "One more thing"}
    edited.pop("accountId")
    assert browser.post(f"/dashboard/sequences/{sequence['id']}", data=edited).status_code == 303
    steps = client.get(f"/v1/sequences/{sequence['id']}", headers=bearer(tenant["apiKey"])).json()["steps"]
    assert [(s["delayMinutes"], s["text"]) for s in steps] == [(60, "Still there?"), (5, "One more thing")]


def test_an_automations_posts_can_be_given_by_id_and_the_list_names_a_platform_without_one(browser, client, tenant):
    instagram = connect_account(client, tenant, "instagram")
    new = browser.get("/dashboard/automations/new")
    form = {"csrf_token": hidden(new.text, "csrf_token"), "workspaceId": tenant["workspaceId"],
            "accountId": instagram["id"], "name": "By id", "keywords": "info", "matchType": "contains",
            "dmText": "Here you are", "status": "active", "mediaIds": "17900000000000001, 17900000000000002"}
    assert browser.post("/dashboard/automations/new", data=form).status_code == 303
    (automation,) = client.get("/v1/comment-automations", headers=bearer(tenant["apiKey"])).json()["data"]
    assert automation["mediaIds"] == ["17900000000000001", "17900000000000002"]

    listed = browser.get("/dashboard/automations/recent-posts", params={"accountId": instagram["id"]})
    assert listed.status_code == 200 and "This account has no posts yet" in listed.text
    bot = connect_account(client, tenant, "telegram")  # Telegram lists no posts to an app
    refused = browser.get("/dashboard/automations/recent-posts", params={"accountId": bot["id"]})
    assert refused.status_code == 200
    assert "This account's platform does not list its posts" in _text(refused.text)
    assert "accountId" not in _text(refused.text)
    other = browser.get("/dashboard/automations/recent-posts", params={"accountId": "acc_not_there"})
    assert "No account with that id." in other.text
