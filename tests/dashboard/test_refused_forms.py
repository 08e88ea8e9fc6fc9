"""A refused dashboard form, as plain HTTP: the same page again with the status of the refusal, the
values sent filled in, an error summary linking to each field, and each problem in the form's words
(never `/v1`'s field names or an error code). Also what the live checks promise before a button is
pressed (the composer's, the broadcast's preview), and the states pages show after. The browser
journeys are in test_refused_forms_browser.py."""

from __future__ import annotations

import datetime as dt
import html
import re
from typing import Any

import httpx2
import pytest

from tests.conftest import bearer
from tests.support.oauth_flow import hidden
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

pytestmark = pytest.mark.shared_service


@pytest.fixture(scope="module")
def live_overrides() -> dict[str, Any]:
    return {"inbox_poll_seconds": 1.0}  # a YouTube comment thread arrives by polling

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002"
                    "00010005fe02fea70000000049454e44ae426082")
API_NAMES = ("validation_failed", "targets[", "mediaIds", "botToken", "accountId", "options.", "expiresInDays",
             "buttonUrl has", "Error:")


def _form(browser: httpx2.Client, path: str, tenant: dict[str, str], **fields: Any) -> dict[str, Any]:
    page = browser.get(path)
    assert page.status_code == 200, page.text
    once = {"idempotencyKey": hidden(page.text, "idempotencyKey")} if 'name="idempotencyKey"' in page.text else {}
    return {"csrf_token": hidden(page.text, "csrf_token"), "workspaceId": tenant["workspaceId"], **once, **fields}


def _summary(page: str) -> list[tuple[str, str]]:
    """The error summary's links: (the field's id, the words)."""
    found = re.search(r'<div class="error-summary" role="alert"[^>]*>(.*?)</div>', page, re.S)
    assert found, "no error summary on the page"
    return [(target, html.unescape(re.sub(r"<[^>]+>", "", words)))
            for target, words in re.findall(r'<a href="#([^"]+)">(.*?)</a>', found.group(1), re.S)]


def _tag(page: str, element_id: str) -> str:
    found = re.search(rf'<[a-z]+ [^>]*id="{re.escape(element_id)}"[^>]*>', page)
    assert found, f"no element {element_id}"
    return found.group(0)


def _textarea(page: str, element_id: str) -> str:
    found = re.search(rf'<textarea [^>]*id="{re.escape(element_id)}"[^>]*>(.*?)</textarea>', page, re.S)
    assert found, f"no textarea {element_id}"
    return html.unescape(found.group(1))


def _checked(page: str, name: str, value: str) -> bool:
    boxes = re.findall(rf'<input [^>]*name="{re.escape(name)}"[^>]*>', page)
    box = next(b for b in boxes if f'value="{value}"' in b)
    return " checked" in box


def _selected(page: str, select_id: str) -> str:
    found = re.search(rf'<select [^>]*id="{re.escape(select_id)}"[^>]*>(.*?)</select>', page, re.S)
    assert found, f"no select {select_id}"
    chosen = re.findall(r'<option value="([^"]*)"[^>]* selected', found.group(1))
    return html.unescape(chosen[0]) if chosen else ""


def _in_words(page: str) -> None:
    for name in API_NAMES:
        assert name not in re.sub(r"<[^>]+>", "", page), name
    assert "That did not work" not in page


def _media(client: httpx2.Client, tenant: dict[str, str]) -> str:
    auth = bearer(tenant["apiKey"])
    upload = client.post("/v1/media/uploads", headers=auth,
                         json={"filename": "launch.png", "contentType": "image/png", "size": len(PNG)}).json()
    client.put(f"/v1/media/uploads/{upload['token']}", content=PNG).raise_for_status()
    done = client.post(f"/v1/media/uploads/{upload['token']}/complete", headers=auth)
    assert done.status_code == 200, done.text
    return str(done.json()["id"])


def test_a_refused_post_keeps_its_text_accounts_media_and_options_and_names_each_field(browser, client, tenant):
    x = connect_account(client, tenant, "x")
    linkedin = connect_account(client, tenant, "linkedin")
    image = _media(client, tenant)
    form = _form(browser, "/dashboard/posts/new", tenant, text="Launch day " * 30, accounts=[x["id"], linkedin["id"]],
                 mediaIds=[image], action="publish", **{f"thread-{x['id']}": "And one more thing"})
    refused = browser.post("/dashboard/posts/new", data=form)
    assert refused.status_code == 422
    page = refused.text
    assert _textarea(page, "post-text") == "Launch day " * 30
    assert _checked(page, "accounts", x["id"]) and _checked(page, "accounts", linkedin["id"])
    assert _checked(page, "mediaIds", image)
    assert _textarea(page, f"thread-{x['id']}") == "And one more thing"
    ((target, words),) = _summary(page)
    assert target == f"content-{x['id']}"
    assert words.startswith("Text for X · ") and "weighs 330 of X's 280" in words
    assert 'aria-invalid="true"' in _tag(page, f"content-{x['id']}")
    _in_words(page)
    assert client.get("/v1/posts", headers=bearer(tenant["apiKey"])).json()["data"] == []

    # Corrected, the same form goes (its key was freed by the refusal).
    form.update(text="Launch day")
    assert browser.post("/dashboard/posts/new", data=form).status_code == 303


def test_the_check_runs_the_rules_of_schedule_and_add_to_queue_says_where_to_set_times(browser, client, tenant):
    x = connect_account(client, tenant, "x")
    tomorrow = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    form = _form(browser, "/dashboard/posts/new", tenant, text="Hello", accounts=[x["id"]], scheduledFor=tomorrow,
                 timezone="Lisbon")
    check = browser.post("/dashboard/posts/check", data=form).text
    assert "Time zone must be an IANA time zone name, e.g. Europe/Paris." in check
    assert "Ready" not in check
    refused = browser.post("/dashboard/posts/new", data={**form, "action": "schedule"})
    assert refused.status_code == 422 and _summary(refused.text) == [
        ("time-zone", "Time zone must be an IANA time zone name, e.g. Europe/Paris.")]
    assert 'value="Lisbon"' in _tag(refused.text, "time-zone")

    fine = browser.post("/dashboard/posts/check", data={**form, "timezone": "Europe/Lisbon"}).text
    assert "Ready" in fine
    queue_page = f"/dashboard/accounts/{x['id']}/queue?workspace={tenant['workspaceId']}"
    assert html.escape(queue_page) in fine  # no queue yet: the check says so before Add to queue

    queued = browser.post("/dashboard/posts/new", data={**form, "timezone": "Europe/Lisbon", "scheduledFor": "",
                                                         "action": "queue"})
    assert queued.status_code == 422
    ((target, words),) = _summary(queued.text)
    assert target == f"account-{x['id']}" and "has no free time in its posting queue" in words
    assert f'<a href="{html.escape(queue_page)}">Set the posting times of X · ' in queued.text
    assert "PUT /v1" not in queued.text
    _in_words(queued.text)


def test_the_composers_preview_cuts_each_platforms_text_and_shows_the_thread_and_the_first_image(
        browser, client, tenant):
    x = connect_account(client, tenant, "x")
    instagram = connect_account(client, tenant, "instagram")
    image = _media(client, tenant)
    text = "A" * 290
    form = _form(browser, "/dashboard/posts/new", tenant, text=text, accounts=[x["id"], instagram["id"]],
                 mediaIds=[image], **{f"thread-{x['id']}": "Part two\n\nPart three"})
    check = browser.post("/dashboard/posts/check", data=form).text
    on_x = re.search(r'<figure class="post-preview" aria-label="Preview on X · [^"]*">(.*?)</figure>', check, re.S)
    on_instagram = re.search(r'aria-label="Preview on Instagram · [^"]*">(.*?)</figure>', check, re.S)
    assert on_x and on_instagram
    parts = re.findall(r'<p class="preview-part">(.*?)</p>', on_x.group(1), re.S)
    assert len(parts) == 3 and "Part two" in parts[1] and "Part three" in parts[2]
    assert "<del class=\"preview-cut\" title=\"Past the platform's limit\">AAAAAAAAAA</del>" in parts[0]  # 290 - 280
    # Instagram folds a caption after 125 characters, behind "more".
    assert f'<span class="preview-folded" title="Shown after the reader taps more">{"A" * 165}</span>' in \
        on_instagram.group(1)
    assert f"/media/{image}/" in on_x.group(1)  # the first image


def test_a_youtube_broadcast_is_refused_by_the_preview_and_a_refused_broadcast_keeps_its_fields(
        browser, client, tenant):
    youtube = connect_account(client, tenant, "youtube")
    client.post("/sandbox/youtube/comment", json={
        "accountId": youtube["id"], "mediaId": "vid1", "from": {"id": "UCv1", "handle": "@dana"},
        "text": "Great video!"}).raise_for_status()
    wait_for(lambda: client.get("/v1/conversations", headers=bearer(tenant["apiKey"])).json()["data"])
    form = _form(browser, "/dashboard/broadcasts/new", tenant, accountId=youtube["id"], name="Sale",
                 text="Our sale starts now")
    preview = browser.post("/dashboard/broadcasts/preview", data=form).text
    assert "would refuse this broadcast" in preview and "public comment threads" in preview
    assert "Reaches" not in preview

    refused = browser.post("/dashboard/broadcasts/new", data={**form, "action": "send"})
    assert refused.status_code == 422
    assert _summary(refused.text) == [("bc-account", "Account: YouTube conversations are public comment threads, "
                                                     "not direct messages.")]
    assert 'value="Sale"' in _tag(refused.text, "bc-name") and _textarea(refused.text, "bc-text") == "Our sale starts now"
    assert _selected(refused.text, "bc-account") == youtube["id"]
    _in_words(refused.text)
    assert client.get("/v1/broadcasts", headers=bearer(tenant["apiKey"])).json()["data"] == []


def test_a_refused_bot_token_keeps_the_channel_and_says_what_a_token_looks_like(browser, tenant):
    form = _form(browser, "/dashboard/accounts", tenant, profileId=tenant["profileId"], botToken="nope",
                 channel="@bakery_news")
    refused = browser.post("/dashboard/accounts/connect/telegram", data=form)
    assert refused.status_code == 422
    ((target, words),) = _summary(refused.text)
    assert target == "botToken" and words.startswith("Bot token has the wrong form: BotFather gives it as digits")
    assert 'value="@bakery_news"' in _tag(refused.text, "channel")
    assert "nope" not in refused.text  # a secret is typed again, never written back into the page
    _in_words(refused.text)


def test_refused_webhook_key_invitation_and_automation_forms_come_back_filled_in(browser, client, tenant):
    hook = _form(browser, "/dashboard/webhooks", tenant, url="http://example.com/hooks", description="Orders",
                 events=["post.published"])
    refused = browser.post("/dashboard/webhooks", data=hook)
    assert refused.status_code == 422
    assert [target for target, _ in _summary(refused.text)] == ["url"]
    assert _summary(refused.text)[0][1].startswith("URL ")
    assert 'value="http://example.com/hooks"' in _tag(refused.text, "url")
    assert 'value="Orders"' in _tag(refused.text, "description") and _checked(refused.text, "events", "post.published")
    _in_words(refused.text)

    key = _form(browser, "/dashboard/api-keys", tenant, name="Reporting", permission="read", expiresInDays="0")
    refused = browser.post("/dashboard/api-keys", data=key)
    assert refused.status_code == 422
    assert _summary(refused.text) == [("expiresInDays", "Expires after must be at least 1.")]
    assert 'value="Reporting"' in _tag(refused.text, "name") and _selected(refused.text, "permission") == "read"
    _in_words(refused.text)

    invite = _form(browser, "/dashboard/members", tenant, email="not-an-address", role="viewer")
    refused = browser.post("/dashboard/members", data=invite)
    assert refused.status_code == 422
    assert [target for target, _ in _summary(refused.text)] == ["invite-email"]
    assert _summary(refused.text)[0][1].startswith("E-mail ")
    assert 'value="not-an-address"' in _tag(refused.text, "invite-email")
    assert _selected(refused.text, "invite-role") == "viewer"

    instagram = connect_account(client, tenant, "instagram")
    automation = _form(browser, "/dashboard/automations/new", tenant, accountId=instagram["id"], name="Price",
                       keywords="price", matchType="contains", dmText="Here it is", dmButtonLabel="Shop",
                       dmButtonUrl="http://shop.example.com", oncePerUser="on", status="active")
    refused = browser.post("/dashboard/automations/new", data=automation)
    assert refused.status_code == 422
    assert [target for target, _ in _summary(refused.text)] == ["ca-button-url"]
    assert 'value="Price"' in _tag(refused.text, "ca-name") and _textarea(refused.text, "ca-dm") == "Here it is"
    assert _selected(refused.text, "ca-account") == instagram["id"]
    assert re.search(r'<input type="checkbox" name="oncePerUser" checked>', refused.text)
    _in_words(refused.text)


def test_a_file_of_a_type_not_taken_says_which_types_are(browser, tenant):
    form = _form(browser, "/dashboard/media", tenant, filename="menu.pdf", contentType="application/pdf", size="1000")
    refused = browser.post("/dashboard/media/uploads", data=form)
    assert refused.status_code == 422
    assert refused.json()["error"]["message"] == (
        "menu.pdf is not a type that can be posted: upload a JPEG, PNG, GIF or WebP image, or an MP4, QuickTime or "
        "WebM video.")


def test_states_say_what_happened_sequence_steps_sent_a_youtube_button_as_its_link_sandbox_links_in_the_sandbox(
        browser, client, tenant):
    auth = bearer(tenant["apiKey"])
    bot = connect_account(client, tenant, "telegram")
    client.post("/sandbox/telegram/inbound-message",
                json={"accountId": bot["id"], "from": {"id": "7001", "name": "Ada Lovelace"}, "text": "hello"})
    (conversation,) = wait_for(lambda: client.get("/v1/conversations", headers=auth).json()["data"])
    sequence = client.post("/v1/sequences", headers=auth, json={
        "accountId": bot["id"], "name": "Welcome", "trigger": "manual",
        "steps": [{"delayMinutes": 0, "text": "Welcome!"}, {"delayMinutes": 0, "text": "Any questions?"}]}).json()
    client.post(f"/v1/sequences/{sequence['id']}/enroll", headers=auth,
                json={"conversationId": conversation["id"]}).raise_for_status()
    wait_for(lambda: client.get(f"/v1/sequences/{sequence['id']}/enrollments", headers=auth).json()["data"][0][
        "status"] == "completed")
    wait_for(lambda: all(m["status"] != "pending" and m["status"] != "sending" for m in client.get(
        f"/v1/conversations/{conversation['id']}/messages", headers=auth).json()["data"]))
    page = browser.get(f"/dashboard/sequences/{sequence['id']}").text
    assert "Step 1: sent; Step 2: sent" in page and "queued" not in page

    youtube = connect_account(client, tenant, "youtube")
    client.post("/sandbox/youtube/comment", json={
        "accountId": youtube["id"], "mediaId": "vid1", "from": {"id": "UCv1", "handle": "@dana"},
        "text": "Where can I buy it?"}).raise_for_status()
    thread = wait_for(lambda: client.get("/v1/conversations", headers=auth,
                                         params={"accountId": youtube["id"]}).json()["data"])[0]
    form = _form(browser, f"/dashboard/inbox/{thread['id']}", tenant, text="Here:", buttonLabel="Shop",
                 buttonUrl="https://shop.example.com/mug")
    assert browser.post(f"/dashboard/inbox/{thread['id']}/reply", data=form).status_code == 303
    shown = browser.get(f"/dashboard/inbox/{thread['id']}").text
    assert "https://shop.example.com/mug" in shown and "YouTube takes no buttons" in shown
    assert "Button: Shop" not in shown

    x = connect_account(client, tenant, "x")
    made = client.post("/v1/posts", headers=auth, json={"content": "Fresh bread", "publishNow": True,
                                                        "targets": [{"accountId": x["id"]}]}).json()
    wait_for(lambda: client.get(f"/v1/posts/{made['id']}", headers=auth).json()["status"] == "published")
    post = browser.get(f"/dashboard/posts/{made['id']}").text
    assert "Source:" not in post and "Waiting for its time" not in post
    link = re.search(r'<a href="([^"]+)"[^>]*>View in the sandbox</a>', post)
    assert link and html.unescape(link.group(1)).endswith(f"/sandbox/x/sent?accountId={x['id']}")
    assert "x.com/" not in post


def test_a_target_waiting_behind_a_publish_now_says_it_is_going_out(browser, client, tenant):
    from storage.db import connection
    from storage.models import Post

    x = connect_account(client, tenant, "x")
    made = client.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={
        "content": "Fresh bread", "scheduledFor": "2999-01-01T09:00:00Z", "targets": [{"accountId": x["id"]}]}).json()
    # Publish now was pressed and the target is not taken yet: the post is `publishing`, its target `queued`.
    with connection():
        Post.update(status="publishing").where(Post.id == made["id"]).execute()
    page = browser.get(f"/dashboard/posts/{made['id']}").text
    assert "Going out" in page and "published in a moment" in page
    assert "Waiting for its time" not in page and "Queued" not in page
