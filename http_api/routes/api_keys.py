from http_api.declare import op
from http_api.routing import Call
from kit.pagination import Page
from kit.shapes import PageQuery, page_of
from service.identity import api_keys
from service.identity.api_key_shapes import ApiKey, ApiKeyCreated, ApiKeyRevoked, CreateApiKey


def create(call: Call) -> ApiKeyCreated:
    return api_keys.create(actor=call.actor, **dict(call.body))


def list_(call: Call) -> Page:
    return api_keys.list_keys(actor=call.actor, **dict(call.query))


def revoke(call: Call) -> ApiKeyRevoked:
    return api_keys.revoke(actor=call.actor, key_id=call.path["id"])


OPERATIONS = [
    op("POST", "/api-keys", create, summary="Create an API key (its secret is shown once)", tag="API keys",
       operation_id="createApiKey", ok=201, body=CreateApiKey, answer=ApiKeyCreated),
    op("GET", "/api-keys", list_, summary="List API keys (never their secrets)", tag="API keys",
       operation_id="listApiKeys", query=PageQuery, answer=page_of(ApiKey)),
    op("DELETE", "/api-keys/{id}", revoke, summary="Revoke an API key at once", tag="API keys",
       operation_id="revokeApiKey", answer=ApiKeyRevoked),
]
