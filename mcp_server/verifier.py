"""The MCP resource server's token verifier: our own storage, checked on every request.

Two kinds of bearer are accepted at /mcp:

- an OAuth access token, issued after a person's consent (`service.identity.oauth_tokens`);
- an API key (`sk_...`), for an assistant that runs without a browser (a server-side agent, a
  scheduled job, CI): checked exactly as /v1 checks it (`service.identity.auth`), a `read` key
  carrying the `read` scope, a `read-write` key `read` and `write`, a `profiles` key its profiles.

A token this process has checked is remembered while `oauth_token_epoch` reads as it did
(`service.identity.oauth_tokens.verify_access_token`), so a revoked connected app, a revoked token or a
member removed from the workspace is still refused from the next request on, in every process; a key
likewise while `api_key_epoch` does. On SQLite the check is a read on the event loop in a snapshot
that never waits (as /v1's reads); when a `lastUsedAt` is due and cannot be written at once, or on
PostgreSQL, it runs on a storage thread.
"""

from __future__ import annotations

from mcp.server.auth.provider import AccessToken

from kit import clock, tokens
from kit.errors import Unauthorized
from service.identity import auth, oauth_tokens
from storage import requests

KEY_SCOPES = {"read": ["read"], "read-write": ["read", "write"]}


def _verify_oauth(token: str) -> AccessToken | None:
    info = oauth_tokens.verify_access_token(token)
    if info is None:
        return None
    return AccessToken(
        token=token,
        client_id=info.client_id,
        scopes=list(info.scopes),
        expires_at=int(clock.epoch_of(info.expires_at)),
        resource=info.resource,
        subject=info.user_id,
        claims={"kind": "oauth", "workspace_id": info.workspace_id, "grant_id": info.grant_id,
                "token_id": info.token_id, "role": info.role, "profile_ids": info.profile_ids},
    )


def _verify_key(token: str, resource: str) -> AccessToken | None:
    try:
        actor = auth.authenticate_api_key("Bearer " + token)
    except Unauthorized:
        return None
    return AccessToken(
        token=token,
        client_id=f"api-key:{actor.credential_id}",
        scopes=KEY_SCOPES.get(actor.permission, ["read"]),
        expires_at=None,  # checked on every request by `authenticate_api_key`, with revocation
        # A key is for this service as a whole, so it is good at the MCP endpoint too.
        resource=resource,
        claims={"kind": "key", "workspace_id": actor.workspace_id, "key_id": actor.credential_id,
                "permission": actor.permission,
                "profile_ids": None if actor.profile_ids is None else sorted(actor.profile_ids)},
    )


class StorageTokenVerifier:
    def __init__(self, resource: str) -> None:
        self.resource = resource

    async def verify_token(self, token: str) -> AccessToken | None:
        # Its own writes (a grant's or a key's `lastUsedAt`) are short transactions inside the check.
        if tokens.API_KEY_PATTERN.fullmatch(token):
            return await requests.run(lambda _on_loop: _verify_key(token, self.resource), transaction="none",
                                      on_loop=True)
        return await requests.run(lambda _on_loop: _verify_oauth(token), transaction="none", on_loop=True)
