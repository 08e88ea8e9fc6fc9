"""Benchmark: the event outbox's retention against the outbox's own filling, in one process.

    python bench/retention.py [--events 20000] [--chunk 100]

Storage follows SWITCHBOARD_DATABASE_URL / SWITCHBOARD_QUEUE_URL when set (PostgreSQL + Redis; give
it a database of its own), else SQLite files in a temporary directory. In one run:

1. the baseline: N events written as changes write them (`events.emit`, `--chunk` to a transaction)
   and dispatched to one endpoint (a delivery each, then marked delivered): events a second;
2. the clock moved past the retention, the scheduler's batches (`retention.forget_old_events`)
   until none is left: events (with their deliveries) a second, and its ratio to the baseline
   (above 1: the retention keeps up with any rate the outbox fills at);
3. the look the scheduler makes once a minute when nothing is old: its median time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import embedded_env, temp_dir  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--chunk", type=int, default=100)
    args = parser.parse_args()

    from kit import clock
    from kit.settings import Settings
    from service.common import events
    from service.engine import core as engine
    from service.identity import bootstrap
    from service.identity.auth import Actor
    from service.webhooks import ops as webhooks
    from service.webhooks import retention
    from storage.db import connection, db
    from storage.models import Event, WebhookDelivery
    from switchboard.app import prepare

    env = embedded_env(str(Path(temp_dir()) / "data"), SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE="1")
    for name in ("SWITCHBOARD_DATABASE_URL", "SWITCHBOARD_QUEUE_URL"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    settings = Settings.from_env(env)
    prepare(settings)
    with connection(), db.atomic():
        tenant = bootstrap.bootstrap(email=f"bench-{uuid.uuid4().hex[:8]}@example.com", password="bench bench")
        actor = Actor(workspace_id=tenant["workspaceId"], permission="read-write", profile_ids=None,
                      credential_id="bench")
        webhooks.create(actor=actor, url="https://127.0.0.1:9/hook")

    with connection():
        started = time.perf_counter()
        for _ in range(args.events // args.chunk):
            with db.atomic():
                for n in range(args.chunk):
                    events.emit(workspace_id=tenant["workspaceId"], type="account.connected", data={"id": f"acc_{n}"})
        while engine.run_batches("event_dispatch"):
            pass
        filled = time.perf_counter() - started
        with db.atomic():
            WebhookDelivery.update(status="DELIVERED", next_attempt_at=None).execute()
        written = Event.select().count()

        looks = []
        for _ in range(50):
            began = time.perf_counter()
            retention.forget_old_events()
            looks.append(time.perf_counter() - began)

        clock.advance((settings.event_retention_days + 1) * 86400)
        started = time.perf_counter()
        forgotten = 0
        while taken := retention.forget_old_events():
            forgotten += taken
        emptied = time.perf_counter() - started
        left = (Event.select().count(), WebhookDelivery.select().count())

    report = {
        "storage": settings.database_url.split(":", 1)[0] + " + " + settings.queue_url.split(":", 1)[0],
        "events": written, "forgotten": forgotten, "left_events_and_deliveries": left,
        "outbox_fills_per_second": round(written / filled),
        "retention_forgets_per_second": round(forgotten / emptied),
        "ratio": round((forgotten / emptied) / (written / filled), 2),
        "idle_look_ms_median": round(statistics.median(looks) * 1000, 3),
        "goal": "ratio > 1: the retention outpaces the outbox; the idle look well under a millisecond",
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
