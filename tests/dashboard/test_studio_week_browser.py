"""The studio's finishing touches in headless Chromium at 1280 px, by roles and labels: the week's
hour grid (a post dragged to another day and hour, the move confirmed from → to, or cancelled),
a sequence's steps added and removed on the page, and an automation made by picking one of the
account's recent posts. What each did is checked through /v1, never through the page alone."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import bearer
from tests.dashboard import test_console_browser as console
from tests.support.sandbox import connect_account

CHROMIUM, v1 = console.CHROMIUM, console.v1
chromium, page = console.chromium, console.page
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
pytestmark = [pytest.mark.shared_service,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Chromium is not installed")]


def _cell(day: dt.date, hour: int) -> str:
    return f"{day:%A} {day.day} {day:%B %Y}, {hour:02d}:00"


def _name(client: Any, tenant: dict[str, str], account: dict[str, Any]) -> str:
    record = client.get(f"/v1/accounts/{account['id']}", headers=bearer(tenant["apiKey"])).json()
    return str(record.get("displayName") or "@" + str(record.get("username") or "").lstrip("@"))


def test_a_post_dragged_to_another_day_and_hour_moves_once_confirmed_and_a_cancelled_move_leaves_it(
        page, client, server_url, tenant):
    linkedin = connect_account(client, tenant, "linkedin")
    today = dt.datetime.now(dt.UTC).date()
    tuesday = today + dt.timedelta(days=(1 - today.weekday()) % 7 + 7)  # next week's: always ahead
    wednesday, thursday = tuesday + dt.timedelta(days=1), tuesday + dt.timedelta(days=2)
    made = client.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={
        "content": "Moving day", "targets": [{"accountId": linkedin["id"]}],
        "scheduledFor": f"{tuesday.isoformat()}T10:30:00Z"}).json()

    page.goto(f"{server_url}/dashboard/calendar?view=week&date={tuesday.isoformat()}&tz=UTC")
    grid = page.get_by_role("table", name=re.compile(r"hour by hour$"))
    expect(grid.get_by_role("columnheader", name=re.compile(rf"^Wed {wednesday.day}\b"))).to_be_visible()
    expect(grid.get_by_role("rowheader", name="14:00")).to_be_visible()
    post = page.get_by_role("link", name=re.compile(r"^10:30 Moving day"))
    expect(grid.get_by_role("cell", name=_cell(tuesday, 10)).get_by_role("link", name=re.compile("^10:30 Moving day"))
           ).to_be_visible()

    # Dragged to Wednesday 14:00: the move is asked first, from → to.
    post.drag_to(grid.get_by_role("cell", name=_cell(wednesday, 14)))
    dialog = page.get_by_role("dialog", name="Move this post?")
    expect(dialog).to_contain_text(f"From {_cell(tuesday, 10).replace('10:00', '10:30')}")
    expect(dialog).to_contain_text(f"to {_cell(wednesday, 14).replace('14:00', '14:30')}")
    assert v1(client, tenant, f"/v1/posts/{made['id']}")["scheduledFor"] == f"{tuesday}T10:30:00Z"
    dialog.get_by_role("button", name="Move").click()
    expect(page.get_by_role("status").filter(has_text="Moved the post")).to_be_visible()
    assert v1(client, tenant, f"/v1/posts/{made['id']}")["scheduledFor"] == f"{wednesday}T14:30:00Z"
    moved = page.get_by_role("cell", name=_cell(wednesday, 14))
    expect(moved.get_by_role("link", name=re.compile(r"^14:30 Moving day"))).to_be_visible()

    # Dragged again, to Thursday 09:00, then cancelled: nothing moves.
    page.get_by_role("link", name=re.compile(r"^14:30 Moving day")).drag_to(
        page.get_by_role("cell", name=_cell(thursday, 9)))
    dialog = page.get_by_role("dialog", name="Move this post?")
    expect(dialog).to_contain_text(f"to {_cell(thursday, 9).replace('09:00', '09:30')}")
    dialog.get_by_role("link", name="Cancel").click()
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(moved.get_by_role("link", name=re.compile(r"^14:30 Moving day"))).to_be_visible()
    assert v1(client, tenant, f"/v1/posts/{made['id']}")["scheduledFor"] == f"{wednesday}T14:30:00Z"

    # With the keyboard: the post's "Move to…" page, a day and time, the same confirmation.
    page.get_by_role("link", name="Move Moving day to…").click()
    page.get_by_label("New day").fill(thursday.isoformat())
    page.get_by_label("New time").fill("08:15")
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("region", name="Confirm the move")).to_contain_text(
        f"to {_cell(thursday, 8).replace('08:00', '08:15')}")
    page.get_by_role("button", name="Move").click()
    expect(page.get_by_role("status").filter(has_text="Moved the post")).to_be_visible()
    expect(page.get_by_role("table", name=re.compile(r"hour by hour$"))).to_be_visible()  # back on the week
    assert v1(client, tenant, f"/v1/posts/{made['id']}")["scheduledFor"] == f"{thursday}T08:15:00Z"

    # Refused after it was asked (the post went meanwhile): the reason in words, the week kept as it was.
    page.get_by_role("link", name=re.compile(r"^08:15 Moving day")).drag_to(
        page.get_by_role("cell", name=_cell(thursday, 12)))
    dialog = page.get_by_role("dialog", name="Move this post?")
    expect(dialog).to_contain_text(f"to {_cell(thursday, 12).replace('12:00', '12:15')}")
    client.delete(f"/v1/posts/{made['id']}", headers=bearer(tenant["apiKey"])).raise_for_status()
    dialog.get_by_role("button", name="Move").click()
    refused = page.get_by_role("dialog", name="This move cannot be made")
    expect(refused.get_by_role("alert")).to_have_text("This post no longer exists.")
    expect(page.get_by_role("link", name=re.compile(r"^08:15 Moving day"))).to_be_visible()  # the page as it was
    refused.get_by_role("link", name="Close").click()
    expect(page.get_by_role("dialog")).to_have_count(0)


def test_a_sequences_steps_are_added_and_removed_on_the_page_and_saved_as_shown(page, client, server_url, tenant):
    bot = connect_account(client, tenant, "telegram")
    page.goto(f"{server_url}/dashboard/sequences/new")
    page.get_by_label("Account").select_option(label=f"Telegram · {_name(client, tenant, bot)}")
    page.get_by_label("Name").fill("Onboarding")
    page.get_by_label("Trigger", exact=True).select_option("manual")
    step_texts = page.get_by_label(re.compile(r"^Step \d+ text$"))
    expect(step_texts).to_have_count(1)  # one step to start with, and a button for more
    page.get_by_label("Step 1 text").fill("Welcome!")
    page.get_by_role("button", name="Add a step").click()
    page.get_by_label("Step 2 delay (minutes)").fill("60")
    page.get_by_label("Step 2 text").fill("A tip to start with")
    page.get_by_role("button", name="Add a step").click()
    page.get_by_label("Step 3 delay (minutes)").fill("1440")
    page.get_by_label("Step 3 text").fill("How is it going?")
    expect(step_texts).to_have_count(3)
    # The middle one goes: the last becomes step 2, its values with it.
    page.get_by_role("button", name="Remove step 2").click()
    expect(step_texts).to_have_count(2)
    expect(page.get_by_label("Step 2 text")).to_have_value("How is it going?")
    expect(page.get_by_label("Step 2 delay (minutes)")).to_have_value("1440")
    page.get_by_role("button", name="Create sequence").click()
    expect(page.get_by_role("status").filter(has_text="Saved the sequence Onboarding")).to_be_visible()
    (sequence,) = v1(client, tenant, "/v1/sequences")["data"]
    assert [(s["delayMinutes"], s["text"]) for s in sequence["steps"]] == [(0, "Welcome!"), (1440, "How is it going?")]

    # Its page shows the two steps it has, no more; removing one there saves one.
    expect(step_texts).to_have_count(2)
    expect(page.get_by_label("Step 1 text")).to_have_value("Welcome!")
    page.get_by_role("button", name="Remove step 1").click()
    expect(page.get_by_label("Step 1 text")).to_have_value("How is it going?")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("status").filter(has_text="Saved the sequence Onboarding")).to_be_visible()
    steps = v1(client, tenant, f"/v1/sequences/{sequence['id']}")["steps"]
    assert [(s["delayMinutes"], s["text"]) for s in steps] == [(1440, "How is it going?")]


def test_an_automation_watches_a_post_picked_from_the_accounts_recent_posts(page, client, server_url, tenant):
    facebook = connect_account(client, tenant, "facebook")
    spring = client.post("/sandbox/facebook/native-post", json={"accountId": facebook["id"], "text": "Spring drop"})
    client.post("/sandbox/facebook/native-post", json={"accountId": facebook["id"], "text": "Winter sale"})
    spring_id = spring.json()["platformPostId"]

    page.goto(f"{server_url}/dashboard/automations/new")
    page.get_by_label("Account").select_option(label=f"Facebook · {_name(client, tenant, facebook)}")
    posts = page.get_by_role("group", name=re.compile("^Only on these posts"))
    expect(posts.get_by_role("checkbox")).to_have_count(2)  # newest first, each with its date
    expect(posts.get_by_role("listitem").first).to_contain_text("Winter sale")
    expect(posts.get_by_role("listitem").first).to_contain_text(re.compile(r"· \d{1,2} \w+ \d{4}, \d\d:\d\d UTC"))
    posts.get_by_role("checkbox", name=re.compile("^Spring drop")).check()
    page.get_by_label("Name").fill("Spring replies")
    page.get_by_label("Keywords").fill("price")
    page.get_by_label("DM text").fill("Here are the prices")
    page.get_by_role("button", name="Create automation").click()
    expect(page.get_by_role("status").filter(has_text="Saved the automation Spring replies")).to_be_visible()
    (automation,) = v1(client, tenant, "/v1/comment-automations")["data"]
    assert automation["mediaIds"] == [spring_id]

    # Its page shows the pick ticked; unticking it there watches every post again.
    picked = page.get_by_role("group", name=re.compile("^Only on these posts")).get_by_role(
        "checkbox", name=re.compile("^Spring drop"))
    expect(picked).to_be_checked()
    picked.uncheck()
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("status").filter(has_text="Saved the automation Spring replies")).to_be_visible()
    assert v1(client, tenant, f"/v1/comment-automations/{automation['id']}")["mediaIds"] == []
