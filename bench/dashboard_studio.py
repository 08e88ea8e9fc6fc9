"""The studio's calendar on a month of 10,000 posts, and the composer's check as a person types.

Seeds a fresh SQLite file with 10,000 scheduled posts spread over the current month (bulk inserts),
serves it with `switchboard serve` (sandbox on, embedded worker) in its own process, signs in as a
person and measures, from one keep-alive client, interleaved so all share the machine's weather:
the calendar's month page (`/dashboard/calendar`), the composer's check (`POST /dashboard/posts/check`
with a text for a Telegram and an X account: the counts and `POST /v1/posts`'s validation, nothing
saved), the baseline `GET /v1/posts?from=&to=` for the same month (its first page of 20) with a
key, and the bare `GET /v1/health`. Goals: the month's p95 under 150 ms; the check's under 50 ms.

    python bench/dashboard_studio.py [--requests 300] [--posts 10000]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import secrets
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path

import httpx2
from common import bootstrap, embedded_env, free_port, temp_dir
from conversations import percentile
from dashboard_inbox import _hidden, serving, sign_in


def seed_posts(db_path: Path, workspace_id: str, *, posts: int, first: dt.date) -> float:
    started = time.perf_counter()
    days = (first.replace(month=first.month % 12 + 1, year=first.year + first.month // 12) - first).days
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None).isoformat(sep=" ")
    rows = []
    for n in range(posts):
        at = dt.datetime.combine(first + dt.timedelta(days=n % days), dt.time(8 + n % 12, (n * 7) % 60))
        rows.append((f"post_bench{n:08d}{secrets.token_hex(4)}", workspace_id, f"Bench post {n}: spring collection",
                     "[]", "scheduled", at.isoformat(sep=" "), "UTC", None, "service", now, now))
    with sqlite3.connect(db_path) as db:
        db.executemany("INSERT INTO post (id, workspace_id, content, media_ids, status, scheduled_for, timezone, "
                       "published_at, source, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=300, help="requests per measured URL")
    parser.add_argument("--posts", type=int, default=10_000)
    args = parser.parse_args()

    data_dir = temp_dir()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = embedded_env(data_dir, SWITCHBOARD_RATE_LIMIT_PER_MINUTE="100000000", SWITCHBOARD_SANDBOX="1",
                       SWITCHBOARD_BASE_URL=base)
    tenant = bootstrap(env)
    first = dt.datetime.now(dt.UTC).date().replace(day=1)
    took = seed_posts(Path(data_dir) / "switchboard.db", tenant["workspaceId"], posts=args.posts, first=first)
    print(f"seeded {args.posts:,} posts over {first:%B %Y} in {took:.1f} s")
    serve = [sys.executable, "-m", "switchboard", "serve", "--port", str(port)]
    key = {"Authorization": f"Bearer {tenant['apiKey']}"}
    try:
        with serving(serve, f"{base}/v1/health", env), httpx2.Client(base_url=base, timeout=30) as person, \
                httpx2.Client(base_url=base, headers=key, timeout=30) as api:
            bot = api.post("/sandbox/telegram/accounts", json={}).json()["credentials"]
            telegram = api.post("/v1/connect/telegram", json={"profileId": tenant["profileId"], **bot}).json()
            sign_in(person)
            composer = person.get("/dashboard/posts/new")
            assert composer.status_code == 200, composer.status_code
            form = {"csrf_token": _hidden(composer.text, "csrf_token"), "workspaceId": tenant["workspaceId"],
                    "text": "Spring is here 🌸 https://shop.example.com/spring " * 3, "accounts": [telegram["id"]],
                    f"chatId-{telegram['id']}": "@bench_channel", "timezone": "UTC"}
            month = person.get("/dashboard/calendar")
            assert month.status_code == 200 and f"{args.posts} posts in view" in month.text, month.status_code
            checked = person.post("/dashboard/posts/check", data=form)
            assert checked.status_code == 200 and "Telegram" in checked.text, checked.text[:300]
            end = first.replace(month=first.month % 12 + 1, year=first.year + first.month // 12)
            window = f"/v1/posts?from={first.isoformat()}T00:00:00Z&to={end.isoformat()}T00:00:00Z"
            targets = {
                "GET /v1/health (bare route)": lambda: api.get("/v1/health"),
                "GET /v1/posts?from=&to= (baseline)": lambda: api.get(window),
                "calendar month page": lambda: person.get("/dashboard/calendar"),
                "composer check": lambda: person.post("/dashboard/posts/check", data=form),
            }
            for _ in range(20):  # warm-up
                for call in targets.values():
                    call().raise_for_status()
            timings: dict[str, list[float]] = {name: [] for name in targets}
            for _ in range(args.requests):
                for name, call in targets.items():
                    started = time.perf_counter()
                    call().raise_for_status()
                    timings[name].append((time.perf_counter() - started) * 1000)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)

    print(f"{'':38} {'median':>9} {'p95':>9}   ({args.requests} requests each, one keep-alive client)")
    for name, values in timings.items():
        print(f"{name:38} {statistics.median(values):7.2f}ms {percentile(values, 0.95):7.2f}ms")
    p95 = {name: percentile(values, 0.95) for name, values in timings.items()}
    print(f"calendar month / GET /v1/posts?from=&to= (p95): "
          f"{p95['calendar month page'] / p95['GET /v1/posts?from=&to= (baseline)']:.2f}")
    print(f"composer check / bare route (p95): {p95['composer check'] / p95['GET /v1/health (bare route)']:.2f}")
    print(f"calendar month with {args.posts:,} posts p95: {p95['calendar month page']:.1f} ms (goal < 150 ms)")
    print(f"composer check p95: {p95['composer check']:.1f} ms (goal < 50 ms)")
    print(json.dumps({"calendar_p95_ms": round(p95["calendar month page"], 1),
                      "check_p95_ms": round(p95["composer check"], 1)}))


if __name__ == "__main__":
    main()
