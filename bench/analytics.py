"""Follower analytics over 10 accounts × 366 days of snapshots, against a bare SQL read of the same rows.

In process, on a fresh SQLite file (or, with `--postgres postgresql://postgres@127.0.0.1:5432/`, a
database made on that server for the run and dropped after): the
service's `follower_analytics` for a 366-day window at each granularity, its answer written to JSON
as `/v1` writes it, against one `SELECT` of the same 3,660 rows fetched with the driver. The two
alternate, so both see the machine's weather. Goal: the whole answer within 3x the bare read.

    python bench/analytics.py [--rounds 60] [--postgres postgresql://USER@HOST:PORT/]
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time
import uuid
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import temp_dir

from kit.settings import Settings
from service.analytics import ops as analytics
from service.identity import bootstrap
from service.identity.auth import Actor
from storage.db import connection, db, reading
from storage.models import Account, FollowerSnapshot
from switchboard.app import prepare

ACCOUNTS, DAYS = 10, 366
PLATFORMS = ("instagram", "facebook", "x", "tiktok", "youtube", "instagram", "facebook", "x", "tiktok", "youtube")


def seed(workspace_id: str, profile_id: str, end: dt.date) -> list[str]:
    ids = []
    with connection(), db.atomic():
        for n in range(ACCOUNTS):
            account_id = f"acc_bench{uuid.uuid4().hex[:20]}"
            Account.create(id=account_id, workspace=workspace_id, profile=profile_id, platform=PLATFORMS[n],
                           platform_account_id=f"bench-{account_id}", status="connected")
            ids.append(account_id)
            rows = [{"account": account_id, "date": end - dt.timedelta(days=d), "followers": 1000 + 7 * d + n,
                     "state": "taken"} for d in range(DAYS)]
            for start in range(0, len(rows), 500):
                FollowerSnapshot.insert_many(rows[start:start + 500]).execute()
    return ids


def bare(ids: list[str], start: dt.date, end: dt.date) -> int:
    marks = ", ".join([db.param] * len(ids))
    with connection(), reading():
        rows = db.execute_sql(
            f"SELECT account_id, date, followers FROM follower_snapshot WHERE account_id IN ({marks}) "
            f"AND date >= {db.param} AND date <= {db.param} ORDER BY account_id, date",
            [*ids, start.isoformat(), end.isoformat()]).fetchall()
    return len(rows)


def service(actor: Actor, start: dt.date, end: dt.date, granularity: str) -> int:
    with connection(), reading():
        answer = analytics.follower_analytics(actor=actor, from_date=start, to_date=end, granularity=granularity)
    return len(answer.model_dump_json(by_alias=True))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--postgres", help="a PostgreSQL server URL: the run makes its own database there")
    args = parser.parse_args()
    if not args.postgres:
        return run(args, None)
    import psycopg2

    name = f"switchboard_bench_{uuid.uuid4().hex[:10]}"
    admin = psycopg2.connect(args.postgres.rstrip("/") + "/postgres")
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    try:
        return run(args, args.postgres.rstrip("/") + "/" + name)
    finally:
        if not db.is_closed():
            db.close()
        if hasattr(db.obj, "close_all"):
            db.obj.close_all()
        with admin.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def run(args: argparse.Namespace, database_url: str | None) -> int:
    data = temp_dir()
    settings = Settings.from_env({"SWITCHBOARD_DATA_DIR": data, "SWITCHBOARD_SECRET_KEY": "bench-secret",
                                  "SWITCHBOARD_BASE_URL": "http://127.0.0.1:9"})
    if database_url:
        settings = replace(settings, database_url=database_url)
    prepare(settings)
    with connection(), db.atomic():
        made = bootstrap.bootstrap(email=f"bench-{uuid.uuid4().hex[:6]}@example.com", password="bench-password")
    end = dt.date(2026, 6, 30)
    start = end - dt.timedelta(days=DAYS - 1)
    ids = seed(made["workspaceId"], made["profileId"], end)
    actor = Actor(workspace_id=made["workspaceId"], permission="read-write", profile_ids=None, credential_id="bench")
    assert bare(ids, start, end) == ACCOUNTS * DAYS

    print(f"{ACCOUNTS} accounts × {DAYS} days = {ACCOUNTS * DAYS} snapshots, {args.rounds} rounds, "
          f"{'PostgreSQL' if database_url else 'SQLite'}")
    for granularity in ("day", "week", "month"):
        timings: dict[str, list[float]] = {"bare": [], "service": []}
        for _ in range(args.rounds):
            for name, run in (("bare", lambda: bare(ids, start, end)),
                              ("service", lambda g=granularity: service(actor, start, end, g))):
                began = time.perf_counter()
                run()
                timings[name].append(time.perf_counter() - began)
        bare_ms = statistics.median(timings["bare"]) * 1000
        service_ms = statistics.median(timings["service"]) * 1000
        print(f"  {granularity:5}  service {service_ms:6.2f} ms   bare SQL {bare_ms:6.2f} ms   "
              f"ratio service/bare {service_ms / bare_ms:5.2f}  (goal <= 3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
