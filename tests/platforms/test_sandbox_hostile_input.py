"""The sandbox's control endpoints take whatever a caller sends without a 500: a lone surrogate escape
(`"\\ud800"`, which `json.loads` accepts and UTF-8 cannot hold) in any string, or a number JSON has
no room for. The platform's webhook carries the escape as a platform would send it; the service's
hook keeps it as U+FFFD."""

import httpx2

from tests.conftest import bearer
from tests.support.sandbox import connect_account

LONE = "\\ud800"  # as it stands in the JSON text: an escape, never a character of its own


def _post(http: httpx2.Client, platform: str, control: str, body: str) -> httpx2.Response:
    return http.post(f"/sandbox/{platform}/{control}", content=body.encode(),
                     headers={"Content-Type": "application/json"})


def test_a_lone_surrogate_in_any_string_of_any_control_is_no_500(client, tenant):
    tg, ig = connect_account(client, tenant, "telegram")["id"], connect_account(client, tenant, "instagram")["id"]
    sender = f'{{"id": "42", "handle": "a{LONE}", "name": "N{LONE}"}}'
    cases = {
        "telegram inbound-message": ("telegram", "inbound-message",
                                     f'{{"accountId": "{tg}", "from": {sender}, "text": "hi {LONE}"}}'),
        "instagram inbound-message": ("instagram", "inbound-message",
                                      f'{{"accountId": "{ig}", "from": {sender}, "text": "{LONE}",'
                                      f' "storyReply": true, "storyId": "s{LONE}"}}'),
        "instagram comment": ("instagram", "comment", f'{{"accountId": "{ig}", "mediaId": "m{LONE}", '
                                                      f'"from": {sender}, "text": "{LONE}"}}'),
        "telegram native-post": ("telegram", "native-post",
                                 f'{{"accountId": "{tg}", "text": "{LONE}", "chatId": "@c{LONE}"}}'),
        "instagram echo": ("instagram", "echo",
                           f'{{"accountId": "{ig}", "to": {{"id": "{LONE}"}}, "text": "{LONE}", "appId": "{LONE}"}}'),
        "instagram receipt": ("instagram", "receipt", f'{{"accountId": "{ig}", "from": {{"id": "{LONE}"}}, '
                                                      f'"kind": "delivery", "messageIds": ["{LONE}"]}}'),
        "telegram faults": ("telegram", "faults",
                            f'{{"accountId": "{tg}", "failNext": 0, "status": 400, "path": "{LONE}"}}'),
        "telegram accounts": ("telegram", "accounts", f'{{"username": "{LONE}", "name": "{LONE}"}}'),
        "unknown account": ("telegram", "followers", f'{{"accountId": "acc_{LONE}", "followers": 1}}'),
        "unknown account in expire-token": ("x", "expire-token", f'{{"accountId": "{LONE}"}}'),
        "timestamp": ("telegram", "inbound-message",
                      f'{{"accountId": "{tg}", "from": {sender}, "text": "t", "timestamp": "{LONE}"}}'),
        "a field name": ("telegram", "latency", f'{{"milliseconds": 0, "{LONE}": 1}}'),
    }
    answers = {name: _post(client, *case).status_code for name, case in cases.items()}
    assert answers == {
        "telegram inbound-message": 200, "instagram inbound-message": 200, "instagram comment": 200,
        "telegram native-post": 200, "instagram echo": 200, "instagram receipt": 200, "telegram faults": 200,
        "telegram accounts": 201, "unknown account": 404, "unknown account in expire-token": 404,
        "timestamp": 422, "a field name": 422,
    }

    # The delivered webhook held the escape, and the service kept the message with U+FFFD.
    delivered = _post(client, *cases["telegram inbound-message"]).json()
    assert delivered["delivered"] is True and delivered["payload"]["message"]["text"] == "hi \ud800"
    listed = client.get("/v1/conversations", headers=bearer(tenant["apiKey"]), params={"accountId": tg}).json()
    (conversation,) = listed["data"]
    messages = client.get(f"/v1/conversations/{conversation['id']}/messages",
                        headers=bearer(tenant["apiKey"])).json()["data"]
    assert {m["text"] for m in messages} == {"hi \ufffd"}
    # What the sandbox answers about what it keeps is no 500 either.
    assert client.get("/sandbox/instagram/sent", params={"accountId": ig}).status_code == 200


def test_numbers_json_has_no_room_for_are_refused_by_the_controls(client, tenant):
    tg = connect_account(client, tenant, "telegram")["id"]
    sender = '{"id": "42"}'
    cases = {
        "NaN": ("telegram", "processing", '{"seconds": NaN}'),
        "Infinity": ("telegram", "processing", '{"advanceSeconds": Infinity}'),
        "a huge integer": ("telegram", "processing", '{"seconds": 1' + "0" * 400 + "}"),
        "a huge retryAfter": ("telegram", "faults", '{"failNext": 1, "status": 429, "retryAfter": 1e308}'),
        "a huge timestamp": ("telegram", "inbound-message",
                             f'{{"accountId": "{tg}", "from": {sender}, "text": "t", "timestamp": 1e300}}'),
        "a huge follower count": ("telegram", "followers", f'{{"accountId": "{tg}", "followers": 1{"0" * 30}}}'),
    }
    answers = {name: _post(client, *case) for name, case in cases.items()}
    assert {name: answer.status_code for name, answer in answers.items()} == dict.fromkeys(cases, 422)
    assert {answer.json()["error"]["code"] for answer in answers.values()} == {"validation_failed"}
