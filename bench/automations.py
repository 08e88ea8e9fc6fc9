"""Benchmark: comments handled, and private replies sent, by comment automations.

    python bench/automations.py [--comments 1000] [--automations 10] [--injectors 8] [--workers 4]

Storage follows SWITCHBOARD_DATABASE_URL / SWITCHBOARD_QUEUE_URL when set (PostgreSQL + Redis),
else SQLite files in a temporary directory. One `switchboard serve` child (API, emulator and the
embedded worker, the default setup) serves; this process shares its storage to watch the rows.

N comments from N different people are injected through the sandbox's comment control as fast as
the emulator posts their signed webhooks (`--injectors` at a time); each control answers once our
`/hooks/instagram` answered, so its rate is the rate at which comments are handled. In one run:

1. handling: comments/s on an Instagram account with `--automations` active automations (each with
   its own keyword; every comment matches one of them, so every comment is matched against all and
   logged by all), against the same injection on an account with none (the webhook's own cost).
2. DMs: the private replies' rate from the first comment to the last DM, and the time from the last
   comment to the last DM, against the pace configured for Instagram (none: Meta answers 429 when it
   wants less) and against a bare loop of the same number of private replies made straight through
   the adapter with the same number of threads as the worker (the platform's own pace here).
   Goal: DM rate >= 0.7 x the bare loop, i.e. the platform's pace rather than our overhead.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import embedded_env, free_port, process, temp_dir  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--comments", type=int, default=1000)
    parser.add_argument("--automations", type=int, default=10)
    parser.add_argument("--injectors", type=int, default=8)
    parser.add_argument("--workers", type=int, default=4, help="threads of the worker (serve's default)")
    parser.add_argument("--baseline", type=int, default=None,
                        help="comments and private replies of the baselines (default: --comments; the emulator "
                             "slows as an account's comments pile up, so equal sizes compare fairly)")
    args = parser.parse_args()
    args.baseline = args.baseline or args.comments

    from kit.settings import Settings
    from service.accounts import adapters
    from service.identity import bootstrap
    from storage.db import connection, db
    from storage.models import Account, Conversation, Message
    from switchboard.app import prepare
    from switchboard.sandbox_seed import connect

    work = Path(temp_dir())
    port, sandbox_port = free_port(), free_port()
    sandbox = f"http://127.0.0.1:{sandbox_port}"
    # The emulator in its own process, as a platform is: its work does not share our process's GIL.
    env = embedded_env(str(work / "data"), SWITCHBOARD_BASE_URL=f"http://127.0.0.1:{port}", SWITCHBOARD_SANDBOX="1",
                       SWITCHBOARD_SANDBOX_URL=sandbox, SWITCHBOARD_SCHEDULER_TICK_SECONDS="0.5")
    for name in ("SWITCHBOARD_DATABASE_URL", "SWITCHBOARD_QUEUE_URL"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    settings = Settings.from_env(env)
    env["SWITCHBOARD_DATABASE_URL"], env["SWITCHBOARD_QUEUE_URL"] = settings.database_url, settings.queue_url
    base = settings.base_url
    report: dict[str, Any] = {"comments": args.comments, "automations": args.automations,
                              "injectors": args.injectors,
                              "storage": settings.database_url.split(":", 1)[0] + " + " +
                              settings.queue_url.split(":", 1)[0]}

    # The scale-out setup (PostgreSQL + Redis) runs the worker as a process of its own beside the API;
    # the embedded one runs it inside `serve`.
    scale_out = settings.queue_url.startswith("redis")
    serve = [sys.executable, "-m", "switchboard", "serve", "--port", str(port)] + (["--no-worker"] if scale_out else [])
    worker = [sys.executable, "-m", "switchboard", "worker", "--workers", str(args.workers)]
    report["worker"] = "its own process" if scale_out else "inside serve"
    with process([sys.executable, "-m", "switchboard", "sandbox", "serve", "--port", str(sandbox_port)],
                 sandbox + "/sandbox/telegram/sent", env=env), \
         process(serve, base + "/v1/health", env=env), \
         (process(worker, sandbox + "/sandbox/telegram/sent", env=env) if scale_out else contextlib.nullcontext()):
        prepare(settings)
        pace = adapters.adapter("instagram").capabilities.messages_per_second
        report["instagram_pace_per_second"] = pace or "none configured (Meta answers 429)"
        with connection(), db.atomic():
            tenant = bootstrap.bootstrap(email=f"bench-{uuid.uuid4().hex[:8]}@example.com", password="bench bench")
        http = httpx2.Client(base_url=base, timeout=60)
        auth = {"Authorization": f"Bearer {tenant['apiKey']}"}
        busy = connect(http, api_key=tenant["apiKey"], profile_id=tenant["profileId"], platform="instagram")
        idle = connect(http, api_key=tenant["apiKey"], profile_id=tenant["profileId"], platform="instagram")
        for n in range(args.automations):
            http.post("/v1/comment-automations", headers=auth, json={
                "accountId": busy["id"], "name": f"Keyword {n}", "keywords": [f"code{n}"], "matchType": "contains",
                "dmText": f"Here is code {n}: thanks for your comment!"}).raise_for_status()

        injector = httpx2.Client(base_url=sandbox, timeout=60, limits=httpx2.Limits(max_connections=args.injectors))

        def inject(account: dict[str, Any], tag: str, count: int) -> tuple[float, float, list[str]]:
            """(first comment sent, last comment handled, comment ids), monotonic seconds."""
            def one(n: int) -> str:
                answer = injector.post("/sandbox/instagram/comment", json={
                    "accountId": account["id"], "mediaId": f"{tag}-media",
                    "from": {"id": f"{tag}{n:06d}", "handle": f"fan_{tag}_{n}"},
                    "text": f"code{n % max(args.automations, 1)} please"})
                answer.raise_for_status()
                return str(answer.json()["commentId"])

            started = time.monotonic()
            with ThreadPoolExecutor(args.injectors) as pool:
                ids = list(pool.map(one, range(count)))
            return started, time.monotonic(), ids

        # 1a. the webhook's own cost: an account without automations.
        started, ended, idle_comments = inject(idle, "9", args.baseline)
        baseline_rate = args.baseline / (ended - started)

        # 2a. the platform's pace for private replies: the same number, through the adapter, with the
        # worker's number of threads, on the comments just made (they have no private reply yet).
        with connection():
            account = Account.get_by_id(idle["id"])
            ctx = adapters.context(account)
        adapter = adapters.adapter("instagram")
        started = time.monotonic()
        with ThreadPoolExecutor(args.workers) as pool:
            list(pool.map(lambda cid: adapter.private_reply(ctx, comment_id=cid, text="Here is code 0: thanks!"),
                          idle_comments))
        bare_dm_rate = args.baseline / (time.monotonic() - started)

        # 1b and 2b: the account with automations.
        def dms_sent() -> int:
            with connection():
                return (Message.select().join(Conversation)
                        .where(Conversation.account == busy["id"], Message.source == "automation",
                               Message.status == "sent").count())

        first, last_comment, _ = inject(busy, "1", args.comments)
        handled_rate = args.comments / (last_comment - first)
        sent_by_last_comment = dms_sent()
        deadline = time.monotonic() + 600
        while dms_sent() < args.comments:
            if time.monotonic() > deadline:
                raise SystemExit(f"only {dms_sent()} of {args.comments} DMs were sent")
            time.sleep(0.02)
        last_dm = time.monotonic()
        dm_rate = args.comments / (last_dm - first)
        sent_log = httpx2.get(sandbox + "/sandbox/instagram/sent", params={"accountId": busy["id"]}, timeout=60)
        reached = [row for row in sent_log.json()["data"] if row["kind"] == "private_reply"]

        report["handling"] = {
            "comments_per_second_with_automations": round(handled_rate),
            "comments_per_second_without": round(baseline_rate),
            "ratio": round(handled_rate / baseline_rate, 2),
        }
        report["dms"] = {
            "dms_per_second": round(dm_rate),
            "bare_private_replies_per_second": round(bare_dm_rate),
            "ratio_to_bare": round(dm_rate / bare_dm_rate, 2),
            "against_pace": round(dm_rate / pace, 2) if pace else "unpaced",
            "last_comment_to_last_dm_seconds": round(last_dm - last_comment, 2),
            "sent_by_the_last_comment": sent_by_last_comment,
            "dms_per_second_after_the_last_comment": round((args.comments - sent_by_last_comment)
                                                           / max(last_dm - last_comment, 1e-3)),
            "private_replies_reached_platform": len(reached),
            "sent_twice": len(reached) - len({row["to"] for row in reached}),
            "goal": "ratio_to_bare >= 0.7",
        }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
