"""The MCP resource server's token verifier: our own storage, checked on every request.

A token this process has checked is remembered while `oauth_token_epoch` reads as it did
(`service.identity.oauth_tokens.verify_access_token`), so a revoked connected app, a revoked token or a
member removed from the workspace is still refused from the next request on, in every process.
On SQLite the check is a read on the event loop in a snapshot that never waits (as /v1's reads);
when the grant's `lastUsedAt` is due and cannot be written at once, or on PostgreSQL, it runs on
a storage thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from concurrent.futures import ThreadPoolExecutor

from mcp.server.auth.provider import AccessToken

from service.identity import oauth_tokens
from service.kit import clock
from storage.db import WriteNeeded, connection, read_on_loop, reads_on_loop


@functools.cache
def storage_threads() -> ThreadPoolExecutor:
    """The few threads that do MCP's storage work (token checks and tools), off the event loop.

    A small plain executor, like /v1's: measured there, fewer runnable threads serve more
    requests than Starlette's large pool because they fight less over the GIL.
    """
    return ThreadPoolExecutor(max_workers=4, thread_name_prefix="mcp-storage")


def _verify(token: str, *, on_loop: bool = False) -> AccessToken | None:
    with connection(), (read_on_loop() if on_loop else contextlib.nullcontext()):
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
        claims={"workspace_id": info.workspace_id, "grant_id": info.grant_id, "token_id": info.token_id},
    )


class StorageTokenVerifier:
    async def verify_token(self, token: str) -> AccessToken | None:
        if reads_on_loop():
            with contextlib.suppress(WriteNeeded):
                return _verify(token, on_loop=True)
        return await asyncio.get_running_loop().run_in_executor(storage_threads(), _verify, token)
