"""`GET /v1/conversations` on 100,000 conversations and 1,000,000 messages, against `GET /v1/health`.

Seeds a fresh SQLite file with bulk inserts (one workspace, ten accounts), serves it with
`switchboard serve --no-worker` in its own process and measures, from one keep-alive client,
page 1 and page 1000 (default limit 20: OFFSET 19,980) and, as a harder case, the last page at
limit 100 (OFFSET 99,900), interleaved with the health check so all share the machine's weather.
Goals: page 1000 no more than 3x page 1, and p99 under 25 ms.

    python bench/conversations.py [--requests 1500] [--conversations 100000] [--messages-each 10]
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path

import httpx2
from common import bootstrap, embedded_env, free_port, process, temp_dir

PLATFORMS = ("instagram", "whatsapp", "telegram", "facebook", "x", "tiktok", "youtube", "instagram", "whatsapp",
             "telegram")


def seed(db_path: Path, *, workspace_id: str, profile_id: str, conversations: int, messages_each: int) -> float:
    """Bulk-insert the accounts, conversations and messages; returns the seconds it took."""
    started = time.perf_counter()
    rng = random.Random(7)
    connection = sqlite3.connect(db_path)
    connection.execute("PRAGMA synchronous = OFF")
    now = dt.datetime(2026, 6, 1)
    with connection:
        accounts = []
        for n, platform in enumerate(PLATFORMS):
            account_id = f"acc_bench{n:021d}"
            accounts.append((account_id, platform))
            connection.execute(
                "INSERT INTO account (id, workspace_id, profile_id, platform, platform_account_id, username,"
                " display_name, status, needs_reauth, credentials, connected_at, disconnected_at, created_at,"
                " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'connected', 0, NULL, ?, NULL, ?, ?)",
                (account_id, workspace_id, profile_id, platform, f"bench-{n}", f"brand{n}", f"Brand {n}",
                 str(now), str(now), str(now)),
            )
        batch_c: list[tuple[object, ...]] = []
        batch_m: list[tuple[object, ...]] = []
        for i in range(conversations):
            account_id, platform = accounts[i % len(accounts)]
            conversation_id = f"conv_{i:026d}"
            last = now - dt.timedelta(seconds=rng.randrange(90 * 24 * 3600))
            handle = f"+1555{i:07d}" if platform == "whatsapp" else f"contact{i}"
            batch_c.append((conversation_id, workspace_id, profile_id, account_id, platform, handle, f"Contact {i}",
                            f"ext-{i}", str(last), str(last), str(last), rng.randrange(4), "open",
                            str(last - dt.timedelta(days=3)), str(last)))
            for j in range(messages_each):
                at = last - dt.timedelta(minutes=messages_each - j)
                inbound = j % 2 == 0
                batch_m.append((f"msg_{i:020d}{j:06d}", conversation_id, "inbound" if inbound else "outbound",
                                f"message {j} of conversation {i}", "received" if inbound else "sent",
                                f"pm-{i}-{j}", "inbox", str(at), str(at)))
            if len(batch_m) >= 200_000 or i == conversations - 1:
                connection.executemany(
                    "INSERT INTO conversation (id, workspace_id, profile_id, account_id, platform, contact_handle,"
                    " contact_name, external_conversation_id, last_message_at, last_inbound_at, activity_at,"
                    " unread_count, status, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    batch_c,
                )
                connection.executemany(
                    "INSERT INTO message (id, conversation_id, direction, text, status, platform_message_id,"
                    " source, attempts, created_at, updated_at) VALUES (?,?,?,?,?,?,?,0,?,?)",
                    batch_m,
                )
                batch_c, batch_m = [], []
        # What the service keeps in the same transaction as each new conversation.
        connection.execute(
            "INSERT INTO conversation_count (account_id, workspace_id, profile_id, platform, total)"
            " SELECT account_id, workspace_id, profile_id, platform, COUNT(*) FROM conversation GROUP BY account_id"
        )
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    return time.perf_counter() - started


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def measure(
    serve: list[str], base: str, env: dict[str, str], key: str, targets: dict[str, tuple[str, dict[str, int]]],
    *, requests: int, expected_total: int,
) -> dict[str, list[float]]:
    """Milliseconds of each request, per target, measured in turn (interleaved)."""
    timings: dict[str, list[float]] = {name: [] for name in targets}
    with process(serve, f"{base}/v1/health", env), \
            httpx2.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}) as http:
        first = http.get("/v1/conversations", params={"page": 1000}).json()
        assert first["pagination"]["total"] == expected_total, first["pagination"]
        assert len(first["data"]) == 20
        for _ in range(50):  # warm-up: connections, caches, the page cache of SQLite
            for path, params in targets.values():
                http.get(path, params=params).raise_for_status()
        for _ in range(requests):
            for name, (path, params) in targets.items():  # interleaved: all see the same machine
                started = time.perf_counter()
                http.get(path, params=params).raise_for_status()
                timings[name].append((time.perf_counter() - started) * 1000)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=1500, help="requests per measured URL")
    parser.add_argument("--conversations", type=int, default=100_000)
    parser.add_argument("--messages-each", type=int, default=10)
    parser.add_argument("--keep", action="store_true", help="keep the seeded data directory (and print it)")
    args = parser.parse_args()

    data_dir = temp_dir()
    env = embedded_env(data_dir, SWITCHBOARD_RATE_LIMIT_PER_MINUTE="100000000")
    tenant = bootstrap(env)  # creates and migrates the database
    took = seed(Path(data_dir) / "switchboard.db", workspace_id=tenant["workspaceId"],
                profile_id=tenant["profileId"], conversations=args.conversations, messages_each=args.messages_each)
    print(f"seeded {args.conversations:,} conversations and {args.conversations * args.messages_each:,} messages "
          f"in {took:.1f} s")

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    serve = [sys.executable, "-m", "switchboard", "serve", "--no-worker", "--port", str(port)]
    targets = {
        "GET /v1/health": ("/v1/health", {}),
        "page 1 (limit 20)": ("/v1/conversations", {"page": 1}),
        "page 1000 (limit 20)": ("/v1/conversations", {"page": 1000}),
        "page 1000 (limit 100, last)": ("/v1/conversations", {"page": 1000, "limit": 100}),
    }
    try:
        timings = measure(serve, base, env, tenant["apiKey"], targets, requests=args.requests,
                          expected_total=args.conversations)
    finally:
        if args.keep:
            print(f"data kept in {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)  # ~450 MB of SQLite

    print(f"{'':30} {'median':>9} {'p99':>9}   ({args.requests} requests each, one keep-alive client)")
    for name, values in timings.items():
        print(f"{name:30} {statistics.median(values):7.2f}ms {percentile(values, 0.99):7.2f}ms")
    page1 = timings["page 1 (limit 20)"]
    page1000 = timings["page 1000 (limit 20)"]
    health = timings["GET /v1/health"]
    print(f"page 1000 / page 1 (median): {statistics.median(page1000) / statistics.median(page1):.2f} (goal <= 3)")
    print(f"page 1 / health (median):    {statistics.median(page1) / statistics.median(health):.2f}")
    worst = max(percentile(v, 0.99) for k, v in timings.items() if "limit 20" in k)
    print(f"worst p99 of page 1 and page 1000: {worst:.2f} ms (goal < 25 ms)")


if __name__ == "__main__":
    main()
