"""Section 1 of the contract: bodies, errors, request ids, pagination, idempotency (rate limits:
test_rate_limits.py, which runs services of its own)."""

import json
from concurrent.futures import ThreadPoolExecutor

import httpx2
import pytest

from tests.conftest import bearer

pytestmark = pytest.mark.shared_service


def _error(answer):
    body = answer.json()
    assert set(body) == {"error"}
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]["code"]


def test_body_that_is_not_json_is_400(client, tenant):
    h = {**bearer(tenant["apiKey"]), "Content-Type": "application/json"}
    for raw in (b"{", b"not json", b"\xff\xfe", b'{"name": "x",}'):
        answer = client.post("/v1/profiles", headers=h, content=raw)
        assert answer.status_code == 400, raw
        assert _error(answer) == "bad_request"


def test_json_of_the_wrong_top_level_type_is_400(client, tenant):
    h = {**bearer(tenant["apiKey"]), "Content-Type": "application/json"}
    for raw in (b"[]", b'"name"', b"42", b"null", b"true"):
        answer = client.post("/v1/profiles", headers=h, content=raw)
        assert answer.status_code == 400, raw
        assert _error(answer) == "bad_request"


def test_body_that_is_not_application_json_is_415(client, tenant):
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        answer = client.post("/v1/profiles", headers={**bearer(tenant["apiKey"]), "Content-Type": content_type},
                             content=b'{"name": "x"}')
        assert answer.status_code == 415, content_type
        assert _error(answer) == "unsupported_media_type"
    charset = client.post("/v1/profiles", headers={**bearer(tenant["apiKey"]),
                                                   "Content-Type": "application/json; charset=utf-8"},
                          content=b'{"name": "x"}')
    assert charset.status_code == 201


def test_body_over_one_mebibyte_is_413_and_nothing_is_saved(client, tenant):
    h = bearer(tenant["apiKey"])
    before = client.get("/v1/profiles", headers=h).json()["pagination"]["total"]
    answer = client.post("/v1/profiles", headers={**h, "Content-Type": "application/json"},
                         content=json.dumps({"name": "x" * (1024 * 1024)}).encode())
    assert answer.status_code == 413
    assert _error(answer) == "payload_too_large"
    assert client.get("/v1/profiles", headers=h).json()["pagination"]["total"] == before


def test_unknown_fields_and_wrong_types_are_422_naming_each_field(client, tenant):
    answer = client.post("/v1/api-keys", headers=bearer(tenant["apiKey"]),
                         json={"name": 5, "Name": "x", "expiresInDays": "3"})
    assert answer.status_code == 422
    assert _error(answer) == "validation_failed"
    fields = {d["field"] for d in answer.json()["error"]["details"]}
    assert fields == {"name", "Name", "expiresInDays"}


def test_fields_go_by_their_camel_case_names_only(client, tenant):
    answer = client.post("/v1/api-keys", headers=bearer(tenant["apiKey"]),
                         json={"name": "k", "expires_in_days": 3, "profile_ids": []})
    assert answer.status_code == 422
    details = answer.json()["error"]["details"]
    assert {(d["field"], d["message"]) for d in details} == {
        ("expires_in_days", "is not a known field"), ("profile_ids", "is not a known field")}


def test_text_is_kept_byte_for_byte(client, tenant):
    name = ' <script>alert("x")</script> émoji 🎉 עברית "quotes" '
    created = client.post("/v1/profiles", headers=bearer(tenant["apiKey"]), json={"name": name})
    assert created.status_code == 201
    assert created.json()["name"] == name
    assert "<script>" in created.text  # no HTML escaping in JSON
    fetched = client.get(f"/v1/profiles/{created.json()['id']}", headers=bearer(tenant["apiKey"]))
    assert fetched.json()["name"] == name


def test_every_answer_carries_a_request_id_and_echoes_the_callers(client, tenant):
    assert client.get("/v1/health").headers["x-request-id"]
    assert client.get("/v1/nowhere").headers["x-request-id"]
    assert client.get("/v1/accounts").headers["x-request-id"]
    echoed = client.get("/v1/accounts", headers={**bearer(tenant["apiKey"]), "X-Request-Id": "trace-123"})
    assert echoed.headers["x-request-id"] == "trace-123"
    # /mcp, which the outermost layer hands straight to the MCP SDK's endpoint, past the router
    mcp = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                      headers={"Accept": "application/json, text/event-stream", "X-Request-Id": "trace-mcp"})
    assert mcp.status_code == 401 and mcp.headers["www-authenticate"].startswith("Bearer")
    assert mcp.headers.get_list("x-request-id") == ["trace-mcp"]
    assert client.get("/mcp").headers["x-request-id"]


def test_unknown_path_is_404_and_wrong_method_is_405_in_the_envelope(client, tenant):
    missing = client.get("/v1/nowhere", headers=bearer(tenant["apiKey"]))
    assert missing.status_code == 404
    assert _error(missing) == "not_found"
    wrong = client.put("/v1/api-keys", headers=bearer(tenant["apiKey"]))
    assert wrong.status_code == 405
    assert _error(wrong) == "method_not_allowed"
    assert "GET" in wrong.headers["allow"]


def test_pagination_shape_and_bounds(client, tenant):
    h = bearer(tenant["apiKey"])
    for i in range(4):
        client.post("/v1/profiles", headers=h, json={"name": f"p{i}"})
    page = client.get("/v1/profiles", headers=h, params={"page": 2, "limit": 2}).json()
    assert page["pagination"] == {"page": 2, "limit": 2, "total": 5, "pages": 3}
    assert len(page["data"]) == 2
    assert client.get("/v1/profiles", headers=h, params={"page": 9}).json()["data"] == []
    default = client.get("/v1/profiles", headers=h).json()["pagination"]
    assert (default["page"], default["limit"]) == (1, 20)
    for params in ({"page": 0}, {"page": -1}, {"limit": 0}, {"limit": 101}, {"page": "x"}, {"limit": "1.5"}):
        answer = client.get("/v1/profiles", headers=h, params=params)
        assert answer.status_code == 422, params
        assert _error(answer) == "validation_failed"


def test_idempotency_key_replays_the_first_answer_and_does_nothing_again(client, tenant):
    h = {**bearer(tenant["apiKey"]), "Idempotency-Key": "create-brand-1"}
    first = client.post("/v1/profiles", headers=h, json={"name": "Brand"})
    second = client.post("/v1/profiles", headers=h, json={"name": "Brand"})
    assert first.status_code == second.status_code == 201
    assert first.json() == second.json()
    assert second.headers["idempotent-replayed"] == "true"
    names = [p["name"] for p in client.get("/v1/profiles", headers=bearer(tenant["apiKey"])).json()["data"]]
    assert names.count("Brand") == 1
    other_body = client.post("/v1/profiles", headers=h, json={"name": "Other"})
    assert other_body.status_code == 409
    assert _error(other_body) == "conflict"


def test_idempotency_holds_under_concurrent_retries(client, tenant, server_url):
    h = {**bearer(tenant["apiKey"]), "Idempotency-Key": "race-1"}

    def create(_):
        with httpx2.Client(base_url=server_url, timeout=30) as http:
            return http.post("/v1/api-keys", headers=h, json={"name": "raced"})

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(create, range(8)))
    # One runs; the others meet it running (409 `idempotency_in_progress`) or replay its answer.
    made = [a for a in answers if a.status_code == 201]
    assert made
    assert {a.status_code for a in answers} <= {201, 409}
    assert {_error(a) for a in answers if a.status_code == 409} <= {"idempotency_in_progress"}
    assert len({a.json()["key"] for a in made}) == 1
    keys = client.get("/v1/api-keys", headers=bearer(tenant["apiKey"])).json()["data"]
    assert [k["name"] for k in keys].count("raced") == 1


def test_idempotency_key_is_per_api_key_and_a_failed_request_leaves_nothing(client, tenant):
    h = {**bearer(tenant["apiKey"]), "Idempotency-Key": "k"}
    assert client.post("/v1/profiles", headers=h, json={"name": ""}).status_code == 422
    assert client.post("/v1/profiles", headers=h, json={"name": "ok"}).status_code == 201


def test_health_and_openapi_need_no_key(client):
    health = client.get("/v1/health")
    assert health.status_code == 200
    assert health.json() == {"status": "ok", "version": "1.0.0", "database": "ok", "queue": "ok"}
    document = client.get("/v1/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    assert document["info"]["version"] == "1.0.0"
    assert "/v1/api-keys" in document["paths"]
    assert "delete" in document["paths"]["/v1/accounts/{id}/permanent"]


def test_a_body_over_one_mebibyte_is_413_before_authentication_on_every_operation(client, tenant):
    big = b'{"name": "' + b"x" * (1024 * 1024) + b'"}'

    def chunks():
        yield big[: 512 * 1024]
        yield big[512 * 1024:]

    for method, path in (("POST", "/v1/profiles"), ("POST", "/v1/accounts/acc_x/disconnect"),
                         ("DELETE", "/v1/api-keys/key_x"), ("GET", "/v1/profiles")):
        for headers in ({}, bearer(tenant["apiKey"]), {"Authorization": "Bearer sk_wrong"}):
            for content in (big, chunks()):
                answer = client.request(method, path, headers={"Content-Type": "application/json", **headers},
                                        content=content)
                assert answer.status_code == 413, (method, path, headers, answer.text[:200])
                assert _error(answer) == "payload_too_large"
                assert not [name for name in answer.headers if name.lower().startswith("x-ratelimit")]
                assert "www-authenticate" not in answer.headers
    assert [k["revokedAt"] for k in client.get("/v1/api-keys", headers=bearer(tenant["apiKey"])).json()["data"]] == [None]


def test_allow_names_every_method_of_the_path_and_options_answers_it(client, tenant):
    h = bearer(tenant["apiKey"])
    options = client.options("/v1/connect/telegram", headers=h)
    assert options.status_code == 204
    assert options.headers["allow"] == "GET, HEAD, OPTIONS, POST"
    wrong = client.put("/v1/connect/telegram", headers=h)
    assert wrong.status_code == 405
    assert _error(wrong) == "method_not_allowed"
    assert wrong.headers["allow"] == "GET, HEAD, OPTIONS, POST"
    assert client.options("/v1/api-keys", headers=h).headers["allow"] == "GET, HEAD, OPTIONS, POST"
    assert client.options("/v1/nowhere", headers=h).status_code == 404


def test_paging_takes_ascii_digits_only(client, tenant):
    h = bearer(tenant["apiKey"])
    for value in ("١", "１", "۲", "𝟏", "1\u200b", " 1"):
        for name in ("page", "limit"):
            answer = client.get("/v1/profiles", headers=h, params={name: value})
            assert answer.status_code == 422, (name, value)
            assert answer.json()["error"]["details"][0]["field"] == name
    assert client.get("/v1/profiles", headers=h, params={"page": "1", "limit": "10"}).status_code == 200


@pytest.mark.parametrize("path, fault_in", [
    ("/v1/workspaces", "list_workspaces"),  # a fixed path, which the outermost layer answers itself
    ("/v1/profiles/{profile}", "get_profile"),  # a path with a parameter, through the router
])
def test_a_fault_is_a_500_that_quotes_the_request_id_and_tells_nothing_of_it(client, tenant, monkeypatch,
                                                                               path, fault_in):
    from service.identity import workspaces

    def fault(**_: object) -> None:
        raise RuntimeError(f"cannot reach the database with {tenant['apiKey']}")

    monkeypatch.setattr(workspaces, fault_in, fault)
    answer = client.get(path.format(profile=tenant["profileId"]), headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 500
    assert _error(answer) == "internal_error"
    assert answer.headers.get_list("x-request-id") == [answer.headers["x-request-id"]]
    assert answer.headers["x-request-id"] in answer.json()["error"]["message"]
    assert tenant["apiKey"] not in answer.text and "database" not in answer.text
    monkeypatch.undo()
    assert client.get(path.format(profile=tenant["profileId"]), headers=bearer(tenant["apiKey"])).status_code == 200


def test_a_callers_request_id_replaces_none_of_the_answers_headers_but_its_own(client, tenant):
    # On a fixed path and through the router alike: one id, the caller's, beside the rate-limit headers.
    for path in ("/v1/workspaces", f"/v1/profiles/{tenant['profileId']}"):
        answer = client.get(path, headers={**bearer(tenant["apiKey"]), "X-Request-Id": "trace-456"})
        assert answer.status_code == 200
        assert answer.headers.get_list("x-request-id") == ["trace-456"]
        assert answer.headers["x-ratelimit-limit"]
