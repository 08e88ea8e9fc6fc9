"""What `/metrics` costs the `/v1` hot path: `GET /v1/workspaces` (authenticated, rate-limited)
served with metrics on (SWITCHBOARD_METRICS_TOKEN set: every request observed into the multiprocess
files) against the same service with them off, in one run.

Two `serve --no-worker` processes on the same data dir and database, loaded in turn by the same
client with the same concurrency, `--rounds` times alternated; each round's ratio (on / off) is
printed, and the median of them is the figure. Goal: ratio >= 0.95. Each server's CPU time per
request (from /proc) is printed beside its rate.

    python bench/metrics_cost.py [--seconds 6] [--connections 16] [--rounds 5] [--postgres]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys

from common import bootstrap, embedded_env, free_port, load, process, scale_out_env, temp_dir


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=6)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5, help="alternations of the two")
    parser.add_argument("--postgres", action="store_true")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        data_dir = temp_dir()
        if args.postgres:
            env = stack.enter_context(scale_out_env(data_dir, SWITCHBOARD_RATE_LIMIT_PER_MINUTE="100000000"))
        else:
            env = embedded_env(data_dir, SWITCHBOARD_RATE_LIMIT_PER_MINUTE="100000000")
        measure(env, args, "PostgreSQL + Redis" if args.postgres else "SQLite")


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
