"""What `/metrics` costs the `/v1` hot path: `GET /v1/workspaces` (authenticated, rate-limited)
with metrics on (SWITCHBOARD_METRICS_TOKEN set: every request observed for the multiprocess files)
against the same service with them off, in one run. Goal: ratio >= 0.95.

Two measures, each alternated `--rounds` times, each round's ratio printed and their median the
figure:

- in one process (the default, and the figure): the service's ASGI app called directly, batches of
  requests with metrics on and off in turn, by the process's own CPU time a request. No sockets and
  no load generator, whose share of a busy two-core machine moves a rate far more than the few
  microseconds measured here.
- over HTTP (`--http`): two `serve --no-worker` processes on the same data dir and database, one
  with the token, loaded in turn by the same client; rate and server CPU a request.

    python bench/metrics_cost.py [--rounds 15] [--requests 3000] [--http [--seconds 4]] [--postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import time
from typing import Any

from common import ROOT, bootstrap, embedded_env, free_port, load, process, scale_out_env, temp_dir


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=6)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=15, help="alternations of the two")
    parser.add_argument("--requests", type=int, default=3000, help="requests a batch (in one process)")
    parser.add_argument("--http", action="store_true", help="over HTTP, two server processes")
    parser.add_argument("--postgres", action="store_true")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        data_dir = temp_dir()
        if args.postgres:
            env = stack.enter_context(scale_out_env(data_dir, SWITCHBOARD_RATE_LIMIT_PER_MINUTE="100000000"))
        else:
            env = embedded_env(data_dir, SWITCHBOARD_RATE_LIMIT_PER_MINUTE="100000000")
        setup = "PostgreSQL + Redis" if args.postgres else "SQLite"
        if args.http:
            measure(env, args, setup)
        else:
            measure_in_process(env, args, setup)


def measure_in_process(env: dict[str, str], args: argparse.Namespace, setup: str) -> None:
    key = bootstrap(env)["apiKey"]
    os.environ.update({k: v for k, v in env.items() if k.startswith("SWITCHBOARD_")},
                      SWITCHBOARD_METRICS_TOKEN="bench-metrics")
    sys.path.insert(0, str(ROOT))
    from kit import metrics
    from kit.settings import Settings
    from switchboard.app import create_app

    app = create_app(Settings.from_env(), worker=False)
    scope: dict[str, Any] = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
        "path": "/v1/workspaces", "raw_path": b"/v1/workspaces", "root_path": "", "query_string": b"",
        "headers": [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {key}".encode())],
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
    }
    statuses: list[int] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    async def batch(on: bool) -> float:
        metrics._on = on  # the flag every recording function tests; the files stay configured
        started = time.process_time()
        for _ in range(args.requests):
            await app(dict(scope), receive, send)
        return (time.process_time() - started) / args.requests * 1e6

    async def run() -> dict[str, list[float]]:
        results: dict[str, list[float]] = {"on": [], "off": []}
        async with app.router.lifespan_context(app):
            assert metrics.enabled(), "the token did not turn metrics on"
            await batch(True)  # warm both paths before measuring
            await batch(False)
            for turn in range(args.rounds):
                for on in ((True, False) if turn % 2 == 0 else (False, True)):
                    results["on" if on else "off"].append(await batch(on))
        return results

    results = asyncio.run(run())
    assert set(statuses) == {200}, f"answers other than 200: {set(statuses)}"
    on, off = statistics.median(results["on"]), statistics.median(results["off"])
    ratios = [b / a for a, b in zip(results["on"], results["off"], strict=True)]
    print(f"GET /v1/workspaces in one process ({setup}), CPU a request: metrics on {on:.1f} us, off {off:.1f} us "
          f"({on - off:+.1f} us)")
    print(f"ratio on/off (requests a CPU second): {statistics.median(ratios):.3f} (goal >= 0.95)")
    print(f"each round's ratio: {', '.join(f'{r:.3f}' for r in ratios)}")


def measure(env: dict[str, str], args: argparse.Namespace, setup: str) -> None:
    key = bootstrap(env)["apiKey"]
    on_port, off_port = free_port(), free_port()
    on_env = {**env, "SWITCHBOARD_METRICS_TOKEN": "bench-metrics"}

    def serve(port: int) -> list[str]:
        return [sys.executable, "-m", "switchboard", "serve", "--no-worker", "--port", str(port)]

    auth = {"Authorization": f"Bearer {key}"}
    results: dict[str, list[dict[str, float]]] = {"on": [], "off": []}
    with process(serve(on_port), f"http://127.0.0.1:{on_port}/v1/health", on_env) as on_server, \
         process(serve(off_port), f"http://127.0.0.1:{off_port}/v1/health", env) as off_server:
        for turn in range(args.rounds):
            # Which goes first swaps each round: neither always meets the machine warmer.
            order = [("on", on_port, on_server), ("off", off_port, off_server)]
            for name, port, server in order if turn % 2 == 0 else reversed(order):
                results[name].append(load(f"http://127.0.0.1:{port}/v1/workspaces", headers=auth,
                                          seconds=args.seconds, connections=args.connections, server=server))
    ratios = [on["rps"] / off["rps"] for on, off in zip(results["on"], results["off"], strict=True)]
    cpu = [off["cpu_us"] / on["cpu_us"] for on, off in zip(results["on"], results["off"], strict=True)]
    for name in ("on", "off"):
        rps = statistics.median(run["rps"] for run in results[name])
        us = statistics.median(run["cpu_us"] for run in results[name])
        print(f"GET /v1/workspaces, metrics {name:3} ({setup}): {rps:8.0f} req/s, {us:4.0f} us of server CPU a request")
    print(f"ratio on/off: {statistics.median(ratios):.3f} (goal >= 0.95); by server CPU a request: "
          f"{statistics.median(cpu):.3f}")
    print(f"each round's ratio: {', '.join(f'{r:.3f}' for r in ratios)}")


if __name__ == "__main__":
    main()
