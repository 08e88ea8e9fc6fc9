"""The console in headless Chromium (Debian's package, driven by Playwright), used as a person uses
it: by roles and labels. What each job did is checked through /v1 and the sandbox, not the page."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from platforms.base import PLATFORMS
from tests.conftest import bearer
from tests.support.oauth_flow import authorize_params, email_of, pkce_pair, register_client
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import Receiver, Tls, make_tls, running_receiver

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
NAVIGATION = ["Accounts", "Inbox", "Posts", "Calendar", "Broadcasts", "Automations", "Sequences", "Analytics",
              "Webhooks", "API keys", "Connected apps"]

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
pytestmark = [pytest.mark.shared_service,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Chromium is not installed")]


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Tls:
    return make_tls(Path(tmp_path_factory.mktemp("tls")), "localhost", "127.0.0.1")


@pytest.fixture(scope="module")
def live_overrides(tls: Tls) -> dict[str, Any]:
    return {"webhook_ca_bundle": tls.ca_path, "webhook_retry_delays": (1, 1, 1, 1, 1)}


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def sign_in(page: Any, server_url: str, tenant: dict[str, str], path: str = "/dashboard") -> None:
    page.goto(server_url + path)
    page.get_by_label("E-mail").fill(email_of(tenant["userId"]))
    page.get_by_label("Password").fill("correct horse")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(re.escape(server_url + path)))


@pytest.fixture
def page(chromium: Any, server_url: str, tenant: dict[str, str]) -> Iterator[Any]:
    """A signed-in tab at 1280 px."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    expect.set_options(timeout=10_000)
    sign_in(tab, server_url, tenant)
    try:
        yield tab
    finally:
        context.close()


def v1(client: httpx2.Client, tenant: dict[str, str], path: str, **params: Any) -> Any:
    answer = client.get(path, headers=bearer(tenant["apiKey"]), params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_person_connects_every_platform_then_disconnects_one_and_names_profiles(page, client, server_url, tenant):
    page.get_by_role("link", name="Accounts", exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Accounts")
    for name in ("Instagram", "Facebook", "Meta Ads", "TikTok", "YouTube", "X", "LinkedIn"):
        # Through the (sandbox) platform's consent page and /v1's callback, back to this page.
        page.get_by_role("button", name=f"Connect {name}", exact=True).click()
        expect(page.get_by_role("status").filter(has_text=f"Connected {name} account")).to_be_visible()
    made_telegram = client.post("/sandbox/telegram/accounts", json={}).json()["credentials"]
    page.get_by_label("Bot token").fill(made_telegram["botToken"])
    page.get_by_role("button", name="Connect Telegram", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="Connected Telegram account")).to_be_visible()
    made = client.post("/sandbox/whatsapp/accounts", json={}).json()["credentials"]
    page.get_by_label("Phone number ID").fill(made["phoneNumberId"])
    page.get_by_label("WhatsApp Business account ID").fill(made["wabaId"])
    page.get_by_label("Access token").fill(made["accessToken"])
    page.get_by_role("button", name="Connect WhatsApp", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="Connected WhatsApp account")).to_be_visible()

    accounts = v1(client, tenant, "/v1/accounts", limit=100)["data"]
    assert sorted(a["platform"] for a in accounts if a["status"] == "connected") == sorted(PLATFORMS)
    rows = page.get_by_role("row")
    expect(rows).to_have_count(len(PLATFORMS) + 1)  # the header row and one per account

    # TikTok's messaging is a second consent, with TikTok API for Business's own app.
    tiktok = next(a for a in accounts if a["platform"] == "tiktok")
    assert tiktok["capabilities"]["grants"] == {"messaging": "missing"}
    page.get_by_role("button", name=re.compile(r"^Connect messaging for TikTok")).click()
    expect(page.get_by_role("status").filter(has_text="Connected messaging for TikTok account")).to_be_visible()
    assert v1(client, tenant, f"/v1/accounts/{tiktok['id']}")["capabilities"]["grants"] == {"messaging": "connected"}
    expect(page.get_by_role("button", name=re.compile(r"^Connect messaging for TikTok"))).to_have_count(0)
    # LinkedIn's organizations: their own app; the sandbox's grant reaches one, connected at once.
    page.get_by_role("button", name="Connect LinkedIn organizations", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="Connected LinkedIn account Sandbox Organization")).to_be_visible()
    rows = page.get_by_role("row")
    expect(rows).to_have_count(len(PLATFORMS) + 2)

    # A token the platform refuses: the page again, the problem named by the field's label, nothing connected.
    page.get_by_label("Bot token").fill("123:not-a-real-token")
    page.get_by_role("button", name="Connect Telegram", exact=True).click()
    summary = page.get_by_role("alert")
    expect(summary.get_by_role("heading", name="There is a problem")).to_be_visible()
    expect(summary.get_by_role("link", name="Bot token was not accepted by the platform.")).to_be_visible()
    expect(page.get_by_text("botToken")).to_have_count(0)

    telegram = next(a for a in accounts if a["platform"] == "telegram")
    page.goto(server_url + "/dashboard/accounts")
    page.get_by_role("link", name=re.compile(r"^Disconnect Telegram")).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Disconnect the Telegram account")
    page.get_by_role("link", name="Cancel").click()  # asking is not doing
    assert v1(client, tenant, f"/v1/accounts/{telegram['id']}")["status"] == "connected"
    page.get_by_role("link", name=re.compile(r"^Disconnect Telegram")).click()
    page.get_by_role("button", name="Disconnect").click()
    expect(page.get_by_role("status").filter(has_text="Disconnected the Telegram account")).to_be_visible()
    assert v1(client, tenant, f"/v1/accounts/{telegram['id']}")["status"] == "disconnected"
    page.get_by_role("button", name=re.compile(r"^Reconnect Telegram")).click()
    expect(page.get_by_role("heading", name="Reconnect Telegram")).to_be_visible()
    page.get_by_label("Bot token").fill(made_telegram["botToken"])  # the same bot, pasted again
    page.get_by_role("button", name="Connect Telegram", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="Connected Telegram account")).to_be_visible()
    assert v1(client, tenant, f"/v1/accounts/{telegram['id']}")["status"] == "connected"  # the same account

    page.get_by_label("New profile").fill("Bakery")
    page.get_by_role("button", name="Create profile").click()
    expect(page.get_by_role("status").filter(has_text="Created the profile Bakery")).to_be_visible()
    page.get_by_label("Name of profile Bakery").fill("Bakery & Café")
    page.get_by_role("button", name="Rename profile Bakery").click()
    expect(page.get_by_role("status").filter(has_text="Renamed the profile to Bakery & Café")).to_be_visible()
    names = [p["name"] for p in v1(client, tenant, "/v1/profiles")["data"]]
    assert "Bakery & Café" in names


def test_a_grant_reaching_several_pages_asks_which_and_a_bot_connects_with_its_channel(
        page, client, server_url, tenant):
    # The sandbox's consent page grants three Pages when asked (`reach=3`): added to the address the
    # dashboard sends the browser to (a redirect's later hops cannot be intercepted, its first answer can).
    def with_reach(route: Any) -> None:
        answer = route.fetch(max_redirects=0)
        route.fulfill(status=303, headers={"location": answer.headers["location"] + "&reach=3"})

    page.route(re.compile(r".*/dashboard/accounts/connect/facebook$"), with_reach)
    page.get_by_role("link", name="Accounts", exact=True).click()
    page.get_by_role("button", name="Connect Facebook", exact=True).click()
    expect(page.get_by_role("heading", name="Choose what to connect")).to_be_visible()
    boxes = page.get_by_role("checkbox")
    expect(boxes).to_have_count(3)
    assert v1(client, tenant, "/v1/accounts")["data"] == []  # nothing yet: the person chooses
    names = [re.sub(r" \(Page\)$", "", label) for label in page.locator("fieldset label").all_inner_texts()]
    page.get_by_label(f"{names[0]} (Page)").check()
    page.get_by_label(f"{names[2]} (Page)").check()
    page.get_by_role("button", name="Connect selected").click()
    expect(page.get_by_role("status").filter(has_text="Connected Facebook")).to_be_visible()
    connected = v1(client, tenant, "/v1/accounts", platform="facebook")["data"]
    assert sorted(a["displayName"] for a in connected) == sorted([names[0], names[2]])
    expect(page.get_by_role("row")).to_have_count(3)

    # A bot with the channel it posts to; a channel where it is no administrator is refused, clearly.
    made = client.post("/sandbox/telegram/accounts", json={}).json()["credentials"]
    page.get_by_label("Bot token").fill(made["botToken"])
    page.get_by_label("Channel").fill("@notadmin_bakery")
    page.get_by_role("button", name="Connect Telegram", exact=True).click()
    expect(page.get_by_role("alert")).to_contain_text("not an administrator of this channel")
    expect(page.get_by_label("Channel")).to_have_value("@notadmin_bakery")  # kept, to be corrected
    page.get_by_label("Bot token").fill(made["botToken"])
    page.get_by_label("Channel").fill("@bakery_news")
    page.get_by_role("button", name="Connect Telegram", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="Connected Telegram account")).to_be_visible()
    [bot] = v1(client, tenant, "/v1/accounts", platform="telegram")["data"]
    post = client.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={
        "content": "Fresh bread", "publishNow": True, "targets": [{"accountId": bot["id"]}]})
    assert post.status_code == 201, post.text  # no chatId needed: the bot's channel


def test_an_inbound_message_shows_up_by_itself_and_the_typed_reply_reaches_the_sandbox_once(
        page, client, server_url, tenant):
    bot = connect_account(client, tenant, "telegram")
    page.get_by_role("link", name="Inbox", exact=True).click()
    expect(page.get_by_text("0 conversations")).to_be_visible()

    wrote = client.post("/sandbox/telegram/inbound-message",
                        json={"accountId": bot["id"], "from": {"id": "5001", "name": "Ada Lovelace"}, "text": "Is the shop open?"})
    assert wrote.status_code == 200, wrote.text
    conversation_link = page.get_by_role("link", name=re.compile("Ada Lovelace"))
    expect(conversation_link).to_contain_text("1 unread")  # no reload: the list refreshes itself
    conversation_link.click()
    thread = page.get_by_role("list", name="Thread")
    expect(thread).to_contain_text("Is the shop open?")

    client.post("/sandbox/telegram/inbound-message",
                json={"accountId": bot["id"], "from": {"id": "5001", "name": "Ada Lovelace"}, "text": "Until when?"})
    expect(thread).to_contain_text("Until when?")  # the open thread refreshes itself too

    page.get_by_label("Message").fill("Open until six!")
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_role("status").filter(has_text="Message sent.")).to_be_visible()
    expect(thread.get_by_role("listitem").filter(has_text="Open until six!")).to_contain_text("Sent")
    sent = client.get("/sandbox/telegram/sent", params={"accountId": bot["id"]}).json()["data"]
    assert [row.get("text") for row in sent if row["kind"] == "dm"] == ["Open until six!"]

    # A reply with a link button: the contact gets the button with the text.
    page.get_by_label("Message").fill("Book a table")
    page.get_by_text("Add a link button").click()
    page.get_by_label("Button label").fill("Book now")
    page.get_by_label("Button URL").fill("https://shop.example.com/book")
    page.get_by_role("button", name="Send").click()
    expect(thread.get_by_role("listitem").filter(has_text="Book a table")).to_contain_text("Sent")
    sent = client.get("/sandbox/telegram/sent", params={"accountId": bot["id"]}).json()["data"]
    (booked,) = [row for row in sent if row["kind"] == "dm" and row.get("text") == "Book a table"]
    assert booked["payload"]["reply_markup"] == {"inline_keyboard": [[{"text": "Book now",
                                                                        "url": "https://shop.example.com/book"}]]}

    # The platform refuses the next one: the thread says so, with the platform's reason.
    client.post("/sandbox/telegram/faults", json={"accountId": bot["id"], "failNext": 1, "status": 400})
    page.get_by_label("Message").fill("Second thought")
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_role("status").filter(has_text="The platform refused the message")).to_be_visible()
    expect(thread.get_by_role("listitem").filter(has_text="Second thought")).to_contain_text("Failed: ")

    (conversation,) = v1(client, tenant, "/v1/conversations")["data"]
    client.post("/sandbox/telegram/inbound-message",
                json={"accountId": bot["id"], "from": {"id": "5001", "name": "Ada Lovelace"}, "text": "Thanks"})
    expect(page.get_by_role("link", name=re.compile("Ada Lovelace"))).to_contain_text("1 unread")
    page.get_by_role("button", name="Mark as read").click()
    expect(page.get_by_role("link", name=re.compile("Ada Lovelace"))).not_to_contain_text("unread")
    assert v1(client, tenant, f"/v1/conversations/{conversation['id']}")["unreadCount"] == 0

    page.get_by_label("Unread only").check()
    page.get_by_role("button", name="Filter").click()
    expect(page.get_by_text("No conversations match these filters.")).to_be_visible()

    # Signed out in another tab: the open inbox's next refresh takes the whole page to sign-in.
    other = page.context.new_page()
    other.goto(server_url + "/dashboard")
    other.get_by_role("button", name="Sign out").click()
    page.wait_for_url(re.compile(re.escape(server_url) + r"/dashboard/login\?next=%2Fdashboard%2Finbox"))


def test_outside_whatsapps_window_the_inbox_explains_and_a_picked_template_is_sent(page, client, server_url, tenant):
    wa = connect_account(client, tenant, "whatsapp")
    client.post("/sandbox/whatsapp/inbound-message", json={
        "accountId": wa["id"], "from": {"id": "15557654321", "name": "Ola Nordmann"}, "text": "old question",
        "timestamp": "2020-01-01T00:00:00Z"})
    page.get_by_role("link", name="Inbox", exact=True).click()
    page.get_by_role("link", name=re.compile("Ola Nordmann")).click()

    page.get_by_label("Message").fill("Sorry for the wait")
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_role("alert")).to_contain_text("messaging window")
    expect(page.get_by_label("Message")).to_have_value("Sorry for the wait")  # the typed reply is kept

    page.get_by_label("Template", exact=True).select_option(label="order_update (en_US, 2 parameters)")
    page.get_by_label("Template parameters").fill("#1042\nMonday")
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_role("list", name="Thread")).to_contain_text("Template order_update (en_US)")
    sent = [row for row in client.get("/sandbox/whatsapp/sent", params={"accountId": wa["id"]}).json()["data"]
            if row["kind"] == "dm"]
    assert len(sent) == 1
    assert "Your order #1042 ships on Monday." in str(sent[0])


def test_a_webhook_endpoint_is_created_tested_redelivered_rotated_disabled_and_deleted(
        page, client, server_url, tenant, tls):
    with running_receiver(tls) as receiver:
        _webhook_job(page, client, tenant, receiver)


def _webhook_job(page: Any, client: httpx2.Client, tenant: dict[str, str], receiver: Receiver) -> None:
    page.get_by_role("link", name="Webhooks", exact=True).click()
    page.get_by_label("URL").fill(receiver.url + "/in")
    page.get_by_role("checkbox", name=re.compile(r"message\.received A contact")).check()
    page.get_by_role("button", name="Create endpoint").click()
    secret = page.locator("#new-secret").inner_text()
    assert secret.startswith("whsec_")
    (endpoint,) = v1(client, tenant, "/v1/webhooks")["data"]
    assert endpoint["events"] == ["message.received"]

    page.get_by_role("link", name="Open the endpoint").click()
    expect(page.get_by_text(secret)).to_have_count(0)  # shown once
    page.get_by_role("button", name="Send test").click()
    log = page.locator("#delivery-log")
    expect(log.get_by_role("row").filter(has_text="webhook.test")).to_contain_text("DELIVERED")  # by itself
    assert len(receiver.snapshot()) == 1
    log.get_by_text("Payload").first.click()
    expect(log.locator("pre").first).to_contain_text('"type": "webhook.test"')

    log.get_by_role("button", name=re.compile("^Redeliver webhook.test")).first.click()
    expect(page.locator("#delivery-log").get_by_role("row").filter(has_text="DELIVERED")).to_have_count(2)
    assert len(receiver.snapshot()) == 2

    page.get_by_role("link", name="Rotate secret").click()
    page.get_by_role("button", name="Rotate secret").click()
    rotated = page.locator("#new-secret").inner_text()
    assert rotated.startswith("whsec_") and rotated != secret

    page.get_by_role("button", name="Disable").click()
    expect(page.get_by_role("button", name="Send test")).to_be_disabled()
    assert v1(client, tenant, f"/v1/webhooks/{endpoint['id']}")["enabled"] is False
    page.get_by_role("button", name="Enable").click()
    assert v1(client, tenant, f"/v1/webhooks/{endpoint['id']}")["enabled"] is True

    page.get_by_role("link", name="Delete").click()
    page.get_by_role("button", name="Delete").click()
    expect(page.get_by_role("status").filter(has_text="Deleted the endpoint")).to_be_visible()
    assert v1(client, tenant, "/v1/webhooks")["data"] == []


def test_a_key_limited_to_a_profile_with_an_expiry_is_created_and_revoked(page, client, server_url, tenant):
    page.get_by_role("link", name="API keys", exact=True).click()
    page.get_by_label("Name").fill("Bakery site")
    page.get_by_label("Permission").select_option("read")
    page.get_by_label("Scope").select_option("profiles")
    page.get_by_role("group", name="Profiles").get_by_role("checkbox").first.check()
    page.get_by_label("Expires after (days)").fill("30")
    page.get_by_role("button", name="Create key").click()
    key = page.locator("#new-key").inner_text()
    made = next(k for k in v1(client, tenant, "/v1/api-keys")["data"] if k["name"] == "Bakery site")
    assert (made["scope"], made["profileIds"], made["permission"]) == ("profiles", [tenant["profileId"]], "read")
    assert made["expiresAt"] is not None
    last_used = page.get_by_role("row").filter(has_text="Bakery site").get_by_role("cell").nth(6)
    expect(last_used).to_have_text("never")
    assert client.get("/v1/accounts", headers=bearer(key)).status_code == 200
    page.get_by_role("link", name="API keys", exact=True).click()
    expect(last_used).to_have_text(re.compile(r"^\w{3} \d+ \w{3}, \d\d:\d\d · (just now|\d+ min ago)"))

    page.get_by_role("link", name="Revoke Bakery site").click()
    page.get_by_role("button", name="Revoke").click()
    expect(page.get_by_role("status").filter(has_text="The key is revoked.")).to_be_visible()
    assert client.get("/v1/accounts", headers=bearer(key)).status_code == 401


def test_the_shell_navigates_by_keyboard_fits_a_phone_and_answers_unknown_paths_with_a_page(page, server_url):
    navigation = page.get_by_role("navigation", name="Main")
    for name in NAVIGATION:
        expect(navigation.get_by_role("link", name=name, exact=True)).to_have_count(1)

    page.keyboard.press("Tab")  # the first stop skips the navigation
    skip = page.get_by_role("link", name="Skip to content")
    expect(skip).to_be_focused()
    assert skip.evaluate("e => getComputedStyle(e).outlineStyle") != "none"
    page.goto(server_url + "/dashboard/inbox")
    page.get_by_label("Platform").focus()
    page.keyboard.press("Tab")
    expect(page.get_by_label("Account")).to_be_focused()

    page.set_viewport_size({"width": 390, "height": 844})
    for path in ("/dashboard/accounts", "/dashboard/inbox", "/dashboard/webhooks", "/dashboard/api-keys"):
        page.goto(server_url + path)
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow == 0, f"{path} scrolls sideways at 390 px"
        expect(page.get_by_role("navigation", name="Main").get_by_role("link", name="Inbox")).to_be_visible()

    answer = page.goto(server_url + "/dashboard/no-such-page")
    assert answer.status == 404
    assert answer.headers["content-type"].startswith("text/html")
    expect(page.get_by_role("heading", name="Page not found")).to_be_visible()


def test_sign_in_names_the_app_waiting_for_consent_and_how_to_reset_a_password(chromium, server_url, tenant):
    with httpx2.Client(base_url=server_url) as http:
        client = register_client(http, name="Claude Desktop")
    _, challenge = pkce_pair()
    context = chromium.new_context()
    try:
        tab = context.new_page()
        tab.goto(str(httpx2.URL(server_url + "/oauth/authorize",
                                params=authorize_params(client["client_id"], challenge))))
        expect(tab.get_by_role("note")).to_contain_text("continue to Claude Desktop")
        tab.get_by_text("Forgot your password?").click()
        expect(tab.get_by_text("switchboard users set-password")).to_be_visible()
        tab.goto(server_url + "/dashboard/login")
        expect(tab.get_by_role("note")).to_have_count(0)  # not in an OAuth flow: no app to name
    finally:
        context.close()
