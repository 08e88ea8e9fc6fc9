"""Comment automations end to end (CONTRACT section 3 "Comment automations"): comments are posted
through the sandbox, which delivers the platform's signed webhook; what the "platform" received is
read back from the emulator."""

from __future__ import annotations

import datetime as dt
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from storage.db import connection
from storage.models import Event
from tests.conftest import bearer
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

pytestmark = pytest.mark.shared_service


@pytest.fixture
def instagram(client, tenant):
    return connect_account(client, tenant, "instagram")


def _create(client, tenant, account, **fields):
    body = {"accountId": account["id"], "name": "Info", "keywords": ["info"], "matchType": "contains",
            "dmText": "Here is the link", **fields}
    return client.post("/v1/comment-automations", headers=bearer(tenant["apiKey"]), json=body)


def _automation(client, tenant, account, **fields):
    answer = _create(client, tenant, account, **fields)
    assert answer.status_code == 201, answer.text
    return answer.json()


def _comment(client, account, text, *, commenter="9001", handle="fan.one", media="m1",
             platform="instagram", **extra):
    body = {"accountId": account["id"], "mediaId": media, "from": {"id": commenter, "handle": handle},
            "text": text, **extra}
    answer = client.post(f"/sandbox/{platform}/comment", json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()["commentId"]


def _sent(client, account, kind, platform="instagram"):
    rows = client.get(f"/sandbox/{platform}/sent", params={"accountId": account["id"]}).json()["data"]
    return [row for row in rows if row["kind"] == kind]


def _logs(client, tenant, automation_id):
    answer = client.get(f"/v1/comment-automations/{automation_id}/logs", headers=bearer(tenant["apiKey"]),
                        params={"limit": 100})
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def _get(client, tenant, automation_id):
    answer = client.get(f"/v1/comment-automations/{automation_id}", headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 200, answer.text
    return answer.json()


def _events(tenant, kind):
    with connection():
        return [e.data for e in Event.select().where(Event.workspace == tenant["workspaceId"], Event.type == kind)
                .order_by(Event.created_at, Event.id)]


def test_a_matching_comment_gets_its_private_reply_and_public_reply_once(client, tenant, instagram):
    automation = _automation(client, tenant, instagram, keywords=["cafe"], dmText="Aqui está ☕",
                             dmButtonLabel="Open the menu now please", dmButtonUrl="https://example.com/menu",
                             publicReplyText="Sent you a DM!")
    comment_id = _comment(client, instagram, "Quero um CAFÉ!", deliveries=2)
    dms = wait_for(lambda: _sent(client, instagram, "private_reply"))
    replies = wait_for(lambda: _sent(client, instagram, "public_reply"))
    assert [dm["to"] for dm in dms] == [comment_id]
    # Instagram takes no button template in a private reply: the text goes with the URL on its own line.
    assert dms[0]["text"] == "Aqui está ☕\nhttps://example.com/menu"
    assert [(reply["to"], reply["text"]) for reply in replies] == [(comment_id, "Sent you a DM!")]
    logs = wait_for(lambda: [row for row in _logs(client, tenant, automation["id"])
                             if row["dmStatus"] == "sent" and row["replyStatus"] == "posted"])
    assert len(logs) == 1
    assert {k: logs[0][k] for k in ("commentId", "mediaId", "commenterId", "commenterHandle", "text", "matched",
                                    "reason")} == {
        "commentId": comment_id, "mediaId": "m1", "commenterId": "9001", "commenterHandle": "fan.one",
        "text": "Quero um CAFÉ!", "matched": True, "reason": None}
    assert _get(client, tenant, automation["id"])["stats"] == {"triggered": 1, "dmsSent": 1, "repliesPosted": 1,
                                                                "skipped": 0}
    # The DM sits in the conversation with the commenter, as an automation's message.
    messages = client.get(f"/v1/conversations/{logs[0]['conversationId']}/messages",
                          headers=bearer(tenant["apiKey"])).json()["data"]
    assert [(m["direction"], m["source"], m["status"], m["buttonLabel"]) for m in messages] == [
        ("outbound", "automation", "sent", "Open the menu now please")]
    assert [e["commentId"] for e in _events(tenant, "comment.received")] == [comment_id]
    assert [e["commentId"] for e in _events(tenant, "automation.triggered")] == [comment_id]


def test_case_and_accents_are_ignored_and_exact_wants_the_whole_text(client, tenant, instagram):
    exact = _automation(client, tenant, instagram, keywords=["preco"], matchType="exact", mediaIds=["m-exact"])
    contains = _automation(client, tenant, instagram, keywords=["PREÇO"], matchType="contains",
                           mediaIds=["m-contains"])
    _comment(client, instagram, "  PREÇO?! ", media="m-exact", commenter="1001")
    _comment(client, instagram, "qual o preço?", media="m-exact", commenter="1002")
    _comment(client, instagram, "qual o preco do café", media="m-contains", commenter="1003")
    _comment(client, instagram, "Caf\u0065\u0301 e Preço", media="m-contains", commenter="1004")
    _comment(client, instagram, "price?", media="m-contains", commenter="1005")
    assert sorted((row["commenterId"], row["matched"], row["reason"]) for row in _logs(client, tenant, exact["id"])) == [
        ("1001", True, None), ("1002", False, "no_match")]
    assert sorted((row["commenterId"], row["matched"]) for row in _logs(client, tenant, contains["id"])) == [
        ("1003", True), ("1004", True), ("1005", False)]
    wait_for(lambda: len(_sent(client, instagram, "private_reply")) == 3)


def test_once_per_user_holds_under_ten_concurrent_comments(client, tenant, instagram):
    automation = _automation(client, tenant, instagram, matchType="any", keywords=[], oncePerUser=True)
    with ThreadPoolExecutor(10) as pool:
        ids = list(pool.map(lambda n: _comment(client, instagram, f"me {n}", commenter="2001"), range(10)))
    logs = _logs(client, tenant, automation["id"])
    assert sorted(row["commentId"] for row in logs) == sorted(ids)
    acted = [row for row in logs if row["messageId"]]
    assert len(acted) == 1
    assert sorted(row["reason"] for row in logs if not row["messageId"]) == ["once_per_user"] * 9
    wait_for(lambda: _get(client, tenant, automation["id"])["stats"]["dmsSent"] == 1)
    assert [dm["to"] for dm in _sent(client, instagram, "private_reply")] == [acted[0]["commentId"]]
    assert _get(client, tenant, automation["id"])["stats"] == {"triggered": 1, "dmsSent": 1, "repliesPosted": 0,
                                                                "skipped": 9}
    # Another person still gets theirs.
    _comment(client, instagram, "me too", commenter="2002")
    wait_for(lambda: len(_sent(client, instagram, "private_reply")) == 2)


def test_the_accounts_own_comments_and_paused_automations_do_nothing(client, tenant, instagram):
    automation = _automation(client, tenant, instagram, status="paused", publicReplyText="hi")
    _comment(client, instagram, "info please", commenter="3001")
    assert _logs(client, tenant, automation["id"]) == []
    resumed = client.patch(f"/v1/comment-automations/{automation['id']}", headers=bearer(tenant["apiKey"]),
                           json={"status": "active"})
    assert resumed.status_code == 200 and resumed.json()["status"] == "active"
    _comment(client, instagram, "INFO", commenter=instagram["platformAccountId"], handle=instagram["username"])
    assert _logs(client, tenant, automation["id"]) == []
    assert _events(tenant, "comment.received") == []
    _comment(client, instagram, "info!", commenter="3002")
    wait_for(lambda: len(_sent(client, instagram, "private_reply")) == 1 and _sent(client, instagram, "public_reply"))
    assert [row["commenterId"] for row in _logs(client, tenant, automation["id"])] == ["3002"]


def test_one_private_reply_per_comment_within_seven_days(client, tenant, instagram):
    first = _automation(client, tenant, instagram, name="first")
    second = _automation(client, tenant, instagram, name="second", keywords=["INFO"], dmText="Another text")
    comment_id = _comment(client, instagram, "info", commenter="4001")
    old = int(time.time() - dt.timedelta(days=8).total_seconds())
    old_id = _comment(client, instagram, "info", commenter="4002", timestamp=old)
    first_logs = {row["commentId"]: row for row in _logs(client, tenant, first["id"])}
    second_logs = {row["commentId"]: row for row in _logs(client, tenant, second["id"])}
    assert first_logs[comment_id]["messageId"] is not None
    assert (second_logs[comment_id]["messageId"], second_logs[comment_id]["reason"]) == (None, "already_replied")
    assert (first_logs[old_id]["messageId"], first_logs[old_id]["reason"]) == (None, "outside_messaging_window")
    dms = wait_for(lambda: _sent(client, instagram, "private_reply"))
    assert [(dm["to"], dm["text"]) for dm in dms] == [(comment_id, "Here is the link")]
    assert _get(client, tenant, second["id"])["stats"]["skipped"] == 2  # the first comment and the old one


def test_facebook_comments_work_too(client, tenant):
    page = connect_account(client, tenant, "facebook")
    automation = _automation(client, tenant, page, keywords=["price"], publicReplyText="Check your inbox")
    comment_id = _comment(client, page, "Price?", platform="facebook", media=f"{page['platformAccountId']}_77",
                          commenter="5001", handle="Ana")
    dms = wait_for(lambda: _sent(client, page, "private_reply", platform="facebook"))
    assert [dm["to"] for dm in dms] == [comment_id]
    wait_for(lambda: _sent(client, page, "public_reply", platform="facebook"))
    assert _logs(client, tenant, automation["id"])[0]["commenterHandle"] == "Ana"


def test_patch_changes_only_what_is_sent_and_an_empty_button_field_removes_the_button(live, client, tenant, instagram):
    automation = _automation(client, tenant, instagram, dmButtonLabel="Menu", dmButtonUrl="https://example.com/m",
                             mediaIds=["a", "b", "a"])
    assert automation["mediaIds"] == ["a", "b"]
    url = f"/v1/comment-automations/{automation['id']}"
    changed = client.patch(url, headers=bearer(tenant["apiKey"]), json={"dmButtonUrl": "https://example.com/new"})
    assert changed.status_code == 200, changed.text
    assert (changed.json()["dmButtonLabel"], changed.json()["dmButtonUrl"]) == ("Menu", "https://example.com/new")
    removed = client.patch(url, headers=bearer(tenant["apiKey"]), json={"dmButtonLabel": ""}).json()
    assert (removed["dmButtonLabel"], removed["dmButtonUrl"]) == (None, None)
    assert {k: removed[k] for k in ("name", "keywords", "dmText", "mediaIds")} == {
        "name": "Info", "keywords": ["info"], "dmText": "Here is the link", "mediaIds": ["a", "b"]}
    lonely = client.patch(url, headers=bearer(tenant["apiKey"]), json={"dmButtonLabel": "Alone"})
    assert lonely.status_code == 422
    assert {d["field"] for d in lonely.json()["error"]["details"]} == {"dmButtonLabel", "dmButtonUrl"}
    listed = client.get("/v1/comment-automations", headers=bearer(tenant["apiKey"]),
                        params={"accountId": instagram["id"], "status": "active"}).json()
    assert [a["id"] for a in listed["data"]] == [automation["id"]]
    assert listed["data"][0]["stats"] == {"triggered": 0, "dmsSent": 0, "repliesPosted": 0, "skipped": 0}
    paused = client.get("/v1/comment-automations", headers=bearer(tenant["apiKey"]), params={"status": "paused"})
    assert paused.json()["data"] == []
    assert client.get(url, headers=bearer(live.tenant()["apiKey"])).status_code == 404
    deleted = client.delete(url, headers=bearer(tenant["apiKey"]))
    assert deleted.status_code == 200 and deleted.json() == {"id": automation["id"], "deleted": True}
    assert client.get(url, headers=bearer(tenant["apiKey"])).status_code == 404


@pytest.mark.parametrize(("fields", "named"), [
    ({"keywords": []}, {"keywords"}),
    ({"keywords": [], "matchType": "exact"}, {"keywords"}),
    ({"dmButtonLabel": "Menu"}, {"dmButtonLabel", "dmButtonUrl"}),
    ({"dmButtonUrl": "https://example.com"}, {"dmButtonLabel", "dmButtonUrl"}),
    ({"dmButtonLabel": "Menu", "dmButtonUrl": "http://example.com"}, {"dmButtonUrl"}),
    ({"matchType": "fuzzy"}, {"matchType"}),
    ({"dmText": ""}, {"dmText"}),
    ({"dmText": "x" * 1001}, {"dmText"}),
    ({"status": "stopped"}, {"status"}),
    ({"oncePerUser": "yes"}, {"oncePerUser"}),
    ({"mediaIds": "m1"}, {"mediaIds"}),
    ({"keyword": ["typo"]}, {"keyword"}),
])
def test_each_rule_is_a_422_naming_its_field(client, tenant, instagram, fields, named):
    answer = _create(client, tenant, instagram, **fields)
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["code"] == "validation_failed"
    assert {d["field"] for d in answer.json()["error"]["details"]} == named


def test_any_needs_no_keywords_and_platforms_without_private_replies_are_refused(client, tenant, instagram):
    assert _create(client, tenant, instagram, keywords=[], matchType="any").status_code == 201
    bot = connect_account(client, tenant, "telegram")
    answer = _create(client, tenant, bot)
    assert answer.status_code == 422
    assert [d["field"] for d in answer.json()["error"]["details"]] == ["accountId"]


@pytest.mark.parametrize("keyword", ["!!!", " ", "🔥🔥", "...?"])
def test_a_keyword_that_folds_to_nothing_is_422_as_it_would_never_match(client, tenant, instagram, keyword):
    answer = _create(client, tenant, instagram, keywords=["info", keyword])
    assert answer.status_code == 422, answer.text
    assert [d["field"] for d in answer.json()["error"]["details"]] == ["keywords[1]"]
