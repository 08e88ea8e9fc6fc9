"""The baseline: a bare Starlette JSON route, served by uvicorn exactly as `switchboard serve` serves."""

import sys

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


async def workspaces(request: Request) -> JSONResponse:
    return JSONResponse({"data": [{"id": "ws_1", "name": "My workspace", "role": "owner", "profiles": []}]})


app = Starlette(routes=[Route("/v1/workspaces", workspaces)])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
