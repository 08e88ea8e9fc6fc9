"""Times in a person's own zone, in headless Chromium at a desk's width and a phone's: a browser in
São Paulo signing in for the first time sees a post due at 12:00 UTC at 09:00 and finds its zone
kept on its profile; a queue is edited with day and time pickers and shows its slots in its own
zone. What each step did is checked through /v1 too."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.conftest import bearer
from tests.dashboard import test_console_browser as console
from tests.support.oauth_flow import email_of, hidden
from tests.support.sandbox import connect_account

CHROMIUM, v1, sign_in = console.CHROMIUM, console.v1, console.sign_in
chromium = console.chromium  # Chromium for the module
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
pytestmark = [pytest.mark.shared_service,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Chromium is not installed")]
WIDTHS = [pytest.param(1280, id="desk"), pytest.param(390, id="phone")]


def _tab(chromium: Any, width: int, zone: str) -> Iterator[Any]:
    context = chromium.new_context(viewport={"width": width, "height": 900}, timezone_id=zone)
    expect.set_options(timeout=10_000)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture(params=WIDTHS)
def width(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.fixture
def sao_paulo(chromium: Any, width: int) -> Iterator[Any]:
    """A tab whose browser is in São Paulo (UTC−3 all year), not signed in yet."""
    yield from _tab(chromium, width, "America/Sao_Paulo")


@pytest.fixture
def new_york(chromium: Any, width: int) -> Iterator[Any]:
    yield from _tab(chromium, width, "America/New_York")


def test_a_browser_in_sao_paulo_signing_in_for_the_first_time_sees_noon_utc_as_nine(
        sao_paulo, client, server_url, tenant):
    linkedin = connect_account(client, tenant, "linkedin")
    tomorrow = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).date()
    made = client.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={
        "content": "Due at noon UTC", "targets": [{"accountId": linkedin["id"]}],
        "scheduledFor": f"{tomorrow.isoformat()}T12:00:00Z"})
    assert made.status_code == 201, made.text
    page = sao_paulo

    sign_in(page, server_url, tenant, "/dashboard/posts")
    row = page.get_by_role("row").filter(has_text="Due at noon UTC")
    shown = row.locator(f'time[datetime="{tomorrow.isoformat()}T12:00:00Z"]')
    expect(shown).to_contain_text(re.compile(rf"{tomorrow.day} {tomorrow:%b}( \d{{4}})?, 09:00"))
    expect(row).not_to_contain_text("12:00")

    row.get_by_role("link", name=re.compile("Due at noon UTC")).click()
    expect(page.get_by_text("Scheduled for")).to_contain_text("09:00")

    # The zone was the browser's, kept as the person's: their profile shows it, and it is theirs to change.
    page.get_by_role("link", name=re.compile(r"your profile")).click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Your profile")
    expect(page.get_by_label("Your time zone")).to_have_value("America/Sao_Paulo")
    page.get_by_label("Your time zone").fill("Asia/Tokyo")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status").filter(has_text="times are shown in Asia/Tokyo")).to_be_visible()
    page.goto(f"{server_url}/dashboard/posts/{made.json()['id']}")
    expect(page.get_by_text("Scheduled for")).to_contain_text("21:00")  # UTC+9


def test_a_person_who_signed_in_without_the_form_gets_the_browsers_zone_from_their_first_page(
        sao_paulo, client, server_url, tenant):
    linkedin = connect_account(client, tenant, "linkedin")
    tomorrow = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).date()
    client.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={
        "content": "Due at noon UTC", "targets": [{"accountId": linkedin["id"]}],
        "scheduledFor": f"{tomorrow.isoformat()}T12:00:00Z"})
    # Signed in by a request that says no zone (as an identity provider's return does), in this
    # browser's cookie jar; the first page the browser opens then sends its zone and shows it.
    http = sao_paulo.context.request
    login = http.get(f"{server_url}/dashboard/login").text()
    signed = http.post(f"{server_url}/dashboard/login", max_redirects=0, form={
        "email": email_of(tenant["userId"]), "password": "correct horse", "csrf_token": hidden(login, "csrf_token")})
    assert signed.status == 303
    sao_paulo.goto(f"{server_url}/dashboard/posts")
    row = sao_paulo.get_by_role("row").filter(has_text="Due at noon UTC")
    expect(row.locator("time")).to_contain_text("09:00")
    sao_paulo.goto(f"{server_url}/dashboard/profile")
    expect(sao_paulo.get_by_label("Your time zone")).to_have_value("America/Sao_Paulo")


def _next_slot(weekday: int, at: dt.time, zone: ZoneInfo) -> str:
    """The first `weekday` (1 = Monday) at `at` in `zone` still ahead, as the UTC instant /v1 writes."""
    now = dt.datetime.now(zone)
    for ahead in range(8):
        day = (now + dt.timedelta(days=ahead)).date()
        moment = dt.datetime.combine(day, at, tzinfo=zone)
        if day.isoweekday() == weekday and moment > now:
            return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    raise AssertionError("no such day in a week")


def test_a_queue_is_edited_with_day_and_time_pickers_and_shows_its_slots_in_its_own_zone(
        new_york, client, server_url, tenant):
    linkedin = connect_account(client, tenant, "linkedin")
    page = new_york
    sign_in(page, server_url, tenant)
    page.goto(f"{server_url}/dashboard/accounts")
    page.get_by_role("link", name=re.compile(r"^Queue of LinkedIn")).click()
    # A queue never set is read in the person's zone (their browser's), not UTC.
    expect(page.get_by_label("Time zone")).to_have_value("America/New_York")

    page.get_by_role("button", name="Add a slot").click()
    page.get_by_label("Day of slot 1").select_option("Friday")
    page.get_by_label("Time of slot 1").fill("17:00")
    page.get_by_role("button", name="Add a slot").click()
    page.get_by_label("Day of slot 2").select_option("Tuesday")
    page.get_by_label("Time of slot 2").fill("09:30")
    page.get_by_role("button", name="Remove slot 1").click()  # the Friday slot goes; Tuesday's is slot 1 now
    expect(page.get_by_label("Day of slot 1")).to_have_value("2")
    page.get_by_label("Time zone").fill("Europe/Berlin")
    page.get_by_role("button", name="Save queue").click()
    expect(page.get_by_role("status").filter(has_text="Saved the posting queue")).to_be_visible()

    queue = v1(client, tenant, f"/v1/accounts/{linkedin['id']}/queue")
    assert (queue["timezone"], [(s["weekday"], s["time"]) for s in queue["slots"]]) == (
        "Europe/Berlin", [(2, "09:30")])
    # The editor shows the saved slot in its row; the next slots are Tuesdays at 09:30 Berlin time.
    expect(page.get_by_label("Day of slot 1")).to_have_value("2")
    expect(page.get_by_label("Time of slot 1")).to_have_value("09:30")
    first = page.get_by_role("list", name="Next free slots").get_by_role("listitem").first
    expect(first.locator("time")).to_have_attribute("datetime", _next_slot(2, dt.time(9, 30), ZoneInfo("Europe/Berlin")))
    expect(first).to_contain_text(re.compile(r"^Tue \d+ \w+( \d{4})?, 09:30 \(Europe/Berlin\)"))
    expect(first).not_to_contain_text("Z")
