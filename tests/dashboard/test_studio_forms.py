"""The studio's forms as plain HTTP, the way any HTML client sends them: what the server checks and
answers (counts, validation, one post per form, the audience preview, bad filters). Tenancy and
CSRF for every route are in test_console_tenancy.py; the browser journeys in test_studio_browser.py."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

import httpx2
import pytest

from tests.conftest import bearer
from tests.support.oauth_flow import hidden
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service


def _form(browser: httpx2.Client, path: str, tenant: dict[str, str], **fields: Any) -> dict[str, Any]:
    page = browser.get(path)
    assert page.status_code == 200, page.text
    once = {"idempotencyKey": hidden(page.text, "idempotencyKey")} if 'name="idempotencyKey"' in page.text else {}
    return {"csrf_token": hidden(page.text, "csrf_token"), "workspaceId": tenant["workspaceId"], **once, **fields}


def _posts(client: httpx2.Client, tenant: dict[str, str]) -> list[dict[str, Any]]:
    return client.get("/v1/posts", headers=bearer(tenant["apiKey"])).json()["data"]


def test_the_composers_check_counts_as_each_platform_counts_and_names_what_post_v1_would_refuse(
        browser, client, tenant):
    x = connect_account(client, tenant, "x")
    linkedin = connect_account(client, tenant, "linkedin")
    cjk = "日本語のテキスト" * 20  # 160 characters, each weighing 2 on X
    form = _form(browser, "/dashboard/posts/new", tenant, text=cjk, accounts=[x["id"], linkedin["id"]])
    answer = browser.post("/dashboard/posts/check", data=form)
    assert answer.status_code == 200
    assert "320 / 280" in answer.text and "weighs 320 of X&#39;s 280" in answer.text
    assert "160 / 3000" in answer.text
    assert _posts(client, tenant) == []  # a check saves nothing

    form[f"content-{x['id']}"] = "short for X"
    answer = browser.post("/dashboard/posts/check", data=form)
    assert "11 / 280" in answer.text and "weighs" not in answer.text

    # Nothing chosen: an invitation, not a refusal.
    answer = browser.post("/dashboard/posts/check", data={**form, "accounts": []})
    assert "Choose accounts" in answer.text and "error" not in answer.text


def test_a_composer_form_sent_twice_makes_one_post_and_a_refused_one_says_which_account(browser, client, tenant):
    x = connect_account(client, tenant, "x")
    form = _form(browser, "/dashboard/posts/new", tenant, text="x" * 300, accounts=[x["id"]], action="publish")
    refused = browser.post("/dashboard/posts/new", data=form)
    assert refused.status_code == 422
    assert "X · " in refused.text and "weighs 300 of X" in refused.text
    assert _posts(client, tenant) == []

    tomorrow = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    form.update(text="Launch day", action="schedule", scheduledFor=tomorrow, timezone="Europe/Paris")
    first = browser.post("/dashboard/posts/new", data=form)
    again = browser.post("/dashboard/posts/new", data=form)
    assert first.status_code == again.status_code == 303
    (post,) = _posts(client, tenant)
    assert (post["status"], post["timezone"], post["content"]) == ("scheduled", "Europe/Paris", "Launch day")

    no_time = browser.post("/dashboard/posts/new", data={**form, "scheduledFor": "", "idempotencyKey": "other-form"})
    assert no_time.status_code == 422 and "Publish at is required to schedule" in no_time.text


def test_bad_filters_and_windows_are_a_422_page_never_a_500(browser, tenant):
    for path, params in (("/dashboard/posts", {"from": "yesterday"}), ("/dashboard/posts", {"status": "lost"}),
                         ("/dashboard/posts", {"from": "2026-05-02", "to": "2026-05-01"}),
                         ("/dashboard/calendar", {"date": "2026-13-01"}), ("/dashboard/calendar", {"view": "year"}),
                         ("/dashboard/calendar", {"tz": "Mars/Olympus"}), ("/dashboard/calendar", {"date": "9999-12-30"}),
                         ("/dashboard/analytics", {"from": "2026-05-02", "to": "2026-05-01"}),
                         ("/dashboard/analytics", {"granularity": "hour"})):
        answer = browser.get(path, params=params)
        assert answer.status_code == 422, (path, params, answer.status_code)
        assert answer.headers["content-type"].startswith("text/html")


def test_the_broadcast_preview_counts_the_audience_and_those_outside_the_window(browser, client, tenant):
    wa = connect_account(client, tenant, "whatsapp")
    client.post("/sandbox/whatsapp/inbound-message", json={
        "accountId": wa["id"], "from": {"id": "15550000001", "name": "Recent"}, "text": "hi"})
    client.post("/sandbox/whatsapp/inbound-message", json={
        "accountId": wa["id"], "from": {"id": "15550000002", "name": "Old"}, "text": "hi",
        "timestamp": "2020-01-01T00:00:00Z"})
    form = _form(browser, "/dashboard/broadcasts/new", tenant, accountId=wa["id"])
    answer = browser.post("/dashboard/broadcasts/preview", data=form)
    assert "Reaches 1 conversation</strong> of the 2" in answer.text
    assert "1 is outside the platform's 24-hour messaging window" in answer.text

    refused = browser.post("/dashboard/broadcasts/new", data={**form, "name": "Sale", "text": "hi",
                                                               "buttonLabel": "Shop", "action": "send"})
    assert refused.status_code == 422 and "buttonUrl" in refused.text
    assert client.get("/v1/broadcasts", headers=bearer(tenant["apiKey"])).json()["data"] == []


def test_automation_and_sequence_forms_store_every_field(browser, client, tenant):
    instagram = connect_account(client, tenant, "instagram")
    made = browser.post("/dashboard/automations/new", data=_form(
        browser, "/dashboard/automations/new", tenant, accountId=instagram["id"], name="Prices",
        keywords="price, preço", matchType="contains", mediaIds="m1, m2", dmText="Our prices",
        dmButtonLabel="See", dmButtonUrl="https://shop.example.com", publicReplyText="Sent!", oncePerUser="on",
        status="active"))
    assert made.status_code == 303
    (automation,) = client.get("/v1/comment-automations", headers=bearer(tenant["apiKey"])).json()["data"]
    assert (automation["keywords"], automation["mediaIds"], automation["dmButtonUrl"], automation["oncePerUser"],
            automation["publicReplyText"]) == (["price", "preço"], ["m1", "m2"], "https://shop.example.com", True,
                                               "Sent!")
    # Edited with the button emptied: the button goes.
    edited = browser.post(f"/dashboard/automations/{automation['id']}", data=_form(
        browser, f"/dashboard/automations/{automation['id']}", tenant, name="Prices", keywords="price",
        matchType="exact", dmText="Our prices", status="paused"))
    assert edited.status_code == 303
    automation = client.get(f"/v1/comment-automations/{automation['id']}", headers=bearer(tenant["apiKey"])).json()
    assert (automation["matchType"], automation["dmButtonLabel"], automation["status"]) == ("exact", None, "paused")

    made = browser.post("/dashboard/sequences/new", data=_form(
        browser, "/dashboard/sequences/new", tenant, accountId=instagram["id"], name="Follow-up",
        trigger="comment_automation", automationId=automation["id"], stopOnReply="on", status="active",
        **{"step-1-delay": "0", "step-1-text": "Thanks!", "step-2-delay": "60", "step-2-text": "Questions?",
           "step-2-buttonLabel": "Ask", "step-2-buttonUrl": "https://shop.example.com/ask"}))
    assert made.status_code == 303
    (sequence,) = client.get("/v1/sequences", headers=bearer(tenant["apiKey"])).json()["data"]
    assert (sequence["trigger"], sequence["automationId"], sequence["stopOnReply"]) == (
        "comment_automation", automation["id"], True)
    assert [(s["delayMinutes"], s["text"], s["buttonLabel"]) for s in sequence["steps"]] == [
        (0, "Thanks!", None), (60, "Questions?", "Ask")]
    no_steps = browser.post("/dashboard/sequences/new", data=_form(
        browser, "/dashboard/sequences/new", tenant, accountId=instagram["id"], name="Empty", trigger="manual"))
    assert no_steps.status_code == 422 and "Steps must have at least 1 item" in no_steps.text
    assert 'value="Empty"' in no_steps.text  # the form again, as it was sent


def test_a_saved_draft_opens_in_the_composer_as_it_was_and_is_scheduled_from_there(browser, client, tenant):
    x = connect_account(client, tenant, "x")
    saved = browser.post("/dashboard/posts/new", data=_form(
        browser, "/dashboard/posts/new", tenant, text="Draft text", accounts=[x["id"]], action="draft",
        **{f"content-{x['id']}": "X's own", f"thread-{x['id']}": "second part\n\nthird part",
           f"firstComment-{x['id']}": "More below"}))
    assert saved.status_code == 303
    (draft,) = _posts(client, tenant)
    assert (draft["status"], draft["targets"][0]["content"]) == ("draft", "X's own")

    editor = browser.get(f"/dashboard/posts/{draft['id']}/edit")
    assert editor.status_code == 200
    assert ">Draft text</textarea>" in editor.text and "X&#39;s own</textarea>" in editor.text
    assert "second part\n\nthird part</textarea>" in editor.text and 'value="More below"' in editor.text
    assert f'value="{x["id"]}" checked' in editor.text

    tomorrow = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).replace(second=0, microsecond=0)
    form = _form(browser, f"/dashboard/posts/{draft['id']}/edit", tenant, text="Final text", accounts=[x["id"]],
                 action="schedule", scheduledFor=tomorrow.strftime("%Y-%m-%dT%H:%M"), timezone="UTC",
                 **{f"thread-{x['id']}": "second part"})
    assert browser.post(f"/dashboard/posts/{draft['id']}/edit", data=form).status_code == 303
    (post,) = _posts(client, tenant)  # the same post, changed
    assert (post["id"], post["status"], post["content"]) == (draft["id"], "scheduled", "Final text")
    assert post["scheduledFor"] == tomorrow.strftime("%Y-%m-%dT%H:%M:00Z")
    assert f"{tomorrow:%Y-%m-%dT%H:%M}" in browser.get(f"/dashboard/posts/{draft['id']}/edit").text

    published = client.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={
        "content": "Live now", "targets": [{"accountId": x["id"]}], "publishNow": True}).json()
    assert browser.get(f"/dashboard/posts/{published['id']}/edit").status_code == 409


def test_a_scheduled_post_moves_to_another_day_at_the_same_local_time_and_a_draft_does_not(browser, client, tenant):
    linkedin = connect_account(client, tenant, "linkedin")
    auth = bearer(tenant["apiKey"])
    day = dt.date.today() + dt.timedelta(days=10)
    scheduled = client.post("/v1/posts", headers=auth, json={
        "content": "Paris morning", "targets": [{"accountId": linkedin["id"], "options": {"firstComment": "More"}}],
        "scheduledFor": f"{day.isoformat()}T09:15:00", "timezone": "Europe/Paris"}).json()
    later = day + dt.timedelta(days=3)
    form = _form(browser, f"/dashboard/posts/{scheduled['id']}", tenant, date=later.isoformat())
    asked = browser.post(f"/dashboard/posts/{scheduled['id']}/move", data=form)  # not confirmed: only asked
    assert asked.status_code == 200 and "Move this post?" in asked.text
    assert client.get(f"/v1/posts/{scheduled['id']}", headers=auth).json()["scheduledFor"] == scheduled["scheduledFor"]
    form["confirmed"] = "yes"
    assert browser.post(f"/dashboard/posts/{scheduled['id']}/move", data=form).status_code == 303
    moved = client.get(f"/v1/posts/{scheduled['id']}", headers=auth).json()
    local = dt.datetime.fromisoformat(moved["scheduledFor"].replace("Z", "+00:00")).astimezone(ZoneInfo("Europe/Paris"))
    assert (local.date(), local.strftime("%H:%M"), moved["timezone"]) == (later, "09:15", "Europe/Paris")
    assert 'value="More"' in browser.get(f"/dashboard/posts/{scheduled['id']}/edit").text  # its options kept

    draft = client.post("/v1/posts", headers=auth, json={
        "content": "No time yet", "targets": [{"accountId": linkedin["id"]}]}).json()
    refused = browser.post(f"/dashboard/posts/{draft['id']}/move", data=form)
    assert refused.status_code == 409 and "Only a scheduled post moves" in refused.text
    assert client.get(f"/v1/posts/{draft['id']}", headers=auth).json()["status"] == "draft"


def test_odd_values_in_the_studios_forms_and_filters_are_4xx_pages_never_a_500(browser, client, tenant):
    x = connect_account(client, tenant, "x")
    bot = connect_account(client, tenant, "telegram")
    youtube = connect_account(client, tenant, "youtube")
    draft = client.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={
        "content": "d", "targets": [{"accountId": x["id"]}]}).json()
    odd = ["", "x", "-1", "99999999999999999999", "9999-12-31", "0000-01-01", "2026-02-30T25:61", "8 09:00",
           "Mars/Olympus"]
    gets = [("/dashboard/posts", ("status", "account", "from", "to", "page")),
            ("/dashboard/calendar", ("view", "date", "tz")),
            ("/dashboard/analytics", ("from", "to", "granularity", "account")),
            ("/dashboard/broadcasts", ("status",))]
    for path, names in gets:
        for name in names:
            for value in odd:
                answer = browser.get(path, params={name: value})
                assert answer.status_code in (200, 403, 404, 422), (path, name, value, answer.status_code)
    posts = [
        ("/dashboard/posts/check", {"accounts": [x["id"], youtube["id"], "acc_nope"], "mediaIds": "med_nope",
                                    "action": "schedule", f"publishAt-{youtube['id']}": "soon"}),
        ("/dashboard/posts/new", {"accounts": x["id"], "action": "schedule", "text": "t"}),
        ("/dashboard/posts/new", {"accounts": x["id"], "action": "queue", "text": "t"}),
        (f"/dashboard/posts/{draft['id']}/move", {}),
        (f"/dashboard/accounts/{x['id']}/queue", {"day": "1", "time": "09:00"}),
        ("/dashboard/broadcasts/preview", {"accountId": bot["id"]}),
        ("/dashboard/broadcasts/new", {"accountId": bot["id"], "name": "n", "text": "t", "action": "schedule"}),
        ("/dashboard/media/uploads", {"filename": "a.png", "contentType": "image/png"}),
        ("/dashboard/automations/new", {"accountId": x["id"], "name": "n", "dmText": "t"}),
        ("/dashboard/sequences/new", {"accountId": bot["id"], "name": "n", "trigger": "manual", "step-1-text": "t"}),
    ]
    fields = ("scheduledFor", "timezone", "date", "day", "time", "activeWithinDays", "size", "matchType",
              "step-1-delay", "idempotencyKey", "conversationIds")
    signed = _form(browser, "/dashboard/posts", tenant)
    for path, base in posts:
        for name in fields:
            for value in odd:
                form = {**signed, **base, name: value}
                answer = browser.post(path, data=form)
                assert answer.status_code in (200, 201, 303, 404, 409, 422), (path, name, value, answer.status_code)
                assert "Traceback" not in answer.text


def test_the_calendar_shows_each_days_first_posts_links_the_rest_and_reads_days_in_its_time_zone(
        browser, client, tenant):
    linkedin = connect_account(client, tenant, "linkedin")
    day = dt.date.today() + dt.timedelta(days=20)
    for hour in range(5):
        client.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={
            "content": f"Busy day {hour}", "targets": [{"accountId": linkedin["id"]}],
            "scheduledFor": f"{day.isoformat()}T{10 + hour}:00:00Z"}).raise_for_status()
    late = client.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={
        "content": "Late in London", "targets": [{"accountId": linkedin["id"]}],
        "scheduledFor": f"{day.isoformat()}T23:30:00Z"}).json()

    month = browser.get("/dashboard/calendar", params={"date": day.isoformat()})
    assert month.status_code == 200
    assert "6 posts in view" in month.text
    assert month.text.count("Busy day") == 3 and ">3 more</a>" in month.text  # the day's other 3 behind a link
    assert f"from={day.isoformat()}&amp;to={day.isoformat()}" in month.text

    tokyo_next_day = (day + dt.timedelta(days=1)).isoformat()
    week = browser.get("/dashboard/calendar", params={"date": tokyo_next_day, "view": "week", "tz": "Asia/Tokyo"})
    start = week.text.index(f'data-day="{tokyo_next_day}" data-hour="8"')  # the week's hour grid
    cell = week.text[start:week.text.find("data-day=", start + 1)]
    assert f"/dashboard/posts/{late['id']}" in cell and "08:30" in cell  # 23:30 UTC is 08:30 the next day in Tokyo
