"""The floor the MCP SDK itself sets: a bare `MCPServer` with one trivial tool, stateless with JSON
answers, served by uvicorn exactly as `switchboard serve` serves (its loggers set as `serve` sets
them: the SDK's `mcp` logger at WARNING, else every stateless request logs a line).

The tool is `async`, as every Switchboard tool is: the SDK runs a plain function on a worker
thread, a hop per call that our tools do not make and that would lower the floor by a sixth.

    python bench/bare_mcp.py PORT [--auth]

`--auth`: behind the SDK's own bearer-token layers (`token_verifier` + `AuthSettings`, as
Switchboard's server is), with a verifier that accepts one fixed token from memory; the difference
between the two floors is what the SDK's auth layers cost, and what is left between this one and
Switchboard is our own token check and tool.
"""

import logging
import sys

import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer

TOKEN = "floor-token"  # the one bearer the loopback floor accepts


class FixedVerifier:
    def __init__(self, resource: str) -> None:
        self.resource = resource

    async def verify_token(self, token: str) -> AccessToken | None:
        if token != TOKEN:
            return None
        return AccessToken(token=token, client_id="bench", scopes=["read"], expires_at=None, subject="bench",
                           resource=self.resource)


def build(port: int, auth: bool) -> MCPServer:
    if not auth:
        return MCPServer(name="bare")
    base = f"http://127.0.0.1:{port}"
    return MCPServer(name="bare", token_verifier=FixedVerifier(base + "/mcp"),
                     auth=AuthSettings(issuer_url=base, resource_server_url=base + "/mcp",
                                       validate_token_resource=True))


def main() -> None:
    port, auth = int(sys.argv[1]), "--auth" in sys.argv[2:]
    mcp = build(port, auth)

    @mcp.tool()
    async def list_conversations() -> dict:
        """A listing with nothing in it."""
        return {"data": [], "pagination": {"page": 1, "limit": 20, "total": 0, "pages": 0}}

    app = mcp.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, json_response=True)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    logging.getLogger("mcp").setLevel(logging.WARNING)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
