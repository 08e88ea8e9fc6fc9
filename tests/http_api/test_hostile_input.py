"""Input an attacker (or a broken client) sends: always a 4xx in the error envelope, never a 500."""

import datetime as dt
import json
import re

import pytest

from http_api.app import all_operations
from platforms.graph.inbound import meta_signature
from service.accounts import adapters
from storage.db import connection
from storage.models import Account, InboundRecord
from tests.conftest import bearer
from tests.support.oauth_flow import hidden
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service


LONE_SURROGATES = (b'{"name": "\\ud800"}', b'{"\\udfff": "x"}', b'{"name": ["a", {"b": "\\udc00x"}]}')
HUGE_INTEGER = b'{"name": "k", "expiresInDays": ' + b"9" * 5000 + b"}"


def _path(template: str) -> str:
    return re.sub(r"\{[^}]+\}", "x_1", template)


def _error_code(answer) -> str:
    body = answer.json()
    assert set(body) == {"error"}
    return body["error"]["code"]


def test_a_lone_surrogate_in_a_json_body_is_400_on_every_json_endpoint(client, tenant):
    h = {**bearer(tenant["apiKey"]), "Content-Type": "application/json"}
    with_body = [op for op in all_operations() if op.body is not None and op.auth]
    assert len(with_body) >= 9
    for operation in with_body:
        for raw in LONE_SURROGATES:
            answer = client.request(operation.method, "/v1" + _path(operation.path), headers=h, content=raw)
            assert answer.status_code == 400, (operation.operation_id, raw, answer.text)
            assert _error_code(answer) == "bad_request"


def test_a_surrogate_pair_is_text_and_kept(client, tenant):
    h = {**bearer(tenant["apiKey"]), "Content-Type": "application/json"}
    answer = client.post("/v1/profiles", headers=h, content=b'{"name": "smile \\ud83d\\ude00"}')
    assert answer.status_code == 201
    assert answer.json()["name"] == "smile 😀"


def test_a_nul_in_a_json_body_is_422_on_its_field_on_every_json_endpoint(client, tenant):
    # PostgreSQL's text cannot hold NUL: refused where it stands, before anything is stored.
    h = {**bearer(tenant["apiKey"]), "Content-Type": "application/json"}
    for operation in [op for op in all_operations() if op.body is not None and op.auth]:
        for raw, field in ((b'{"name": "a\\u0000b"}', "name"), (b'{"name": ["a", {"b": "\\u0000"}]}', "name[1].b")):
            answer = client.request(operation.method, "/v1" + _path(operation.path), headers=h, content=raw)
            assert answer.status_code == 422, (operation.operation_id, raw, answer.text)
            assert answer.json()["error"]["details"] == [{"field": field, "message": "must not contain the NUL character"}]


def test_an_escaped_backslash_before_u0000_is_text_and_kept(client, tenant):
    h = {**bearer(tenant["apiKey"]), "Content-Type": "application/json"}
    answer = client.post("/v1/profiles", headers=h, content=b'{"name": "\\\\u0000"}')
    assert answer.status_code == 201
    assert answer.json()["name"] == "\\u0000"


def test_a_nul_in_a_query_parameter_is_422_on_the_field_and_in_a_path_id_404(client, tenant):
    h = bearer(tenant["apiKey"])
    answer = client.get("/v1/conversations", headers=h, params={"accountId": "acc_\x00x", "limit": "5"})
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["details"] == [{"field": "accountId", "message": "must not contain the NUL character"}]
    answer = client.get("/v1/conversations/cnv_%00x", headers=h)
    assert answer.status_code == 404, answer.text
    assert _error_code(answer) == "not_found"


def test_an_integer_of_more_than_4300_digits_is_400(client, tenant):
    h = {**bearer(tenant["apiKey"]), "Content-Type": "application/json"}
    answer = client.post("/v1/api-keys", headers=h, content=HUGE_INTEGER)
    assert answer.status_code == 400
    assert _error_code(answer) == "bad_request"
    listed = client.get("/v1/api-keys", headers=bearer(tenant["apiKey"])).json()
    assert "k" not in [k["name"] for k in listed["data"]]


def test_oauth_registration_refuses_surrogates_and_huge_integers_with_400(client):
    h = {"Content-Type": "application/json"}
    bodies = [
        b'{"redirect_uris": ["https://app.example/cb"], "client_name": "\\ud800"}',
        b'{"redirect_uris": ["https://app.example/cb\\udfff"]}',
        b'{"redirect_uris": ["https://app.example/cb"], "\\ud800": 1}',
        b'{"redirect_uris": ["https://app.example/cb"], "client_id_issued_at": ' + b"9" * 5000 + b"}",
    ]
    for raw in bodies:
        answer = client.post("/oauth/register", headers=h, content=raw)
        assert answer.status_code == 400, (raw[:80], answer.text)
        assert answer.json()["error"] == "invalid_client_metadata"


def _inbound_records(tenant):
    """What was stored for the workspace's accounts (other tests' workspaces share the storage)."""
    with connection():
        return list(InboundRecord.select().join(Account).where(Account.workspace == tenant["workspaceId"])
                    .order_by(InboundRecord.received_at))


def test_a_signed_telegram_update_with_a_lone_surrogate_is_stored_with_the_character_replaced(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    bot_id = bot["platformAccountId"]
    update = (b'{"update_id": 991, "message": {"message_id": 5, "date": 1763900000, '
              b'"chat": {"id": 7, "type": "private"}, "from": {"id": 7, "is_bot": false, "first_name": "M\\ud800"}, '
              b'"text": "broken \\ud83d here\\u0000"}}')
    answer = client.post(f"/hooks/telegram?bot={bot_id}", content=update, headers={
        "Content-Type": "application/json",
        "X-Telegram-Bot-Api-Secret-Token": adapters.config().telegram_secret(bot_id)})
    assert answer.status_code == 200
    assert [r.event["text"] for r in _inbound_records(tenant)] == ["broken \ufffd here\ufffd"]


def test_a_signed_instagram_webhook_with_an_absurd_timestamp_is_stored_with_the_receipt_time(client, tenant):
    ig = connect_account(client, tenant, "instagram")
    account = ig["platformAccountId"]
    for n, timestamp in enumerate((10**30, -(10**20), 253402300800000 * 50, "9" * 400)):
        body = json.dumps({"object": "instagram", "entry": [{"id": account, "time": timestamp, "messaging": [{
            "sender": {"id": f"igsid-{n}"}, "recipient": {"id": account}, "timestamp": timestamp,
            "message": {"mid": f"m-absurd-{n}", "text": f"when {n}"}}]}]}).encode()
        answer = client.post("/hooks/instagram", content=body, headers={
            "Content-Type": "application/json",
            "X-Hub-Signature-256": meta_signature(adapters.config().meta_app_secret, body)})
        assert answer.status_code == 200, (timestamp, answer.text)
    records = _inbound_records(tenant)
    assert sorted(r.event["text"] for r in records) == ["when 0", "when 1", "when 2", "when 3"]
    for record in records:
        occurred = record.event["occurred_at"]
        assert occurred[:4] == str(record.received_at.year), occurred
    conversations = client.get("/v1/conversations", headers=bearer(tenant["apiKey"])).json()["data"]
    assert len(conversations) == 4
    this_year = str(dt.datetime.now(dt.UTC).year)
    assert [c["lastInboundAt"][:4] for c in conversations] == [this_year] * 4


def test_tokens_with_control_or_non_ascii_characters_are_422_on_the_field(client, tenant):
    h = bearer(tenant["apiKey"])
    for token in ("123456:AAbad\ntoken", "123456:AA\x00x", "123456:AAtöken", "123456:AA/../../x", "123 456:AA"):
        answer = client.post("/v1/connect/telegram", headers=h, json={"profileId": tenant["profileId"],
                                                                       "botToken": token})
        assert answer.status_code == 422, (token, answer.text)
        assert [d["field"] for d in answer.json()["error"]["details"]] == ["botToken"]
        assert token not in answer.text
    for token in ("EAAW\r\nX-Injected: 1", "EAAWtöken", "EAAW token", "EAAW\x7f"):
        answer = client.post("/v1/connect/whatsapp", headers=h, json={
            "profileId": tenant["profileId"], "phoneNumberId": "1555000111", "wabaId": "2000", "accessToken": token})
        assert answer.status_code == 422, (token, answer.text)
        assert [d["field"] for d in answer.json()["error"]["details"]] == ["accessToken"]
    for field in ("phoneNumberId", "wabaId"):
        body = {"profileId": tenant["profileId"], "phoneNumberId": "1555000111", "wabaId": "2000",
                "accessToken": "EAAWgood", field: "12/../../me?x=\t"}
        answer = client.post("/v1/connect/whatsapp", headers=h, json=body)
        assert answer.status_code == 422, (field, answer.text)
        assert [d["field"] for d in answer.json()["error"]["details"]] == [field]
    assert client.get("/v1/accounts", headers=h).json()["pagination"]["total"] == 0


def test_a_nul_in_a_form_or_a_client_registration_is_a_4xx(client):
    page = client.get("/dashboard/login")
    answer = client.post("/dashboard/login", data={"email": "ann\x00@example.com", "password": "x",
                                                   "csrf_token": hidden(page.text, "csrf_token")})
    assert 400 <= answer.status_code < 500, answer.text
    answer = client.post("/oauth/token", data={"grant_type": "authorization_code", "code": "c\x00",
                                               "client_id": "x\x00", "redirect_uri": "https://a.example/cb"})
    assert 400 <= answer.status_code < 500, answer.text
    answer = client.post("/oauth/register", headers={"Content-Type": "application/json"},
                         content=b'{"redirect_uris": ["https://app.example/cb"], "client_name": "a\\u0000"}')
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "invalid_client_metadata"


def test_two_authorization_headers_are_400_not_the_first_one_taken(client, tenant):
    for first, second in ((tenant["apiKey"], "sk_" + "0" * 64), ("sk_" + "0" * 64, tenant["apiKey"])):
        headers = [("Authorization", f"Bearer {first}"), ("Authorization", f"Bearer {second}")]
        for method, path in (("GET", "/v1/profiles"), ("POST", "/v1/profiles")):
            answer = client.request(method, path, headers=headers, json={"name": "x"} if method == "POST" else None)
            assert answer.status_code == 400, (method, answer.text)
            assert answer.json()["error"]["code"] == "bad_request"


def test_thousands_of_unknown_conversations_in_an_audience_answer_a_small_error(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    ids = [f"conv_{n:08d}" for n in range(10_000)]
    answer = client.post("/v1/broadcasts", headers=bearer(tenant["apiKey"]), json={
        "accountId": bot["id"], "name": "N", "text": "T", "audience": {"conversationIds": ids}})
    assert answer.status_code == 422
    assert len(answer.content) < 8_000
    details = answer.json()["error"]["details"]
    assert [d["field"] for d in details[:2]] == ["audience.conversationIds[0]", "audience.conversationIds[1]"]
    assert details[-1] == {"field": "audience.conversationIds",
                           "message": "9980 more ids are not conversations of this broadcast's account"}
