"""The sandbox behaves like a real, lasting platform: a restart of the service changes nothing, and
any well-formed test credential connects (a malformed one is refused)."""

import json
import sqlite3
import stat

import httpx2

from platforms.base import PLATFORMS
from platforms.emulator_kit.state import EmulatorState
from platforms.emulator_kit.store import StateStore
from switchboard.app import create_app
from tests.conftest import bearer
from tests.support.live_server import live_server
from tests.support.sandbox import connect_account
from tests.support.secret_scan import files_text, findings
from tests.support.webhook_receiver import wait_for


def _port(settings):
    return int(settings.base_url.rsplit(":", 1)[1])


def _inbound(http, platform, account_id, text, contact="42"):
    answer = http.post(f"/sandbox/{platform}/inbound-message", json={
        "accountId": account_id, "from": {"id": contact, "handle": "ana", "name": "Ana"}, "text": text})
    assert answer.status_code == 200, answer.text
    assert answer.json()["delivered"] is True


def _conversation(http, key, account_id):
    listed = http.get("/v1/conversations", headers=bearer(key), params={"accountId": account_id}).json()
    assert listed["pagination"]["total"] == 1
    return listed["data"][0]["id"]


def test_a_restart_keeps_accounts_tokens_sent_log_faults_and_counters(service, tenant):
    key = tenant["apiKey"]
    with live_server(create_app(service), port=_port(service)) as url, httpx2.Client(base_url=url, timeout=30) as http:
        tg = connect_account(http, tenant, "telegram")
        wa = connect_account(http, tenant, "whatsapp")
        ig = connect_account(http, tenant, "instagram")
        _inbound(http, "telegram", tg["id"], "before the restart")
        tg_conversation = _conversation(http, key, tg["id"])
        before = http.post(f"/v1/conversations/{tg_conversation}/messages", headers=bearer(key),
                           json={"text": "first reply"})
        assert before.status_code == 201, before.text
        faults = http.post("/sandbox/telegram/faults", json={"accountId": tg["id"], "failNext": 1, "status": 400})
        assert faults.status_code == 200

    sandbox_file = service.data_dir / "sandbox.db"
    assert stat.S_IMODE(sandbox_file.stat().st_mode) == 0o600

    with live_server(create_app(service), port=_port(service)) as url, httpx2.Client(base_url=url, timeout=30) as http:
        accounts = http.get("/v1/accounts", headers=bearer(key)).json()["data"]
        assert {a["status"] for a in accounts} == {"connected"}
        # The fault set before the restart still fails the next call, and only that one.
        refused = http.post(f"/v1/conversations/{tg_conversation}/messages", headers=bearer(key),
                            json={"text": "meets the fault"})
        assert refused.status_code == 502
        after = http.post(f"/v1/conversations/{tg_conversation}/messages", headers=bearer(key),
                          json={"text": "after the restart"})
        assert after.status_code == 201, after.text
        # Telegram's message ids go on increasing: no id handed out before is handed out again.
        assert int(after.json()["platformMessageId"]) > int(before.json()["platformMessageId"])
        sent = http.get("/sandbox/telegram/sent", params={"accountId": tg["id"]}).json()["data"]
        assert [row["text"] for row in sent] == ["first reply", "after the restart"]
        # Inbound messages and sends on the other seeded accounts work as before.
        for platform, account in (("whatsapp", wa), ("instagram", ig)):
            _inbound(http, platform, account["id"], "hello after the restart", contact="15550001111")
            conversation = _conversation(http, key, account["id"])
            reply = http.post(f"/v1/conversations/{conversation}/messages", headers=bearer(key),
                              json={"text": "we kept your account"})
            assert reply.status_code == 201, reply.text
        assert http.get(f"/v1/accounts/{tg['id']}", headers=bearer(key)).json()["needsReauth"] is False


def test_any_well_formed_test_credential_connects_and_a_malformed_one_is_refused(client, tenant):
    h = bearer(tenant["apiKey"])
    bot = client.post("/v1/connect/telegram", headers=h, json={
        "profileId": tenant["profileId"], "botToken": "5123456789:AA" + "x7" * 17})
    assert bot.status_code == 201, bot.text
    assert bot.json()["platformAccountId"] == "5123456789"
    number = client.post("/v1/connect/whatsapp", headers=h, json={
        "profileId": tenant["profileId"], "phoneNumberId": "106540352242922", "wabaId": "102290129340398",
        "accessToken": "any-non-empty-token"})
    assert number.status_code == 201, number.text
    assert number.json()["platformAccountId"] == "106540352242922"
    # The made-up bot and number are real sandbox accounts: they receive messages and answer them.
    for platform, account, contact in (("telegram", bot.json(), "42"), ("whatsapp", number.json(), "15550002222")):
        _inbound(client, platform, account["id"], "hi", contact=contact)
        conversation = _conversation(client, tenant["apiKey"], account["id"])
        assert client.post(f"/v1/conversations/{conversation}/messages", headers=h,
                           json={"text": "hello"}).status_code == 201
    for body, field in (
        ({"botToken": "5123456789:BBnot-the-shape"}, "botToken"),
        ({"botToken": "not-a-token"}, "botToken"),
    ):
        refused = client.post("/v1/connect/telegram", headers=h, json={"profileId": tenant["profileId"], **body})
        assert refused.status_code == 422
        assert refused.json()["error"]["details"][0]["field"] == field
    refused = client.post("/v1/connect/whatsapp", headers=h, json={
        "profileId": tenant["profileId"], "phoneNumberId": "not-digits", "wabaId": "102290129340398",
        "accessToken": "token"})
    assert refused.status_code == 422
    empty = client.post("/v1/connect/whatsapp", headers=h, json={
        "profileId": tenant["profileId"], "phoneNumberId": "106540352242923", "wabaId": "102290129340398",
        "accessToken": ""})
    assert empty.status_code == 422


def test_ids_are_never_handed_out_twice_across_restarts_crashes_and_processes(tmp_path):
    path = tmp_path / "sandbox.db"
    first = EmulatorState(StateStore(path))
    before = [first.serial() for _ in range(5)] + [first.next_number()]
    # Another process on the same file, while the first runs; then a restart after a crash (the
    # first never wrote anything else).
    second = EmulatorState(StateStore(path))
    alongside = [second.serial() for _ in range(5)] + [second.next_number()]
    restarted = EmulatorState(StateStore(path))
    after = [restarted.serial() for _ in range(5)] + [restarted.next_number()]
    serials = before[:5] + alongside[:5] + after[:5]
    numbers = [before[5], alongside[5], after[5]]
    assert len(set(serials)) == len(serials) and len(set(numbers)) == len(numbers)
    assert min(after[:5]) > max(before[:5] + alongside[:5]) and after[5] > max(numbers[:2])


def test_a_comment_and_its_private_reply_outlive_a_restart_as_rows_of_their_own(service, tenant):
    with live_server(create_app(service), port=_port(service)) as url, httpx2.Client(base_url=url, timeout=30) as http:
        ig = connect_account(http, tenant, "instagram")
        made = http.post("/v1/comment-automations", headers=bearer(tenant["apiKey"]), json={
            "accountId": ig["id"], "name": "Info", "keywords": ["info"], "matchType": "contains", "dmText": "Here"})
        assert made.status_code == 201, made.text
        for n, text in enumerate(("info please", "nice photo")):  # the first gets a private reply
            commented = http.post("/sandbox/instagram/comment", json={
                "accountId": ig["id"], "mediaId": "m1", "from": {"id": f"900{n}", "handle": f"fan{n}"}, "text": text})
            assert commented.status_code == 200, commented.text
        wait_for(lambda: [row for row in http.get("/sandbox/instagram/sent", params={"accountId": ig["id"]}).json()
                          ["data"] if row["kind"] == "private_reply"])
        platform_id = ig["platformAccountId"]

    path = service.data_dir / "sandbox.db"
    with sqlite3.connect(path) as file:
        (row,) = file.execute("SELECT data FROM accounts WHERE id = ?", (platform_id,)).fetchall()
        assert "comments" not in json.loads(row[0])  # a lookup of the account no longer writes every comment
    restarted = EmulatorState(StateStore(path)).accounts[("instagram", platform_id)]
    replied = sorted((c.text, c.private_replied) for c in restarted.comments.values())
    assert replied == [("info please", True), ("nice photo", False)]


def test_a_sandbox_file_that_kept_comments_inside_the_account_keeps_them(tmp_path):
    path = tmp_path / "sandbox.db"
    StateStore(path).close()
    comment = {"id": "c9", "media_id": "m1", "from_id": "u9", "from_handle": "fan", "text": "price?",
               "created": 1.0, "private_replied": True}
    account = {"platform": "instagram", "id": "17841400000000002", "username": "shop", "display_name": "Shop",
               "comments": {"c9": comment}}
    with sqlite3.connect(path) as file:  # the row as an earlier version wrote it
        file.execute("INSERT INTO accounts VALUES (?, ?, ?)", ("instagram", account["id"], json.dumps(account)))

    state = EmulatorState(StateStore(path))
    state.account("instagram", account["id"])  # its row is written again (at once: outside a request)
    restarted = EmulatorState(StateStore(path)).accounts[("instagram", account["id"])]
    assert restarted.comments["c9"].private_replied is True


def _sandbox_files(data_dir):
    return sorted(data_dir.glob("sandbox.db*"))


def test_the_sandbox_file_keeps_no_token_or_code_in_the_clear(client, tenant, service):
    # Credentials of every kind the sandbox issues: made by its control, by a consent (a code, then
    # tokens), and a test bot token it adopts on first use.
    issued = [value for platform in PLATFORMS for value in _strings(
        client.post(f"/sandbox/{platform}/accounts", json={}).json()["credentials"])]
    connect_account(client, tenant, "instagram")
    connect_account(client, tenant, "x")
    adopted = "5123456780:AA" + "q9" * 17
    bot = client.post("/v1/connect/telegram", headers=bearer(tenant["apiKey"]),
                      json={"profileId": tenant["profileId"], "botToken": adopted})
    assert bot.status_code == 201, bot.text
    assert len(issued) >= 9
    assert findings(files_text(_sandbox_files(service.data_dir)), known=[*issued, adopted]) == []
    # Kept as digests, tokens still work: connecting set the adopted bot's webhook with its token,
    # so a contact's message reaches the service.
    _inbound(client, "telegram", bot.json()["id"], "hi")


def _strings(credentials):
    return [credentials[key] for key in ("accessToken", "refreshToken", "userAccessToken", "botToken")
            if key in credentials]


def test_a_sandbox_file_that_kept_tokens_in_the_clear_keeps_only_their_digests(tmp_path):
    path = tmp_path / "sandbox.db"
    StateStore(path).close()
    bot_token = "7000000001:AA" + "k3" * 17
    ig_token = "IGAA" + "Zx" * 20
    code = "c0de" * 8
    bot = {"platform": "telegram", "id": "7000000001", "username": "b", "display_name": "B",
           "extra": {"bot_token": bot_token}}
    ig = {"platform": "instagram", "id": "17841400000000009", "username": "s", "display_name": "S"}
    with sqlite3.connect(path) as file:  # the rows as an earlier version wrote them
        for account in (bot, ig):
            file.execute("INSERT INTO accounts VALUES (?, ?, ?)", (account["platform"], account["id"], json.dumps(account)))
        for value, platform, account_id in ((bot_token, "telegram", bot["id"]), (ig_token, "instagram", ig["id"])):
            file.execute("INSERT INTO tokens VALUES (?, ?)", (value, json.dumps({
                "value": value, "platform": platform, "account_id": account_id, "kind": "access"})))
        file.execute("INSERT INTO codes VALUES (?, ?)", (code, json.dumps({
            "platform": "instagram", "account_id": ig["id"], "redirect_uri": "https://e.example/cb",
            "expires_at": 4102444800.0})))

    migrated = EmulatorState(StateStore(path))
    assert findings(files_text(_sandbox_files(tmp_path)), known=[bot_token, ig_token, code]) == []
    restarted = EmulatorState(StateStore(path))
    assert restarted.token("telegram", bot_token) is not None and restarted.token("instagram", ig_token) is not None
    assert len(restarted.codes) == len(migrated.codes) == 1 and code not in restarted.codes
    assert "bot_token" not in restarted.accounts[("telegram", bot["id"])].extra
