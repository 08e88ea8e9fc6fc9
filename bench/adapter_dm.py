"""Concurrent DMs through the Telegram adapter vs a bare httpx2 loop, against the sandbox emulator.

    python bench/adapter_dm.py [--messages 2000] [--threads 32] [--rounds 2]

Starts the emulator (rate limits lifted) with uvicorn on loopback in a child process, then sends the
same number of `sendMessage` calls with the same concurrency, first through
`TelegramAdapter.send_dm` (payload building, error mapping, redaction guard, the shared client),
then as raw `httpx2.Client.post` calls with the same JSON. Prints messages/s for both and the ratio
(best round of each). Goal: ratio >= 0.7.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx2

from platforms.base import AccountContext
from platforms.http import build_client
from platforms.registry import PlatformConfig, build_adapters

CONTACT = "100200300"


def build_app(base: str):  # type: ignore[no-untyped-def]
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Mount, Route

    from platforms.emulator_kit.app import create_emulator_app

    config = PlatformConfig.for_sandbox(base, secret_key=b"bench")

    async def hooks(request):  # type: ignore[no-untyped-def]
        await request.body()
        return JSONResponse({"ok": True})

    emulator = create_emulator_app(config=config, resolve_account=lambda p, a: a, rate_limits=False)
    return Starlette(
        routes=[Route("/hooks/{platform}", hooks, methods=["POST"]), Mount("/sandbox", app=emulator)]
    )


def serve(port: int) -> None:
    import uvicorn

    uvicorn.run(
        build_app(f"http://127.0.0.1:{port}"),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_up(base: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            httpx2.post(f"{base}/sandbox/telegram/latency", json={"milliseconds": 0}, timeout=1)
            return
        except httpx2.TransportError:
            time.sleep(0.05)
    raise SystemExit("the emulator did not start")


def timed(threads: int, count: int, send) -> float:  # type: ignore[no-untyped-def]
    with ThreadPoolExecutor(threads) as pool:
        started = time.perf_counter()
        list(pool.map(send, range(count)))
        return count / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port)], env=os.environ.copy())
    try:
        wait_up(base, time.monotonic() + 30)
        client = build_client(max_connections=args.threads * 2, max_keepalive_connections=args.threads * 2)
        config = PlatformConfig.for_sandbox(base, secret_key=b"bench")
        adapter = build_adapters(config, client)["telegram"]
        made = client.post(f"{base}/sandbox/telegram/accounts", json={"username": "bench_bot"}).json()
        identity = adapter.connect_with_token(botToken=made["credentials"]["botToken"])
        account = AccountContext(identity.platform_account_id, identity.credentials)
        client.post(
            f"{base}/sandbox/telegram/inbound-message",
            json={"accountId": account.platform_account_id, "from": {"id": CONTACT}, "text": "/start"},
        )
        token = account.credentials["botToken"]
        url = f"{base}/sandbox/telegram/bot{token}/sendMessage"
        bare_client = httpx2.Client(
            timeout=15,
            limits=httpx2.Limits(
                max_connections=args.threads * 2, max_keepalive_connections=args.threads * 2
            ),
        )

        def via_adapter(i: int) -> None:
            adapter.send_dm(account, recipient=CONTACT, text=f"bench message {i}")

        def bare(i: int) -> None:
            response = bare_client.post(url, json={"chat_id": int(CONTACT), "text": f"bench message {i}"})
            response.raise_for_status()
            response.json()

        timed(args.threads, 200, via_adapter)  # warm-up: connections and code paths
        timed(args.threads, 200, bare)
        adapter_rates, bare_rates = [], []
        for _ in range(args.rounds):
            adapter_rates.append(timed(args.threads, args.messages, via_adapter))
            bare_rates.append(timed(args.threads, args.messages, bare))
        best_adapter, best_bare = max(adapter_rates), max(bare_rates)
        print(f"messages={args.messages} threads={args.threads} rounds={args.rounds}")
        print(
            f"adapter (TelegramAdapter.send_dm): {best_adapter:8.0f} messages/s",
            [round(r) for r in adapter_rates],
        )
        print(
            f"bare httpx2 loop:                  {best_bare:8.0f} messages/s",
            [round(r) for r in bare_rates],
        )
        print(f"ratio adapter/bare: {best_adapter / best_bare:.2f} (goal >= 0.70)")
    finally:
        server.terminate()
        server.wait(timeout=20)


if __name__ == "__main__":
    main()
