"""The MCP resource server's token verifier: our own storage, checked on every request.

A token this process has checked is remembered while `oauth_token_epoch` reads as it did
(`service.identity.oauth_tokens.verify_access_token`), so a revoked connected app, a revoked token or a
member removed from the workspace is still refused from the next request on, in every process.
On SQLite the check is a read on the event loop in a snapshot that never waits (as /v1's reads);
when the grant's `lastUsedAt` is due and cannot be written at once, or on PostgreSQL, it runs on
a storage thread.
"""

from __future__ import annotations

from mcp.server.auth.provider import AccessToken

from kit import clock
from service.identity import oauth_tokens
from storage import requests


def _verify(token: str) -> AccessToken | None:
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
        claims={"workspace_id": info.workspace_id, "grant_id": info.grant_id, "token_id": info.token_id,
                "role": info.role, "profile_ids": info.profile_ids},
    )


class StorageTokenVerifier:
    async def verify_token(self, token: str) -> AccessToken | None:
        # Its own writes (a grant's `lastUsedAt`) are short transactions inside the check.
        return await requests.run(lambda _on_loop: _verify(token), transaction="none", on_loop=True)
