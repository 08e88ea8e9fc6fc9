"""Authenticated `GET /v1/workspaces` against a bare Starlette JSON route, in the same run.

Both run as one uvicorn process each, served the same way, loaded by the same client with the same
concurrency; the two are measured in turn, twice, and the best of each is kept. Goal: ratio >= 0.5.

    python bench/workspaces.py [--seconds 8] [--connections 16] [--postgres]

`--postgres`: the scale-out setup (PostgreSQL + Redis) instead of the embedded one.
"""

from __future__ import annotations

import argparse
import contextlib
import sys

from common import bootstrap, embedded_env, free_port, load, process, scale_out_env, temp_dir


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--postgres", action="store_true")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        if args.postgres:
            env = stack.enter_context(scale_out_env(temp_dir(), SWITCHBOARD_RATE_LIMIT_PER_MINUTE="100000000"))
        else:
            env = embedded_env(temp_dir(), SWITCHBOARD_RATE_LIMIT_PER_MINUTE="100000000")
        measure(env, args, "PostgreSQL + Redis" if args.postgres else "SQLite")


def measure(env: dict[str, str], args: argparse.Namespace, setup: str) -> None:
    key = bootstrap(env)["apiKey"]
    ours, bare = free_port(), free_port()
    serve = [sys.executable, "-m", "mcp_server", "serve", "--no-worker", "--port", str(ours)]
    baseline = [sys.executable, "bench/bare_app.py", str(bare)]
    results: dict[str, list[float]] = {"switchboard": [], "bare": []}
    with process(serve, f"http://127.0.0.1:{ours}/v1/health", env), \
         process(baseline, f"http://127.0.0.1:{bare}/v1/workspaces"):
        auth = {"Authorization": f"Bearer {key}"}
        for _ in range(2):
            results["switchboard"].append(load(f"http://127.0.0.1:{ours}/v1/workspaces", headers=auth,
                                               seconds=args.seconds, connections=args.connections)["rps"])
            results["bare"].append(load(f"http://127.0.0.1:{bare}/v1/workspaces", headers={},
                                        seconds=args.seconds, connections=args.connections)["rps"])
    ours_rps, bare_rps = max(results["switchboard"]), max(results["bare"])
    print(f"GET /v1/workspaces (authenticated, rate-limited, {setup}): {ours_rps:8.0f} req/s")
    print(f"bare Starlette JSON route: {bare_rps:8.0f} req/s")
    print(f"ratio: {ours_rps / bare_rps:.2f} (goal >= 0.5)")


if __name__ == "__main__":
    main()
