"""Benchmark: importing 1,000 posts from a CSV file, against creating the same posts one by one.

    python bench/csv_import.py [--rows 1000] [--accounts 3]

A `switchboard serve` child (embedded SQLite) with the sandbox; `accounts` sandbox accounts (X,
Facebook, LinkedIn: platforms whose checks need nothing read live). In one run:

1. baseline: the same `rows` posts created one by one with `POST /v1/posts` (each scheduled on
   every account), over one keep-alive connection, as a client without the import would do it;
2. dry run: `POST /v1/posts/import?dryRun=true` with the whole file (every row checked, nothing
   saved). Goal: < 1 s;
3. import: the same file without the dry run (every row saved in one transaction). Goal: < 3 s.

Each import answers are checked (every row valid, every post made once); the ratios are the
baseline's time over each import's.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from pathlib import Path

import httpx2

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import bootstrap, embedded_env, free_port, process, temp_dir  # noqa: E402
from switchboard.sandbox_seed import connect  # noqa: E402

PLATFORMS = ("x", "facebook", "linkedin")


def rows(count: int, accounts: list[str]) -> list[tuple[str, str]]:
    """(content, scheduledFor) per post: a week of posts, from tomorrow, each at its own minute."""
    start = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).replace(second=0, microsecond=0)
    return [(f"Post {n}: our spring collection, day {n % 7 + 1} 🌸 https://example.com/p/{n}",
             (start + dt.timedelta(minutes=10 * n)).strftime("%Y-%m-%dT%H:%M:%SZ")) for n in range(count)]


def as_csv(posts: list[tuple[str, str]], accounts: list[str]) -> bytes:
    lines = ["content,accounts,scheduledFor"]
    lines += [f"\"{content}\",{' '.join(accounts)},{when}" for content, when in posts]
    return ("\n".join(lines) + "\n").encode()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--accounts", type=int, default=3, choices=range(1, 4))
    args = parser.parse_args()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = embedded_env(temp_dir(), SWITCHBOARD_SANDBOX="1", SWITCHBOARD_BASE_URL=url,
                       SWITCHBOARD_RATE_LIMIT_PER_MINUTE="1000000")
    tenant = bootstrap(env)
    with process([sys.executable, "-m", "switchboard", "serve", "--port", str(port)], url + "/v1/health", env=env), \
            httpx2.Client(base_url=url, timeout=120) as http:
        headers = {"Authorization": f"Bearer {tenant['apiKey']}"}
        accounts = [connect(http, api_key=tenant["apiKey"], profile_id=tenant["profileId"], platform=p)["id"]
                    for p in PLATFORMS[:args.accounts]]
        posts = rows(args.rows, accounts)
        body = as_csv(posts, accounts)

        started = time.perf_counter()
        for content, when in posts:
            made = http.post("/v1/posts", headers=headers, json={
                "content": content, "scheduledFor": when, "targets": [{"accountId": a} for a in accounts]})
            assert made.status_code == 201, made.text
        one_by_one = time.perf_counter() - started
        for post in http.get("/v1/posts", headers=headers, params={"limit": 100}).json()["data"]:
            http.delete(f"/v1/posts/{post['id']}", headers=headers)  # a lighter table for the imports

        csv_headers = {**headers, "Content-Type": "text/csv"}
        started = time.perf_counter()
        checked = http.post("/v1/posts/import", params={"dryRun": "true"}, headers=csv_headers, content=body)
        dry_run = time.perf_counter() - started
        assert checked.status_code == 200 and checked.json()["valid"] == args.rows, checked.text[:500]

        started = time.perf_counter()
        imported = http.post("/v1/posts/import", headers=csv_headers, content=body)
        real = time.perf_counter() - started
        assert imported.status_code == 201 and len(set(imported.json()["created"])) == args.rows, imported.text[:500]

        print(f"{args.rows} rows, {len(accounts)} account(s) a row ({args.rows * len(accounts)} targets), "
              f"a {len(body) / 1024:.0f} KiB file, embedded SQLite:")
        print(f"  baseline: {args.rows} x POST /v1/posts one by one      {one_by_one:6.2f} s")
        print(f"  dry run:  POST /v1/posts/import?dryRun=true      {dry_run:6.2f} s  (goal < 1 s; "
              f"{one_by_one / dry_run:.0f} x faster than the baseline)")
        print(f"  import:   POST /v1/posts/import                  {real:6.2f} s  (goal < 3 s; "
              f"{one_by_one / real:.0f} x faster than the baseline)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
