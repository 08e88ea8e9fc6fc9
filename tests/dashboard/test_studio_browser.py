"""The studio in headless Chromium, in two journeys a person makes: publishing (the composer, the
posts list, Retry, the calendar, the media upload, a queue) and messaging (a broadcast followed to
completed, a comment automation and its log, a sequence and an enrolment, the follower chart). What
each step did is checked through /v1 and the sandbox, never through the page alone."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import pytest

from kit import clock
from service.analytics import ops as analytics
from tests.conftest import bearer
from tests.dashboard import test_console_browser as console
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

CHROMIUM, v1 = console.CHROMIUM, console.v1
# The console's fixtures: Chromium for the module, a signed-in tab at 1280 px per test.
chromium, page = console.chromium, console.page
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
pytestmark = [pytest.mark.shared_service,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Chromium is not installed")]

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002"
                    "00010005fe02fea70000000049454e44ae426082")
LONG = "Our spring collection is here, and it is the biggest we ever made. " * 5  # 335: over X's 280


def _sent(client: Any, account: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    rows = client.get(f"/sandbox/{account['platform']}/sent", params={"accountId": account["id"]}).json()["data"]
    return [row for row in rows if row["kind"] == kind]


def _label(account: dict[str, Any]) -> re.Pattern[str]:
    names = {"x": "X", "linkedin": "LinkedIn", "facebook": "Facebook", "telegram": "Telegram",
             "instagram": "Instagram"}
    return re.compile(rf"^{names[account['platform']]} · ")


def test_a_person_composes_for_three_platforms_retries_a_failure_and_finds_tomorrows_post_on_the_calendar(
        page, client, server_url, tenant):
    x, linkedin, facebook = (connect_account(client, tenant, p) for p in ("x", "linkedin", "facebook"))
    # LinkedIn refuses the first publish: the post is partial and its target says why.
    client.post("/sandbox/linkedin/faults", json={"accountId": linkedin["id"], "failNext": 1, "status": 400})

    page.get_by_role("link", name="Posts", exact=True).click()
    page.get_by_role("link", name="New post").click()
    page.get_by_label("Text", exact=True).fill(LONG)
    for account in (x, linkedin, facebook):
        page.get_by_role("checkbox", name=_label(account)).check()
    checks = page.get_by_role("list", name="Checks")
    x_check = checks.get_by_role("listitem").filter(has_text=re.compile(r"^\s*X · "))
    expect(x_check).to_contain_text("335 / 280")  # X's weighted count, before anything is sent
    expect(x_check).to_contain_text("weighs 335 of X's 280")
    expect(checks.get_by_role("listitem").filter(has_text="LinkedIn")).to_contain_text("335 / 3000")

    page.get_by_text(re.compile(r"^Own text and options for X · ")).click()
    page.get_by_label(re.compile(r"^Text for X · ")).fill("Spring is here 🌸 https://shop.example.com/spring")
    expect(x_check).to_contain_text("41 / 280")  # 15 + the emoji 2 + a space + the link 23
    expect(x_check).to_contain_text("Ready")
    page.get_by_role("button", name="Publish now").click()

    expect(page.get_by_role("heading", level=1)).to_contain_text("Post")
    targets = page.get_by_role("row")
    expect(targets.filter(has_text="LinkedIn")).to_contain_text("Reason:")
    expect(targets.filter(has_text=re.compile(r"^\s*X · "))).to_contain_text("Published")
    assert [row["text"] for row in _sent(client, x, "post")] == ["Spring is here 🌸 https://shop.example.com/spring"]
    assert [row["text"] for row in _sent(client, facebook, "post")] == [LONG]
    page.get_by_role("button", name="Retry").click()
    expect(page.get_by_role("status").filter(has_text="Publishing the failed targets again")).to_be_visible()
    page.reload()
    wait_for(lambda: len(_sent(client, linkedin, "post")) == 1)
    (post,) = v1(client, tenant, "/v1/posts")["data"]
    wait_for(lambda: v1(client, tenant, f"/v1/posts/{post['id']}")["status"] == "published")
    assert len(_sent(client, x, "post")) == 1  # the retry never publishes a live target twice

    # A queue for LinkedIn: the composer shows its next free slot.
    page.goto(f"{server_url}/dashboard/accounts")
    page.get_by_role("link", name=re.compile(r"^Queue of LinkedIn")).click()
    page.get_by_label("Time zone").fill("UTC")
    for number, (day, at) in enumerate((("Monday", "09:00"), ("Thursday", "17:30")), start=1):
        page.get_by_role("button", name="Add a slot").click()
        page.get_by_label(f"Day of slot {number}").select_option(day)
        page.get_by_label(f"Time of slot {number}").fill(at)
    page.get_by_role("button", name="Save queue").click()
    expect(page.get_by_role("status").filter(has_text="Saved the posting queue")).to_be_visible()
    queue = v1(client, tenant, f"/v1/accounts/{linkedin['id']}/queue")
    assert [(s["weekday"], s["time"]) for s in queue["slots"]] == [(1, "09:00"), (4, "17:30")]

    # Scheduled for tomorrow, with a picture uploaded from the composer.
    tomorrow = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).date()
    page.goto(f"{server_url}/dashboard/posts/new")
    expect(page.get_by_text("Next free queue slots")).to_have_count(1)
    page.get_by_label("Text", exact=True).fill("Tomorrow's launch")
    page.get_by_role("checkbox", name=_label(linkedin)).check()
    page.get_by_label("Upload a file").set_input_files(files=[{"name": "launch.png", "mimeType": "image/png",
                                                              "buffer": PNG}])
    expect(page.get_by_role("status").filter(has_text="Uploaded launch.png")).to_be_visible()
    expect(page.get_by_label("Upload progress")).to_have_attribute("value", "100")
    expect(page.get_by_role("checkbox", name="launch.png")).to_be_checked()
    page.get_by_label("Publish at").fill(f"{tomorrow.isoformat()}T09:30")
    page.get_by_label("Time zone").fill("UTC")
    page.get_by_role("button", name="Schedule").click()
    expect(page.get_by_role("status").filter(has_text="Scheduled.")).to_be_visible()
    scheduled = next(p for p in v1(client, tenant, "/v1/posts")["data"] if p["content"] == "Tomorrow's launch")
    assert scheduled["scheduledFor"] == f"{tomorrow.isoformat()}T09:30:00Z"
    assert len(scheduled["mediaIds"]) == 1

    page.get_by_role("link", name="Calendar", exact=True).click()
    page.get_by_label("Date").fill(tomorrow.isoformat())
    page.get_by_role("button", name="Show").click()
    name = tomorrow.strftime("%A %d %B %Y").replace(" 0", " ")
    day = page.get_by_role("listitem").filter(has=page.get_by_role("heading", name=name, exact=True))
    day.get_by_role("link", name=re.compile("Tomorrow's launch")).click()
    scheduled_for = page.get_by_text("Scheduled for").locator("time").first
    expect(scheduled_for).to_have_attribute("datetime", f"{tomorrow.isoformat()}T09:30:00Z")
    expect(scheduled_for).to_contain_text(f"{tomorrow.day} {tomorrow:%b}")
    expect(scheduled_for).to_contain_text("09:30")

    page.get_by_role("link", name="Calendar", exact=True).click()
    page.get_by_label("View", exact=True).select_option("week")
    page.get_by_label("Date").fill(tomorrow.isoformat())
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Week of")
    expect(page.get_by_role("link", name=re.compile(r"^09:30 Tomorrow's launch"))).to_be_visible()


def test_a_person_broadcasts_automates_a_comment_runs_a_sequence_and_reads_the_follower_chart(
        page, client, server_url, tenant):
    bot = connect_account(client, tenant, "telegram")
    for number, name in (("7001", "Ada Lovelace"), ("7002", "Grace Hopper")):
        client.post("/sandbox/telegram/inbound-message",
                    json={"accountId": bot["id"], "from": {"id": number, "name": name}, "text": "hello"})
    wait_for(lambda: len(v1(client, tenant, "/v1/conversations")["data"]) == 2)

    page.get_by_role("link", name="Broadcasts", exact=True).click()
    page.get_by_role("link", name="New broadcast").click()
    page.get_by_label("Account").select_option(label=f"Telegram · {_name(client, tenant, bot)}")
    expect(page.get_by_text("Reaches 2 conversations")).to_be_visible()
    page.get_by_label("Name", exact=True).fill("Spring sale")
    page.get_by_label("Text").fill("20% off this weekend")
    page.get_by_label("Button label").fill("Shop now")
    page.get_by_label("Button URL").fill("https://shop.example.com/sale")
    page.get_by_role("button", name="Send now").click()
    expect(page.locator("#broadcast-status")).to_have_text("Completed")  # the page follows it by itself
    expect(page.get_by_label("Sending progress")).to_have_attribute("value", "100")
    recipients = page.get_by_role("table", name="Recipients").get_by_role("row")
    expect(recipients.filter(has=page.get_by_role("cell", name="sent", exact=True))).to_have_count(2)
    assert sorted(row["to"] for row in _sent(client, bot, "dm")) == ["7001", "7002"]
    (broadcast,) = v1(client, tenant, "/v1/broadcasts")["data"]
    assert broadcast["counts"] == {"targeted": 2, "sent": 2, "failed": 0, "skipped": 0}

    instagram = connect_account(client, tenant, "instagram")
    page.get_by_role("link", name="Automations", exact=True).click()
    page.get_by_role("link", name="New automation").click()
    page.get_by_label("Account").select_option(label=f"Instagram · {_name(client, tenant, instagram)}")
    page.get_by_label("Name").fill("Price list")
    page.get_by_label("Keywords").fill("price, preço")
    page.get_by_label("Match type").select_option("contains")
    page.get_by_label("DM text").fill("Here is our price list")
    page.get_by_label("Public reply").fill("Sent you a DM!")
    page.get_by_label("Once per user").check()
    page.get_by_role("button", name="Create automation").click()
    expect(page.get_by_role("status").filter(has_text="Saved the automation Price list")).to_be_visible()
    client.post("/sandbox/instagram/comment", json={"accountId": instagram["id"], "mediaId": "m1",
                                                    "from": {"id": "8101", "handle": "reader"}, "text": "What PRICE?"})
    wait_for(lambda: [row["text"] for row in _sent(client, instagram, "private_reply")] == ["Here is our price list"])
    page.reload()
    log = page.get_by_role("table", name="Automation log")
    expect(log.get_by_role("row").filter(has_text="What PRICE?")).to_contain_text("reader")
    page.get_by_role("button", name="Pause").click()
    expect(page.get_by_role("button", name="Resume")).to_be_visible()
    (automation,) = v1(client, tenant, "/v1/comment-automations")["data"]
    assert automation["status"] == "paused" and automation["stats"]["triggered"] == 1

    page.get_by_role("link", name="Sequences", exact=True).click()
    page.get_by_role("link", name="New sequence").click()
    page.get_by_label("Account").select_option(label=f"Telegram · {_name(client, tenant, bot)}")
    page.get_by_label("Name").fill("Welcome")
    page.get_by_label("Trigger", exact=True).select_option("manual")
    page.get_by_label("Stop on reply").check()
    page.get_by_label("Step 1 delay (minutes)").fill("0")
    page.get_by_label("Step 1 text").fill("Welcome aboard!")
    page.get_by_role("button", name="Add a step").click()
    page.get_by_label("Step 2 delay (minutes)").fill("1440")
    page.get_by_label("Step 2 text").fill("How is it going?")
    page.get_by_role("button", name="Create sequence").click()
    expect(page.get_by_role("status").filter(has_text="Saved the sequence Welcome")).to_be_visible()
    page.get_by_label("Conversation to enrol").select_option(label="Ada Lovelace")
    page.get_by_role("button", name="Enrol").click()
    expect(page.get_by_role("table", name="Enrolments").get_by_role("row").filter(has_text="Ada Lovelace")
           ).to_contain_text("active")
    expect(page.get_by_text(re.compile(r"^Enrolments: 1 active · 0 completed"))).to_be_visible()  # the stats
    (sequence,) = v1(client, tenant, "/v1/sequences")["data"]
    assert [s["delayMinutes"] for s in sequence["steps"]] == [0, 1440] and sequence["stopOnReply"] is True
    wait_for(lambda: "Welcome aboard!" in [row["text"] for row in _sent(client, bot, "dm")])

    # Two days of follower counts, then the chart.
    for count in (1200, 1234):
        client.post("/sandbox/instagram/followers", json={"accountId": instagram["id"], "followers": count})
        (snapshot,) = analytics.take_now(account_ids=[instagram["id"]])
        assert (snapshot.outcome, snapshot.followers) == ("taken", count)
        clock.advance(86_400 if count == 1200 else 0)
    page.get_by_role("link", name="Analytics", exact=True).click()
    chart = page.get_by_role("img", name=re.compile(r"^Followers of Instagram · .*: 1200 to 1234$"))
    expect(chart).to_be_visible()
    expect(page.get_by_role("definition").filter(has_text="+34")).to_be_visible()

    page.set_viewport_size({"width": 390, "height": 844})
    for path in ("/dashboard/posts", "/dashboard/posts/new", "/dashboard/calendar", "/dashboard/media",
                 "/dashboard/broadcasts", f"/dashboard/broadcasts/{broadcast['id']}", "/dashboard/broadcasts/new",
                 "/dashboard/automations", f"/dashboard/automations/{automation['id']}", "/dashboard/sequences",
                 f"/dashboard/sequences/{sequence['id']}", "/dashboard/analytics"):
        page.goto(server_url + path)
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow == 0, f"{path} scrolls sideways at 390 px"


def _name(client: Any, tenant: dict[str, str], account: dict[str, Any]) -> str:
    record = client.get(f"/v1/accounts/{account['id']}", headers=bearer(tenant["apiKey"])).json()
    if record.get("displayName"):
        return str(record["displayName"])
    return "@" + str(record["username"]).lstrip("@") if record.get("username") else str(record["platformAccountId"])
