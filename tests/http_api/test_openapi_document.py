"""The OpenAPI document names its shapes (`components/schemas`, reused by `$ref`) and shows an
example per operation that its own schema accepts, so generated clients get real type names."""

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import OpenAPIV31SpecValidator

pytestmark = pytest.mark.shared_service


def _refs(node):
    if isinstance(node, dict):
        if "$ref" in node:
            yield node["$ref"]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def test_records_are_named_schemas_reused_by_reference(client):
    document = client.get("/v1/openapi.json").json()
    schemas = document["components"]["schemas"]
    assert {"Account", "Conversation", "Message", "Webhook", "ApiKey", "Profile", "Workspace", "Error"} <= set(schemas)
    assert schemas["Account"]["properties"]["platform"]["type"] == "string"
    message = document["paths"]["/v1/conversations/{id}/messages"]
    assert message["post"]["responses"]["201"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Message"}
    page = message["get"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert schemas[page.rsplit("/", 1)[1]]["properties"]["data"]["items"] == {"$ref": "#/components/schemas/Message"}
    used = set(_refs(document["paths"]))
    assert "#/components/schemas/Account" in used and "#/components/schemas/Webhook" in used
    assert all(ref.rsplit("/", 1)[1] in schemas for ref in used | set(_refs(schemas)))


def test_every_operation_has_an_example_its_schema_accepts(client):
    document = client.get("/v1/openapi.json").json()
    checked = 0
    # A 204 (the contract's `DELETE /v1/media/{id}`) answers no body: no example to show.
    bodiless = [(path, method) for path, methods in document["paths"].items() for method, operation in methods.items()
                if [status for status in operation["responses"] if status.startswith("2")] == ["204"]]
    assert bodiless == [("/v1/media/{id}", "delete")]
    for path, methods in document["paths"].items():
        for method, operation in ((m, o) for m, o in methods.items() if (path, m) not in bodiless):
            contents = [(status, response["content"]["application/json"])
                        for status, response in operation["responses"].items()
                        if status.startswith("2") and "content" in response]
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            contents += [("body", body)] if body else []
            assert contents, f"{method} {path}"
            for where, content in contents:
                assert "example" in content, f"{method} {path} {where}"
                schema = {**content["schema"], "components": document["components"]}
                errors = [e.message for e in Draft202012Validator(schema).iter_errors(content["example"])]
                assert errors == [], f"{method} {path} {where}: {errors}"
                checked += 1
    assert checked > 40


def test_the_document_is_valid_openapi_3_1(client):
    document = client.get("/v1/openapi.json").json()
    assert document["openapi"] == "3.1.0"
    errors = [error.message for error in OpenAPIV31SpecValidator(document).iter_errors()]
    assert errors == []


def test_bodies_queries_and_records_are_the_pydantic_models(client):
    document = client.get("/v1/openapi.json").json()
    schemas = document["components"]["schemas"]
    start = document["paths"]["/v1/inbox/conversations"]["post"]["requestBody"]["content"]["application/json"]
    assert start["schema"] == {"$ref": "#/components/schemas/StartConversation"}
    assert schemas["StartConversation"]["additionalProperties"] is False
    assert schemas["StartConversation"]["required"] == ["accountId"]
    # A field that may be left out but not sent as null shows no `default: null` its type refuses.
    assert "default" not in schemas["StartConversation"]["properties"]["contactHandle"]
    params = {p["name"]: p for p in document["paths"]["/v1/conversations"]["get"]["parameters"]}
    assert params["limit"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 100}
    assert params["platform"]["schema"]["enum"] == ["INSTAGRAM", "WHATSAPP", "TIKTOK", "TELEGRAM", "YOUTUBE", "X"]
    assert schemas["Conversation"]["properties"]["lastMessageAt"]["format"] == "date-time"
    assert not any("title" in prop for schema in schemas.values() for prop in schema.get("properties", {}).values())


def test_error_answers_have_the_documented_error_shape(client, tenant):
    refused = client.post("/v1/webhooks", headers={"Authorization": f"Bearer {tenant['apiKey']}"},
                          json={"url": "http://plain.example.com", "events": ["nope"]})
    missing = client.get("/v1/conversations/conv_nope", headers={"Authorization": f"Bearer {tenant['apiKey']}"})
    document = client.get("/v1/openapi.json").json()
    error = {**document["components"]["schemas"]["Error"], "components": document["components"]}
    for answer in (refused, missing):
        assert answer.status_code in (404, 422)
        assert [e.message for e in Draft202012Validator(error).iter_errors(answer.json())] == []
    assert refused.json()["error"]["details"][0]["field"] == "url"


# --- what a generated client needs of the document ---------------------------------------------


def test_an_upload_goes_through_with_what_the_document_says(client, tenant):
    from tests.conftest import bearer
    from tests.support.posts import JPEG

    document = client.get("/v1/openapi.json").json()
    put = document["paths"]["/v1/media/uploads/{token}"]["put"]
    body = put["requestBody"]
    assert body["required"] is True
    (media_type, content), = body["content"].items()
    assert content["schema"]["type"] == "string"
    assert content["schema"]["format"] == "binary"

    headers = bearer(tenant["apiKey"])
    started = client.post("/v1/media/uploads", headers=headers,
                          json={"filename": "a.jpg", "contentType": "image/jpeg", "size": len(JPEG)})
    assert started.status_code == 201, started.text
    token = started.json()["uploadUrl"].rsplit("/", 1)[1]
    empty = client.put(f"/v1/media/uploads/{token}", content=b"", headers={"Content-Type": media_type})
    assert empty.status_code == 400  # the body is required, as the document says
    sent = client.put(f"/v1/media/uploads/{token}", content=JPEG, headers={"Content-Type": media_type})
    assert sent.status_code == 200, sent.text
    done = client.post(f"/v1/media/uploads/{token}/complete", headers=headers)
    assert done.status_code == 200, done.text
    assert done.json()["contentType"] == "image/jpeg"


def test_the_idempotency_key_schema_says_what_the_server_accepts(client, tenant):
    import re

    from tests.conftest import bearer

    document = client.get("/v1/openapi.json").json()
    parameter = next(p for p in document["paths"]["/v1/profiles"]["post"]["parameters"]
                     if p["name"] == "Idempotency-Key")
    pattern = parameter["schema"]["pattern"]
    # (Control characters never get past the HTTP parser: 400 before the service.)
    keys = ["order-1", "a b", "é-ß", "x" * 255, "x" * 256, "soft\xadhyphen", "nbsp\xa0x", "¡!"]
    for number, key in enumerate(keys):
        answer = client.post("/v1/profiles", json={"name": f"P{number}"},
                             headers={**bearer(tenant["apiKey"]),
                                      "Idempotency-Key": key.encode("latin-1")})  # type: ignore[dict-item]
        valid = re.fullmatch(pattern, key) is not None and parameter["schema"]["minLength"] <= len(key) \
            <= parameter["schema"]["maxLength"]
        assert (answer.status_code == 422) is (not valid), (key, answer.status_code, answer.text)


def test_a_whole_number_written_with_a_fraction_is_an_integer(client, tenant):
    """JSON Schema counts 2003.0 as an integer; the service reads it as one. 2003.5 is not."""
    from tests.conftest import bearer

    headers = bearer(tenant["apiKey"])
    whole = client.post("/v1/media/uploads", headers=headers,
                        json={"filename": "a.jpg", "contentType": "image/jpeg", "size": 2003.0})
    assert whole.status_code == 201, whole.text
    fraction = client.post("/v1/media/uploads", headers=headers,
                           json={"filename": "a.jpg", "contentType": "image/jpeg", "size": 2003.5})
    assert fraction.status_code == 422
    assert fraction.json()["error"]["details"] == [{"field": "size", "message": "must be an integer"}]
