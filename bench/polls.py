"""Inbox polls of 1,000 YouTube channels on one worker, against a bare loop of the same HTTP calls.

    python bench/polls.py [--accounts 1000] [--rounds 3] [--interval 15] [--intervals 3] [--scale-out]

In one run, against the emulator in its own process (`switchboard sandbox serve`), on SQLite files
(or, with `--scale-out`, a PostgreSQL database made for the run and Redis):

1. cost per poll: every channel's poll through the engine (the sweep arms the chores, then one
   thread runs each: claim, quota count, `commentThreads.list`, the page's events, cursor and
   settling in one transaction), against one httpx2 client making the same `commentThreads.list`
   calls one after another. The two alternate, `--rounds` times each, and each keeps its best.
   Goal: bare / engine >= 0.5 (the engine at most doubles a poll's cost).
2. punctuality: the real worker (the embedded queue consumer with one thread, and the scheduler's
   tick) polls every channel every `--interval` seconds for `--intervals` intervals; the gaps
   between each channel's polls are sampled. Goal: no poll later than one interval after it was due.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
import uuid
from dataclasses import replace
from pathlib import Path

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import embedded_env, free_port, process, scale_out_env, temp_dir

from kit.settings import Settings
from service.accounts import ops as accounts
from service.engine import core as engine
from service.identity import bootstrap
from service.inbox import polling
from service.inbox import work as inbox_work
from storage.db import connection, db
from storage.models import AccountChore, InboxPoll
from switchboard.app import prepare, start_worker, stop_worker


def make_channels(sandbox: str, count: int, workspace_id: str, profile_id: str) -> list[tuple[str, str, str]]:
    """`count` sandbox channels connected to the profile: (account id, channel id, access token)."""
    made = []
    with httpx2.Client(base_url=sandbox, timeout=30) as http:
        for n in range(count):
            answer = http.post("/sandbox/youtube/accounts", json={"username": f"@bench{n}"})
            answer.raise_for_status()
            body = answer.json()
            with connection(), db.atomic():
                account = accounts.connect(workspace_id=workspace_id, profile_id=profile_id, platform="youtube",
                                           platform_account_id=body["platformAccountId"], username=body["username"],
                                           display_name=body["displayName"], credentials=body["credentials"])
            made.append((account.id, body["platformAccountId"], body["credentials"]["accessToken"]))
    return made


def engine_round(channels: list[tuple[str, str, str]]) -> float:
    """Every channel polled once through the engine, in this one thread; seconds taken."""
    began = time.perf_counter()
    armed: list[str] = []
    while len(armed) < len(channels):
        with connection(), db.atomic():
            swept = engine.sweep(inbox_work.POLL_WORK)
        if not swept.nudged:
            break
        armed += swept.nudged
    for chore_id in armed:
        assert polling.run(chore_id) == "read"
    return time.perf_counter() - began


def bare_round(sandbox: str, channels: list[tuple[str, str, str]]) -> float:
    """The same `commentThreads.list` calls, one after another, on one keep-alive client."""
    url = f"{sandbox}/sandbox/youtube/youtube/v3/commentThreads"
    began = time.perf_counter()
    with httpx2.Client(timeout=30) as http:
        for _, channel, token in channels:
            http.get(url, params={"part": "snippet,replies", "allThreadsRelatedToChannelId": channel,
                                  "order": "time", "maxResults": "100", "textFormat": "plainText"},
                     headers={"Authorization": f"Bearer {token}"}).raise_for_status()
    return time.perf_counter() - began


def punctuality(settings: Settings, channels: list[tuple[str, str, str]], interval: float, intervals: int
                ) -> tuple[float, int]:
    """Run the worker for `intervals` intervals; the largest lateness of a poll (seconds past when it
    was due: the gap since the channel's previous poll, less the interval) and the polls seen."""
    ids = [account_id for account_id, _, _ in channels]
    with connection(), db.atomic():  # every chore due now, as at start-up
        AccountChore.update(status="idle", next_attempt_at=None).where(AccountChore.chore == "inbox_poll").execute()
    seen: dict[str, list[float]] = {account_id: [] for account_id in ids}
    last: dict[str, object] = {}
    runtime = start_worker(settings, embedded=True, workers=1)
    began = time.monotonic()
    try:
        while time.monotonic() - began < interval * intervals:
            with connection():
                rows = list(InboxPoll.select(InboxPoll.account, InboxPoll.polled_at).where(InboxPoll.account.in_(ids)))
            now = time.monotonic() - began
            for row in rows:
                if row.polled_at is not None and last.get(row.account_id) != row.polled_at:
                    last[row.account_id] = row.polled_at
                    seen[row.account_id].append(now)
            time.sleep(0.2)
    finally:
        stop_worker(runtime)
    lateness = 0.0
    polls = 0
    for times in seen.values():
        polls += len(times)
        for before, after in itertools.pairwise(times):
            lateness = max(lateness, after - before - interval)
    return lateness, polls


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--accounts", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--interval", type=float, default=15.0)
    parser.add_argument("--intervals", type=int, default=3)
    parser.add_argument("--scale-out", action="store_true",
                        help="PostgreSQL (a database made for the run, BENCH_POSTGRES) and Redis (BENCH_REDIS)")
    args = parser.parse_args()
    data = temp_dir()
    port = free_port()
    sandbox = f"http://127.0.0.1:{port}"
    extra = dict(SWITCHBOARD_BASE_URL="http://127.0.0.1:9", SWITCHBOARD_SANDBOX="1", SWITCHBOARD_SANDBOX_URL=sandbox,
                 SWITCHBOARD_YOUTUBE_DAILY_QUOTA="100000000")
    if not args.scale_out:
        return run(args, embedded_env(data, **extra), sandbox, port)
    with scale_out_env(data, **extra) as env:
        try:
            return run(args, env, sandbox, port)
        finally:
            if not db.is_closed():
                db.close()
            if hasattr(db.obj, "close_all"):
                db.obj.close_all()


def run(args: argparse.Namespace, env: dict[str, str], sandbox: str, port: int) -> int:
    settings = Settings.from_env(env)
    prepare(settings)  # the schema first: the sandbox process reads account ids from it
    with process([sys.executable, "-m", "switchboard", "sandbox", "serve", "--port", str(port)],
                 f"{sandbox}/sandbox/", env=env):
        with connection(), db.atomic():
            made = bootstrap.bootstrap(email=f"bench-{uuid.uuid4().hex[:6]}@example.com", password="bench-password")
        channels = make_channels(sandbox, args.accounts, made["workspaceId"], made["profileId"])
        storage = "PostgreSQL" if settings.database_url.startswith("postgres") else "SQLite"
        print(f"{len(channels)} YouTube channels, {storage}, emulator in its own process")

        prepare(replace(settings, inbox_poll_seconds=0.001))  # every chore due again at once, for the rounds
        engine_round(channels[:50]), bare_round(sandbox, channels[:50])  # warm both
        engine_times, bare_times = [], []
        for _ in range(args.rounds):
            engine_times.append(engine_round(channels))
            bare_times.append(bare_round(sandbox, channels))
        best_engine, best_bare = min(engine_times), min(bare_times)
        per_engine, per_bare = best_engine / len(channels) * 1000, best_bare / len(channels) * 1000
        print(f"  cost per poll: engine {per_engine:.2f} ms, bare HTTP loop {per_bare:.2f} ms, "
              f"bare/engine {best_bare / best_engine:.2f} (goal >= 0.5); "
              f"rounds engine {[round(t, 2) for t in engine_times]} s, bare {[round(t, 2) for t in bare_times]} s")

        timed = replace(settings, inbox_poll_seconds=args.interval)
        prepare(timed)
        lateness, polls = punctuality(timed, channels, args.interval, args.intervals)
        print(f"  punctuality: {polls} polls in {args.intervals} intervals of {args.interval:.0f} s on one worker; "
              f"latest poll {max(lateness, 0.0):.2f} s past due (goal <= {args.interval:.0f} s)")
        print(f"  median engine round {statistics.median(engine_times):.2f} s")
    return 0 if best_bare / best_engine >= 0.5 and lateness <= args.interval else 1


if __name__ == "__main__":
    sys.exit(main())
