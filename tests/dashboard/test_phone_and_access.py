"""The console on a phone (390 px) and for everyone: every page, with a seeded workspace, at 1280
and 390 px, has no serious or critical accessibility violation (axe-core, run in the page) and is
never wider than the screen; on a phone a tapped conversation has the screen to itself with a way
back; the inbox and the composer work with the keyboard alone; revoking a connected app asks first.

The pages are read from the dashboard's own route table, so a page added later without a way to
reach it here fails."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from dashboard import routes
from storage.db import connection, db
from storage.models import Account
from tests.conftest import PG_BASE, bearer
from tests.dashboard import test_console_browser as console
from tests.dashboard.test_console_tenancy import PNG
from tests.support import axe_core
from tests.support.oauth_flow import call_tool_raw, hand_made_tokens
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

CHROMIUM, v1, sign_in = console.CHROMIUM, console.v1, console.sign_in
chromium = console.chromium
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
pytestmark = [pytest.mark.shared_service,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Chromium is not installed")]

PHONE = {"width": 390, "height": 844}
WIDE = {"width": 1280, "height": 900}
# A contact's name long enough to be broken mid-word by a narrow column.
CONTACT = "Maximiliana Oyelaran-Fitzgerald"
# GET routes that are not a page a person opens: live partials the page asks for again, the
# platforms' return to the service after their consent (a redirect), an invitation's link (its
# token is only ever mailed; `test_members_pages` opens it), the workspace switch (a POST), the
# account's recent posts the automation form reads into itself.
NOT_PAGES = {"/dashboard/automations/recent-posts", "/dashboard/inbox/live", "/dashboard/inbox/{id}/live", "/dashboard/broadcasts/{id}/live",
             "/dashboard/webhooks/{id}/live", "/dashboard/accounts/connected", "/dashboard/invitations/{token}"}


@pytest.fixture(scope="module")
def axe_script() -> str:
    return axe_core.source()


@pytest.fixture
def tab_at(chromium: Any, server_url: str, tenant: dict[str, str], axe_script: str) -> Iterator[Callable[..., Any]]:
    """`tab_at(viewport)`: a signed-in tab of that size, with axe-core in each page it opens."""
    contexts: list[Any] = []
    expect.set_options(timeout=10_000)

    def open_tab(viewport: dict[str, int], **options: Any) -> Any:
        context = chromium.new_context(viewport=viewport, **options)
        contexts.append(context)
        context.add_init_script(script=axe_script)
        tab = context.new_page()
        sign_in(tab, server_url, tenant)
        return tab

    try:
        yield open_tab
    finally:
        for context in contexts:
            context.close()


def _media(client: httpx2.Client, auth: dict[str, str]) -> str:
    upload = client.post("/v1/media/uploads", headers=auth,
                         json={"filename": "spring.png", "contentType": "image/png", "size": len(PNG)}).json()
    client.put(f"/v1/media/uploads/{upload['token']}", content=PNG)
    return str(client.post(f"/v1/media/uploads/{upload['token']}/complete", headers=auth).json()["mediaId"])


def _seed(client: httpx2.Client, browser: httpx2.Client, tenant: dict[str, str]) -> dict[str, str]:
    """A workspace as a person's looks after a week: accounts of several platforms, a conversation,
    a published and a failed post, a broadcast, a sequence, an automation, a webhook, a key, a
    file, a member and an app allowed in. The ids each page's address needs."""
    auth = bearer(tenant["apiKey"])
    bot = connect_account(client, tenant, "telegram")
    insta = connect_account(client, tenant, "instagram")
    x = connect_account(client, tenant, "x")
    for platform in ("facebook", "whatsapp", "youtube", "linkedin"):
        connect_account(client, tenant, platform)
    client.post("/sandbox/telegram/inbound-message",
                json={"accountId": bot["id"], "from": {"id": "77", "name": CONTACT}, "text": "Do you ship abroad?"})
    (conversation,) = client.get("/v1/conversations", headers=auth).json()["data"]
    client.post("/v1/posts", headers=auth, json={
        "content": "Our spring collection is here, with every colour of the season in it, and more to come soon",
        "publishNow": True, "targets": [{"accountId": bot["id"], "options": {"chatId": "@shopnews"}}]})
    tomorrow = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).strftime("%Y-%m-%dT10:00:00Z")
    post = client.post("/v1/posts", headers=auth, json={  # editable: not published yet
        "content": "Summer opening hours, from Monday: ten till six every day of the week, Sundays included",
        "scheduledFor": tomorrow, "targets": [{"accountId": bot["id"], "options": {"chatId": "@shopnews"}}]}).json()
    client.post("/sandbox/x/faults", json={"accountId": x["id"], "failNext": 1, "status": 400})
    client.post("/v1/posts", headers=auth, json={"content": "This one will fail", "publishNow": True,
                                                 "targets": [{"accountId": x["id"]}]})
    broadcast = client.post("/v1/broadcasts", headers=auth, json={
        "accountId": bot["id"], "name": "Spring sale", "text": "The sale starts today"}).json()
    sequence = client.post("/v1/sequences", headers=auth, json={
        "accountId": bot["id"], "name": "Welcome", "trigger": "manual",
        "steps": [{"delayMinutes": 0, "text": "Welcome!"}]}).json()
    automation = client.post("/v1/comment-automations", headers=auth, json={
        "accountId": insta["id"], "name": "Price question", "matchType": "any", "dmText": "Prices are on our site"}).json()
    hook = client.post("/v1/webhooks", headers=auth, json={"url": "https://localhost:9/hook",
                                                           "events": ["sequence.completed"]}).json()
    key = client.post("/v1/api-keys", headers=auth, json={"name": "Shop site"}).json()
    app, _ = hand_made_tokens(browser, workspace_id=tenant["workspaceId"], name="Writing assistant")
    return {"account": bot["id"], "conversation": conversation["id"], "post": post["id"],
            "broadcast": broadcast["id"], "sequence": sequence["id"], "automation": automation["id"],
            "webhook": hook["id"], "key": key["id"], "media": _media(client, auth), "member": tenant["userId"],
            "app": app["client_id"]}


def _pages(settings: Any, ids: dict[str, str], workspace: str) -> list[str]:
    """Every page of the route table, at an address with the seeded ids."""
    families = [("/dashboard/accounts/", "account"), ("/dashboard/inbox/", "conversation"),
                ("/dashboard/posts/", "post"), ("/dashboard/broadcasts/", "broadcast"),
                ("/dashboard/sequences/", "sequence"), ("/dashboard/automations/", "automation"),
                ("/dashboard/webhooks/", "webhook"), ("/dashboard/api-keys/", "key"), ("/dashboard/media/", "media"),
                ("/dashboard/members/", "member")]
    found = []
    for path, _view, methods in routes.table(settings):
        if "GET" not in methods or path in NOT_PAGES:
            continue
        family = next(name for prefix, name in [*families, ("/dashboard", "")] if path.startswith(prefix))
        address = path.replace("{id}", ids.get(family, "")).replace("{action:str}", "delete")
        if path.endswith("connected-apps/revoke"):
            address += f"?clientId={ids['app']}&workspaceId={workspace}"
        found.append(address)
        if path.startswith("/dashboard/webhooks/{id}/"):
            found.append(path.replace("{id}", ids["webhook"]).replace("{action:str}", "rotate-secret"))
    return found


def _address(address: str, workspace: str) -> str:
    return f"{address}{'&' if '?' in address else '?'}workspace={workspace}"


def test_every_page_answers_with_a_seeded_workspace(client, browser, tenant, live):
    """Every page, with ids of things that exist, opens on this storage (the browser's reading of
    the same pages, below, is made once)."""
    ids = _seed(client, browser, tenant)
    pages = _pages(live.settings, ids, tenant["workspaceId"])
    assert len(pages) > 35
    answers = {address: browser.get(_address(address, tenant["workspaceId"]), follow_redirects=True).status_code
               for address in pages}
    assert {address: status for address, status in answers.items() if status >= 400} == {}


# Some forty pages, each with axe-core's full run: more than the suite's usual two minutes when the
# machine is shared. What axe-core and the page's width read is the HTML and CSS, the same whichever
# storage the service runs on: made once, on the embedded setup (every page's answer on each storage
# is the test above).
@pytest.mark.skipif(bool(PG_BASE), reason="the browser's reading of every page; run once, not per storage")
@pytest.mark.timeout(300)
@pytest.mark.parametrize("viewport", [WIDE, PHONE], ids=["1280px", "390px"])
def test_every_page_is_accessible_and_no_wider_than_the_screen(tab_at, client, browser, server_url, tenant, live,
                                                               viewport):
    ids = _seed(client, browser, tenant)
    tab = tab_at(viewport)
    pages = _pages(live.settings, ids, tenant["workspaceId"])
    assert len(pages) > 35
    problems: list[str] = []
    for address in pages:
        answer = tab.goto(server_url + _address(address, tenant["workspaceId"]))
        assert answer.status < 400, (address, answer.status)
        tab.wait_for_load_state("load")
        width = tab.evaluate("document.documentElement.scrollWidth")
        found = axe_core.blocking_violations(tab)
        problems += [f"{address}: {width} px wide"] if width > viewport["width"] else []
        problems += [f"{address}: {v['id']} ({v['impact']}): {v['help']}; at {v['where']}" for v in found]
    assert problems == []


def test_on_a_phone_a_tapped_conversation_has_the_screen_with_a_way_back(tab_at, client, browser, server_url,
                                                                         tenant):
    ids = _seed(client, browser, tenant)
    tab = tab_at(PHONE, has_touch=True, is_mobile=True)
    tab.goto(f"{server_url}/dashboard/inbox")
    navigation = tab.get_by_role("navigation", name="Main")
    expect(navigation).to_be_visible()
    expect(tab.get_by_role("heading", name="No conversation open")).to_be_hidden()  # the list has the screen
    tab.get_by_role("link", name=re.compile(CONTACT)).tap()

    thread = tab.get_by_role("heading", name=CONTACT, level=2)
    expect(thread).to_be_in_viewport()
    top = thread.bounding_box()
    assert top is not None and top["y"] < 120  # at the top: nothing of the list or the menus above it
    expect(navigation).to_be_hidden()
    expect(tab.get_by_role("form", name="Filter conversations")).to_be_hidden()
    expect(tab.get_by_role("link", name=re.compile(CONTACT))).to_be_hidden()
    expect(tab.get_by_role("list", name="Thread")).to_contain_text("Do you ship abroad?")
    assert tab.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

    tab.get_by_role("link", name="All conversations").tap()
    expect(tab.get_by_role("link", name=re.compile(CONTACT))).to_be_visible()
    expect(thread).to_be_hidden()
    assert ids["conversation"] not in tab.url


def test_on_a_phone_tables_are_stacked_rows_whose_actions_stay_on_the_screen(tab_at, client, browser, server_url,
                                                                            tenant):
    _seed(client, browser, tenant)
    tab = tab_at(PHONE)
    tab.goto(f"{server_url}/dashboard/accounts")
    row = tab.get_by_role("row").filter(has_text="Telegram")
    for action in (re.compile(r"^Queue of Telegram"), re.compile(r"^Disconnect Telegram")):
        expect(row.get_by_role("link", name=action)).to_be_in_viewport()
    # Each cell says which column it is, and the platform's own spelling comes with its icon.
    shown = row.get_by_role("cell").nth(4).evaluate("cell => getComputedStyle(cell, '::before').content")
    assert shown == '"Needs re-auth"'
    expect(tab.get_by_role("row").filter(has_text="WhatsApp").locator("svg.icon")).to_be_visible()
    assert tab.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def _tab_to(tab: Any, role: str, name: str | re.Pattern[str], most: int = 80) -> None:
    """Press Tab until the element with `role` and `name` has the focus (as a keyboard user does)."""
    target = tab.get_by_role(role, name=name).first
    for _ in range(most):
        tab.keyboard.press("Tab")
        if target.evaluate("element => element === document.activeElement"):
            return
    raise AssertionError(f"Tab never reached the {role} {name!r}")


def test_the_inbox_and_the_composer_work_with_the_keyboard_alone(tab_at, client, browser, server_url, tenant):
    ids = _seed(client, browser, tenant)
    tab = tab_at(WIDE)
    tab.goto(f"{server_url}/dashboard/inbox")
    _tab_to(tab, "link", re.compile(CONTACT))
    tab.keyboard.press("Enter")
    expect(tab.get_by_role("heading", name=CONTACT, level=2)).to_be_visible()
    _tab_to(tab, "textbox", "Message")
    tab.keyboard.type("Yes, to most countries.")
    _tab_to(tab, "button", "Send")
    tab.keyboard.press("Enter")
    expect(tab.get_by_role("status").filter(has_text="Message sent.")).to_be_visible()
    sent = client.get("/sandbox/telegram/sent", params={"accountId": ids["account"]}).json()["data"]
    assert [row.get("text") for row in sent if row["kind"] == "dm"] == ["Yes, to most countries."]

    tab.goto(f"{server_url}/dashboard/posts/new")
    _tab_to(tab, "textbox", "Text")
    tab.keyboard.type("Typed, ticked and sent without a mouse")
    _tab_to(tab, "checkbox", re.compile(r"^X · "))
    tab.keyboard.press("Space")
    expect(tab.get_by_role("checkbox", name=re.compile(r"^X · "))).to_be_checked()
    _tab_to(tab, "button", "Publish now")
    tab.keyboard.press("Enter")
    expect(tab.get_by_role("heading", level=1)).to_contain_text("Post")
    wait_for(lambda: any(p["content"] == "Typed, ticked and sent without a mouse" and p["status"] == "published"
                         for p in v1(client, tenant, "/v1/posts")["data"]))


def test_revoking_a_connected_app_asks_first(tab_at, browser, server_url, tenant):
    _app, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"], name="Writing assistant")
    tab = tab_at(PHONE)
    tab.goto(f"{server_url}/dashboard/settings/connected-apps")
    assert tab.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    revoke = tab.get_by_role("button", name=re.compile(r"^Revoke Writing assistant"))
    revoke.click()
    expect(tab.get_by_role("heading", level=1)).to_have_text(re.compile(r"^Revoke Writing assistant's access"))
    tab.get_by_role("link", name="Cancel").click()  # asking is not doing
    expect(revoke).to_be_visible()
    assert call_tool_raw(browser, tokens["access_token"], "list_workspaces").status_code == 200

    revoke.click()
    tab.get_by_role("button", name="Revoke").click()
    expect(tab.get_by_role("status").filter(has_text="The app's access has ended.")).to_be_visible()
    expect(tab.get_by_text("No connected apps.")).to_be_visible()
    assert call_tool_raw(browser, tokens["access_token"], "list_workspaces").status_code == 401


def test_the_inbox_filters_by_every_platform_with_conversations_spelt_as_the_platforms_do(
        tab_at, client, server_url, tenant):
    page = connect_account(client, tenant, "facebook")
    bot = connect_account(client, tenant, "telegram")
    client.post("/sandbox/facebook/inbound-message",
                json={"accountId": page["id"], "from": {"id": "771", "name": "Page reader"}, "text": "Hi page"})
    client.post("/sandbox/telegram/inbound-message",
                json={"accountId": bot["id"], "from": {"id": "772", "name": "Bot reader"}, "text": "Hi bot"})
    tab = tab_at(PHONE)
    tab.goto(f"{server_url}/dashboard/inbox")
    offered = tab.get_by_label("Platform").locator("option").all_inner_texts()
    for name in ("Facebook", "Instagram", "WhatsApp", "TikTok", "YouTube", "Telegram", "X"):
        assert name in offered
    tab.get_by_label("Platform").select_option(label="Facebook")
    tab.get_by_role("button", name="Filter").click()
    expect(tab.get_by_role("link", name=re.compile("Page reader"))).to_be_visible()
    expect(tab.get_by_role("link", name=re.compile("Bot reader"))).to_have_count(0)
    expect(tab.get_by_role("link", name=re.compile("Page reader")).locator("svg.icon")).to_be_visible()


def test_the_first_page_shows_what_needs_attention_and_every_account_by_name(tab_at, client, browser, server_url,
                                                                            tenant, live):
    ids = _seed(client, browser, tenant)
    with connection(), db.atomic():
        Account.update(needs_reauth=True).where(Account.id == ids["account"]).execute()
    tab = tab_at(PHONE)
    tab.goto(f"{server_url}/dashboard")
    attention = tab.get_by_role("list", name="Needs attention")
    expect(attention.get_by_role("link", name="1 unread conversation")).to_be_visible()
    expect(attention).to_contain_text(CONTACT)
    wait_for(lambda: v1(client, tenant, "/v1/posts", status="failed")["pagination"]["total"] == 1)
    tab.reload()
    expect(attention.get_by_role("link", name="1 failed post")).to_be_visible()
    expect(attention.get_by_role("link", name="This one will fail")).to_be_visible()
    expect(attention.get_by_role("link", name="1 account to reconnect")).to_be_visible()
    expect(attention).to_contain_text("Telegram · ")

    accounts = v1(client, tenant, "/v1/accounts", limit=100)["data"]
    table = tab.get_by_role("table", name="Accounts")
    expect(table.get_by_role("row")).to_have_count(len(accounts) + 1)  # every one, and the header row
    for name in ("Telegram", "Instagram", "X", "Facebook", "WhatsApp", "YouTube", "LinkedIn"):
        expect(table.get_by_role("row").filter(has_text=f"{name} · ").locator("svg.icon")).to_be_visible()
    text = tab.locator("main").inner_text()
    assert [a["id"] for a in accounts if a["id"] in text] == []  # named, never by an id
    assert tenant["workspaceId"] not in text and tenant["profileId"] not in text

    attention.get_by_role("link", name="1 unread conversation").click()
    expect(tab.get_by_role("link", name=re.compile(CONTACT))).to_be_visible()
