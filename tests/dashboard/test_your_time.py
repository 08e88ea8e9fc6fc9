"""Times in a person's zone, as plain HTTP: the profile page keeps a real zone and refuses any
other with the form as typed; the browser's zone is kept only while the person has none; times are
shown in the zone with the UTC instant in `<time datetime>`; the queue editor's rows. The browser
journeys are in test_your_time_browser.py."""

from __future__ import annotations

import datetime as dt
import html
import re
from typing import Any

import httpx2
import pytest

from dashboard import times
from tests.conftest import bearer
from tests.support.oauth_flow import email_of, hidden
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service


def _zone_field(page: str) -> str:
    found = re.search(r'<input id="profile-zone" name="timeZone" type="text" value="([^"]*)"', page)
    assert found, "no time zone field on the profile page"
    return html.unescape(found.group(1))


def _save_zone(browser: httpx2.Client, zone: str) -> httpx2.Response:
    page = browser.get("/dashboard/profile")
    return browser.post("/dashboard/profile", data={"csrf_token": hidden(page.text, "csrf_token"), "timeZone": zone})


def test_the_profile_keeps_a_real_zone_and_refuses_anything_else_as_typed(browser, client, tenant):
    page = browser.get("/dashboard/profile")
    assert page.status_code == 200
    assert _zone_field(page.text) == "UTC"  # signed in without a browser's zone: UTC until chosen
    assert '<option value="America/Sao_Paulo">' in page.text and 'list="profile-zone-list"' in page.text

    for typed in ("Lisbon", "Europe", "../../etc/passwd", "Mars/Olympus", "x" * 300, ""):
        refused = _save_zone(browser, typed)
        assert refused.status_code == 422, typed
        assert "Choose a time zone from the list" in refused.text and 'aria-invalid="true"' in refused.text
        assert _zone_field(refused.text) == typed  # the form as it was sent, never a blank one
        assert "Your time zone: Choose a time zone" in refused.text  # the summary, in words, not `timeZone`
    assert _zone_field(browser.get("/dashboard/profile").text) == "UTC"

    saved = _save_zone(browser, "Asia/Tokyo")
    assert saved.status_code == 303
    profile = browser.get("/dashboard/profile")
    assert _zone_field(profile.text) == "Asia/Tokyo" and "times are shown in Asia/Tokyo" in profile.text

    # Every time is shown in the zone: a post due at 12:00 UTC reads 21:00 in Tokyo (UTC+9), its
    # machine value kept.
    linkedin = connect_account(client, tenant, "linkedin")
    day = dt.date.today() + dt.timedelta(days=3)
    post = client.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={
        "content": "Noon in London", "targets": [{"accountId": linkedin["id"]}],
        "scheduledFor": f"{day.isoformat()}T12:00:00Z"}).json()
    shown = browser.get(f"/dashboard/posts/{post['id']}").text
    assert re.search(rf'<time datetime="{day.isoformat()}T12:00:00Z" title="[^"]+ Asia/Tokyo \(12:00 UTC\)">'
                     rf'\w+ {day.day} {day:%b}( \d{{4}})?, 21:00 · in \d+ d</time>', shown), shown
    listed = browser.get("/dashboard/posts").text
    assert re.search(rf"{day.day} {day:%b}( \d{{4}})?, 21:00", listed) and "T12:00:00Z</" not in listed


def test_a_browsers_zone_is_kept_only_while_the_person_has_none(browser, server_url, tenant):
    page = browser.get("/dashboard/profile")
    assert "data-zone-unset" in page.text  # the frame asks the page's script for the browser's zone
    token = hidden(page.text, "csrf_token")
    told = browser.post("/dashboard/profile/browser-zone", data={"csrf_token": token, "timeZone": "Nowhere/Town"})
    assert told.json() == {"saved": False}
    assert browser.post("/dashboard/profile/browser-zone", data={"timeZone": "Europe/Rome"}).status_code == 400
    told = browser.post("/dashboard/profile/browser-zone", data={"csrf_token": token, "timeZone": "Europe/Rome"})
    assert told.json() == {"saved": True}
    again = browser.post("/dashboard/profile/browser-zone", data={"csrf_token": token, "timeZone": "Asia/Tokyo"})
    assert again.json() == {"saved": False}
    page = browser.get("/dashboard/profile")
    assert _zone_field(page.text) == "Europe/Rome" and "data-zone-unset" not in page.text

    # A later sign-in from a browser elsewhere never overrides the person's zone.
    with httpx2.Client(base_url=server_url, timeout=30) as other:
        login = other.get("/dashboard/login")
        assert 'name="timeZone"' in login.text
        signed = other.post("/dashboard/login", data={"email": email_of(tenant["userId"]), "password": "correct horse",
                                                      "csrf_token": hidden(login.text, "csrf_token"),
                                                      "timeZone": "Asia/Tokyo"})
        assert signed.status_code == 303
        assert _zone_field(other.get("/dashboard/profile").text) == "Europe/Rome"


def _queue_form(browser: httpx2.Client, account: dict[str, Any], tenant: dict[str, str]) -> dict[str, Any]:
    page = browser.get(f"/dashboard/accounts/{account['id']}/queue")
    assert page.status_code == 200
    return {"csrf_token": hidden(page.text, "csrf_token"), "workspaceId": tenant["workspaceId"]}


def test_the_queue_editor_saves_its_rows_and_a_refused_queue_comes_back_as_sent(browser, client, tenant):
    x = connect_account(client, tenant, "x")
    path = f"/dashboard/accounts/{x['id']}/queue"
    form = _queue_form(browser, x, tenant)
    # Rows as the editor sends them: a day and a time each; the row left empty is no slot.
    saved = browser.post(path, data={**form, "day": ["5", "2", "3"], "time": ["17:00", "09:30", ""],
                                     "timezone": "Europe/Berlin"})
    assert saved.status_code == 303
    queue = client.get(f"/v1/accounts/{x['id']}/queue", headers=bearer(tenant["apiKey"])).json()
    assert (queue["timezone"], [(s["weekday"], s["time"]) for s in queue["slots"]]) == (
        "Europe/Berlin", [(2, "09:30"), (5, "17:00")])
    page = browser.get(path).text
    assert '<option value="2" selected>Tuesday</option>' in page and 'value="17:00"' in page
    assert "(Europe/Berlin)" in page and re.search(r'<time datetime="[^"]+Z" title="[^"]+">Tue', page)

    refused = browser.post(path, data={**form, "day": ["1", "4"], "time": ["08:15", "25:99"], "timezone": "Berlin"})
    assert refused.status_code == 422
    assert "Choose a time zone from the list" in refused.text and "Give each slot a time of day" in refused.text
    assert 'value="08:15"' in refused.text and 'value="25:99"' in refused.text and 'value="Berlin"' in refused.text
    assert '<option value="4" selected>Thursday</option>' in refused.text
    queue = client.get(f"/v1/accounts/{x['id']}/queue", headers=bearer(tenant["apiKey"])).json()
    assert [(s["weekday"], s["time"]) for s in queue["slots"]] == [(2, "09:30"), (5, "17:00")]  # unchanged


def test_relative_hints_say_how_far_a_time_is_and_leave_far_ones_to_the_date():
    now = dt.datetime(2026, 12, 1, 12, 0)
    assert times.relative(now + dt.timedelta(hours=2, minutes=5), now) == "in 2 h"
    assert times.relative(now - dt.timedelta(minutes=3, seconds=20), now) == "3 min ago"
    assert times.relative(now - dt.timedelta(seconds=20), now) == "just now"
    assert times.relative(now + dt.timedelta(days=2, hours=1), now) == "in 2 d"
    assert times.relative(now - dt.timedelta(days=30), now) == ""
    berlin = times.zone("Europe/Berlin")
    assert times.readable(dt.datetime(2026, 12, 8, 8, 30), berlin, now) == "Tue 8 Dec, 09:30"
    assert times.readable(dt.datetime(2027, 1, 5, 8, 30), berlin, now) == "Tue 5 Jan 2027, 09:30"
