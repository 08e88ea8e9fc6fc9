"""MCP `tools/call` per second against baselines measured in the same run: the same listing
through /v1 with a key (goal >= 0.5), and the floor the SDK itself sets, a bare `MCPServer` with one
trivial `async` tool served the same way (bench/bare_mcp.py; goal >= 0.8), also behind the SDK's
own bearer-token layers with a verifier that accepts one fixed token (what the SDK's auth costs,
apart from ours); and the time of the whole OAuth flow with the official MCP client.

By default `list_conversations` against `GET /v1/conversations` (any listing tool and its path
can be given).

    python bench/mcp_tools.py [--seconds 8] [--connections 16] [--tool list_conversations] [--path /v1/conversations]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import httpx2
from bare_mcp import TOKEN as FLOOR_TOKEN
from common import ROOT, bootstrap, embedded_env, free_port, load, process, process_cpu_seconds, temp_dir

sys.path.insert(0, str(ROOT))

from tests.support.oauth_flow import Consent, MemoryStorage, provider, sign_in


def wrk_post(url: str, *, body: dict, headers: dict[str, str], seconds: float, connections: int,
             server: subprocess.Popen[bytes] | None = None) -> dict[str, float]:
    """Requests per second of one POST, with wrk (a Lua script sets method, body and headers); with
    `server`, also the CPU time that process spent per request (`cpu_us`)."""
    if not shutil.which("wrk"):
        raise SystemExit("this benchmark needs wrk")
    lines = ['wrk.method = "POST"', f"wrk.body = {json.dumps(json.dumps(body))}"]
    lines += [f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in headers.items()]
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write("\n".join(lines) + "\n")
    before = process_cpu_seconds(server.pid) if server else 0.0
    try:
        out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{int(seconds)}s", "-s", script.name, url],
                             capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(script.name)
    if re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out):
        raise RuntimeError("some answers were not 2xx: the benchmark is not measuring success")
    result = {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))}  # type: ignore[union-attr]
    if server:
        requests = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
        result["cpu_us"] = (process_cpu_seconds(server.pid) - before) / requests * 1e6
    return result


async def oauth_flow(base: str, email: str, password: str, tool: str) -> tuple[float, str]:
    """Seconds from the first (401) request to the first tool result, and the access token."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(base_url=base, timeout=30) as browser:
        await sign_in(browser, email, password)  # the person is already signed in to the dashboard
        storage = MemoryStorage()
        started = time.perf_counter()
        auth = provider(base, browser, Consent(), storage=storage, client_name="bench")
        async with (
            httpx2.AsyncClient(auth=auth, timeout=30) as http,
            Client(streamable_http_client(base + "/mcp", http_client=http)) as client,
        ):
            result = await client.call_tool(tool, {})
            elapsed = time.perf_counter() - started
            assert not result.is_error, result
        assert storage.tokens is not None
        return elapsed, storage.tokens.access_token


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--tool", default="list_conversations")
    parser.add_argument("--path", default="/v1/conversations")
    parser.add_argument("--protocol", default="2025-06-18", help="MCP-Protocol-Version of the load")
    args = parser.parse_args()

    env = embedded_env(temp_dir(), SWITCHBOARD_RATE_LIMIT_PER_MINUTE="100000000")
    boot = bootstrap(env)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env["SWITCHBOARD_BASE_URL"] = base
    serve = [sys.executable, "-m", "switchboard", "serve", "--no-worker", "--port", str(port)]
    floor_port, auth_floor_port = free_port(), free_port()
    floor = [sys.executable, "bench/bare_mcp.py", str(floor_port)]
    auth_floor = [sys.executable, "bench/bare_mcp.py", str(auth_floor_port), "--auth"]
    with process(serve, f"{base}/v1/health", env) as ours, \
         process(floor, f"http://127.0.0.1:{floor_port}/") as floor_server, \
         process(auth_floor, f"http://127.0.0.1:{auth_floor_port}/") as auth_floor_server:
        flows = [asyncio.run(oauth_flow(base, "bench@example.com", "bench-password", args.tool)) for _ in range(3)]
        token = flows[-1][1]
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": args.tool, "arguments": {}}}
        mcp_headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                       "Authorization": f"Bearer {token}", "MCP-Protocol-Version": args.protocol}
        check = httpx2.post(base + "/mcp", json=call, headers=mcp_headers).json()
        assert not check["result"].get("isError"), check
        bare_call = {**call, "params": {"name": "list_conversations", "arguments": {}}}
        bare_headers = {k: v for k, v in mcp_headers.items() if k != "Authorization"}
        results: dict[str, list[dict[str, float]]] = {"mcp": [], "v1": [], "floor": [], "auth_floor": []}
        for _ in range(2):
            results["mcp"].append(wrk_post(base + "/mcp", body=call, headers=mcp_headers,
                                           seconds=args.seconds, connections=args.connections, server=ours))
            results["floor"].append(wrk_post(f"http://127.0.0.1:{floor_port}/mcp", body=bare_call,
                                             headers=bare_headers, seconds=args.seconds,
                                             connections=args.connections, server=floor_server))
            results["auth_floor"].append(wrk_post(
                f"http://127.0.0.1:{auth_floor_port}/mcp", body=bare_call,
                headers={**bare_headers, "Authorization": f"Bearer {FLOOR_TOKEN}"}, seconds=args.seconds,
                connections=args.connections, server=auth_floor_server))
            results["v1"].append(load(base + args.path, headers={"Authorization": f"Bearer {boot['apiKey']}"},
                                      seconds=args.seconds, connections=args.connections, server=ours))
    mcp_rps, v1_rps, floor_rps, auth_floor_rps = (
        max(run["rps"] for run in results[name]) for name in ("mcp", "v1", "floor", "auth_floor"))
    mcp_cpu, v1_cpu, floor_cpu, auth_floor_cpu = (
        min(run["cpu_us"] for run in results[name]) for name in ("mcp", "v1", "floor", "auth_floor"))
    print(f"MCP tools/call {args.tool} (OAuth token, stateless, SQLite): {mcp_rps:8.0f} calls/s")
    print(f"GET {args.path} (API key):{' ' * max(1, 33 - len(args.path))}{v1_rps:8.0f} req/s")
    print(f"bare MCPServer, one trivial tool (the SDK's floor):  {floor_rps:8.0f} calls/s")
    print(f"the same behind the SDK's bearer-token layers:       {auth_floor_rps:8.0f} calls/s")
    print(f"ratio to /v1: {mcp_rps / v1_rps:.2f} (goal >= 0.5); to the SDK's floor: {mcp_rps / floor_rps:.2f} "
          f"(goal >= 0.8); the floor itself is {floor_rps / v1_rps:.2f} of /v1")
    print(f"to the floor with the SDK's auth: {mcp_rps / auth_floor_rps:.2f}; that floor is "
          f"{auth_floor_rps / floor_rps:.2f} of the bare one")
    # The same by each server's CPU time a call (from /proc), which moves less with the load
    # generator's share of the machine than the rates do.
    print(f"server CPU a call: MCP {mcp_cpu:.0f} us, /v1 {v1_cpu:.0f} us, floor {floor_cpu:.0f} us, "
          f"floor with auth {auth_floor_cpu:.0f} us; ratios by CPU: to /v1 {v1_cpu / mcp_cpu:.2f}, "
          f"to the floor {floor_cpu / mcp_cpu:.2f}, to the floor with auth {auth_floor_cpu / mcp_cpu:.2f}")
    print("whole OAuth flow (401 -> discovery -> registration -> consent -> token -> first tool result): "
          + ", ".join(f"{seconds * 1000:.0f} ms" for seconds, _ in flows))


if __name__ == "__main__":
    main()
