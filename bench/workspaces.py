"""Authenticated `GET /v1/workspaces` against a bare Starlette JSON route, in the same run.

Both run as one uvicorn process each, served the same way, loaded by the same client with the same
concurrency; the two are measured in turn, three times, and the best of each is kept.
Goal: ratio >= 0.5 on SQLite, >= 0.3 on PostgreSQL + Redis.
Each server's CPU time per request (from /proc) is printed beside its rate: the load generator
shares the machine's two cores, so the two ratios agreeing shows the rate is the request's own
cost and not the load generator's share.

    python bench/workspaces.py [--seconds 8] [--connections 16] [--rounds 3] [--postgres]

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
    parser.add_argument("--rounds", type=int, default=3, help="alternations of the two; each keeps its best")
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
    serve = [sys.executable, "-m", "switchboard", "serve", "--no-worker", "--port", str(ours)]
    baseline = [sys.executable, "bench/bare_app.py", str(bare)]
    results: dict[str, list[dict[str, float]]] = {"switchboard": [], "bare": []}
    with process(serve, f"http://127.0.0.1:{ours}/v1/health", env) as ours_server, \
         process(baseline, f"http://127.0.0.1:{bare}/v1/workspaces") as bare_server:
        auth = {"Authorization": f"Bearer {key}"}
        for _ in range(args.rounds):
            results["switchboard"].append(load(f"http://127.0.0.1:{ours}/v1/workspaces", headers=auth,
                                               seconds=args.seconds, connections=args.connections,
                                               server=ours_server))
            results["bare"].append(load(f"http://127.0.0.1:{bare}/v1/workspaces", headers={},
                                        seconds=args.seconds, connections=args.connections, server=bare_server))
    ours_rps, bare_rps = (max(run["rps"] for run in results[name]) for name in ("switchboard", "bare"))
    ours_cpu, bare_cpu = (min(run["cpu_us"] for run in results[name]) for name in ("switchboard", "bare"))
    print(f"GET /v1/workspaces (authenticated, rate-limited, {setup}): {ours_rps:8.0f} req/s, "
          f"{ours_cpu:4.0f} us of server CPU a request")
    print(f"bare Starlette JSON route: {bare_rps:8.0f} req/s, {bare_cpu:4.0f} us of server CPU a request")
    goal = ">= 0.3" if setup.startswith("PostgreSQL") else ">= 0.5"
    print(f"ratio: {ours_rps / bare_rps:.2f} (goal {goal}); by server CPU a request: {bare_cpu / ours_cpu:.2f}")
    # Each round's pair, taken one after the other: the machine's speed drifts between rounds.
    pairs = [f"{mine['rps'] / theirs['rps']:.2f}"
             for mine, theirs in zip(results["switchboard"], results["bare"], strict=True)]
    print(f"each round's ratio: {', '.join(pairs)}")


if __name__ == "__main__":
    main()
