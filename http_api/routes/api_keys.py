from http_api.declare import op
from http_api.routing import Call
from service import api_keys
from service.validation import page_of


def create(call: Call) -> dict:
    return api_keys.create(actor=call.actor, **call.body)


def list_(call: Call) -> dict:
    return api_keys.list_keys(actor=call.actor, **call.query).as_dict()


def revoke(call: Call) -> dict:
    return api_keys.revoke(actor=call.actor, key_id=call.path["id"])


OPERATIONS = [
    op("POST", "/api-keys", create, summary="Create an API key (its secret is shown once)", tag="API keys",
       operation_id="createApiKey", ok=201, body=api_keys.CREATE, answer=api_keys.CREATED),
    op("GET", "/api-keys", list_, summary="List API keys (never their secrets)", tag="API keys",
       operation_id="listApiKeys", paged=True, answer=page_of(api_keys.RECORD)),
    op("DELETE", "/api-keys/{id}", revoke, summary="Revoke an API key at once", tag="API keys",
       operation_id="revokeApiKey", answer=api_keys.REVOKED),
]
