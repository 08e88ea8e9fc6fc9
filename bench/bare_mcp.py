"""The floor the MCP SDK itself sets: a bare `MCPServer` with one trivial tool, stateless with JSON
answers, without auth, served by uvicorn exactly as `switchboard serve` serves (its loggers set as
`serve` sets them: the SDK's `mcp` logger at WARNING, else every stateless request logs a line)."""

import logging
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer

mcp = MCPServer(name="bare")


@mcp.tool()
def list_conversations() -> dict:
    """A listing with nothing in it."""
    return {"data": [], "pagination": {"page": 1, "limit": 20, "total": 0, "pages": 0}}


app = mcp.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, json_response=True)

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    logging.getLogger("mcp").setLevel(logging.WARNING)
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
