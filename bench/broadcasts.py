"""Benchmark: broadcasts end to end (create with sendNow → fan-out → every message sent), against the
sandbox emulator.

    python bench/broadcasts.py [--recipients 10000] [--paced 300] [--threads 8] [--starts 20]

Storage follows SWITCHBOARD_DATABASE_URL / SWITCHBOARD_QUEUE_URL when set (PostgreSQL + Redis), else
SQLite files in a temporary directory. Three processes: the emulator (this script with `--emulator`,
platform rate limits lifted), the API (`switchboard serve --no-worker`, pointed at that emulator) and
this process, which runs the worker (its consumer threads and scheduler) and measures.
BENCH_PYSPY=<dir> records a py-spy profile of this process while the throughput part's broadcast
runs (<dir>/broadcast-worker.txt); BENCH_CALLGRIND=<dir>, with the script under valgrind (see
`count_instructions`), counts the worker's instructions a message of the broadcast and of `--floor`.
In one run:

1. throughput: a Telegram broadcast to `--recipients` conversations with the bot's 30/s pace lifted,
   from the `POST /v1/broadcasts` (sendNow) until it is `completed`, against a bare loop of httpx2
   `sendMessage` posts to the emulator with as many threads as the worker has. Goal: ratio >= 0.5.
   With it, the CPU each message cost (`CpuMeter`): of this process (the bare client, or the worker),
   of the emulator, of the API and of the PostgreSQL backends serving the benchmark's database:
   steadier than a rate on a shared machine.
2. pace: a broadcast to `--paced` conversations with the pace on: messages a second, from the
   emulator's own timestamps. Goal: within 5 % of 30/s.
3. start: `--starts` one-recipient broadcasts created with sendNow; seconds from the request until
   the message reached the emulator, p50 and p95. Goal: p95 < 2 s.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import datetime as dt
import json
import os
import re
import statistics
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import CpuMeter, embedded_env, free_port, process, spy_on, stop_spy, temp_dir  # noqa: E402


def emulator_main(port: int) -> None:
    """The emulator on its own, rate limits lifted, with a bench-only control that adds contacts in
    bulk (a bot can write only to chats that wrote to it; 10,000 inbound webhooks would be the run)."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Mount, Route

    from kit.settings import Settings
    from platforms.emulator_kit.app import create_emulator_app
    from platforms.emulator_kit.state import Contact
    from service.accounts import adapters
    from storage import db as storage_db
    from switchboard.app import _sandbox_account

    settings = Settings.from_env(dict(os.environ))
    storage_db.initialise(settings.database_url)
    emulator = create_emulator_app(config=adapters.platform_config(settings), resolve_account=_sandbox_account,
                                   rate_limits=False, state_path=settings.data_dir / "sandbox.db")

    async def add_contacts(request: Request) -> JSONResponse:
        body = await request.json()
        state = emulator.state.emulator.state
        account = state.account("telegram", body["platformAccountId"])
        with state.lock:
            for contact_id in body["ids"]:
                account.contacts.setdefault(contact_id, Contact(contact_id))
        return JSONResponse({"added": len(body["ids"])})

    app = Starlette(routes=[Route("/bench/contacts", add_contacts, methods=["POST"]), Mount("/sandbox", app=emulator)])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


class StatementCounter:
    """With BENCH_STATEMENTS=1: counts the statements this process sends to the database (peewee's
    `execute_sql`, BEGIN and COMMIT), by kind, while `counting` is on. Costs time: figures only."""

    def __init__(self) -> None:
        import threading

        import peewee

        from storage.db import PostgresPool

        self.counting = False
        self.counts: collections.Counter[str] = collections.Counter()
        lock = threading.Lock()
        names: dict[str, str] = {}
        original_execute, original_commit = peewee.Database.execute_sql, peewee.Database.commit
        original_prepared = PostgresPool.execute_prepared
        counter = self

        def note(kind: str) -> None:
            if counter.counting:
                with lock:
                    counter.counts[kind] += 1

        def execute_sql(database: Any, sql: str, params: Any = None, *args: Any, **kwargs: Any) -> Any:
            if sql.startswith("EXECUTE "):
                note(names.get(sql.split("(")[0][8:], "EXECUTE ?"))
            elif not sql.startswith("PREPARE "):
                note(" ".join(sql.split()[:4])[:60])
            return original_execute(database, sql, params, *args, **kwargs)

        def prepared(database: Any, template: str, params: tuple[Any, ...]) -> Any:
            from storage.db import _statement_name
            names[_statement_name(template)] = "prepared " + " ".join(template.split()[:4])[:60]
            return original_prepared(database, template, params)

        def counted_begin(original: Any) -> Any:
            def begin(database: Any, *args: Any, **kwargs: Any) -> Any:
                note("BEGIN")
                return original(database, *args, **kwargs)
            return begin

        def commit(database: Any, *args: Any, **kwargs: Any) -> Any:
            note("COMMIT")
            return original_commit(database, *args, **kwargs)

        peewee.Database.execute_sql = execute_sql  # type: ignore[method-assign,assignment]
        peewee.Database.commit = commit  # type: ignore[method-assign,assignment]
        PostgresPool.execute_prepared = prepared  # type: ignore[method-assign,assignment]
        for cls in (peewee.SqliteDatabase, peewee.PostgresqlDatabase):
            cls.begin = counted_begin(cls.begin)  # type: ignore[method-assign,assignment]

    def per_message(self, messages: int) -> dict[str, float]:
        return {kind: round(count / messages, 3) for kind, count in self.counts.most_common()
                if count / messages >= 0.005}


def count_instructions(on: bool) -> int:
    """With BENCH_CALLGRIND=<dir> and this script run under valgrind's callgrind (`--instr-atstart=no
    --callgrind-out-file=<dir>/cg.%p.out`): count this process's instructions from now (`on`), or
    stop and return the count since then (`callgrind_control` dumps it). Counts do not move with the
    machine's load, where CPU times and rates do. 0 without it."""
    folder = os.environ.get("BENCH_CALLGRIND")
    if not folder:
        return 0
    pid = str(os.getpid())
    subprocess.run(["callgrind_control", "-i", "on" if on else "off", pid], check=True, capture_output=True)
    if on:
        subprocess.run(["callgrind_control", "-z", pid], check=True, capture_output=True)
        return 0
    before = set(Path(folder).glob("cg.*"))
    subprocess.run(["callgrind_control", "-d", pid], check=True, capture_output=True)
    (dump,) = set(Path(folder).glob("cg.*")) - before
    found = re.search(r"^totals: (\d+)", dump.read_text(errors="replace"), re.M)
    return int(found.group(1)) if found else 0


def wait_until(condition: Any, timeout: float, step: float = 0.02) -> float:
    if os.environ.get("BENCH_CALLGRIND"):
        step = 1.0  # each look is this process's work too: under callgrind, counted with the worker's
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if condition():
            return time.monotonic() - started
        time.sleep(step)
    raise SystemExit("timed out waiting for the broadcast")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--recipients", type=int, default=10_000)
    parser.add_argument("--paced", type=int, default=300)
    parser.add_argument("--threads", type=int, default=8, help="consumer threads of the worker (and bare loop)")
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--floor", action="store_true",
                        help="also send the same messages as plain inbox messages: the engine's own cost")
    parser.add_argument("--emulator", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.emulator:
        emulator_main(args.emulator)
        return 0

    from kit import clock
    from kit.settings import Settings
    from service.accounts import adapters
    from service.identity import bootstrap
    from storage.db import connection, db
    from storage.models import Account, Broadcast, Conversation, ConversationCount
    from switchboard.app import prepare, start_worker, stop_worker
    from switchboard.sandbox_seed import connect

    work = Path(temp_dir())
    port, sandbox_port = free_port(), free_port()
    env = embedded_env(
        str(work / "data"),
        SWITCHBOARD_BASE_URL=f"http://127.0.0.1:{port}",
        SWITCHBOARD_SANDBOX="1",
        SWITCHBOARD_SANDBOX_URL=f"http://127.0.0.1:{sandbox_port}",
        SWITCHBOARD_SCHEDULER_TICK_SECONDS="0.5",
    )
    for name in ("SWITCHBOARD_DATABASE_URL", "SWITCHBOARD_QUEUE_URL"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    settings = Settings.from_env(env)
    env["SWITCHBOARD_DATABASE_URL"], env["SWITCHBOARD_QUEUE_URL"] = settings.database_url, settings.queue_url
    base, sandbox = settings.base_url, f"http://127.0.0.1:{sandbox_port}"
    report: dict[str, Any] = {"recipients": args.recipients, "threads": args.threads,
                              "storage": settings.database_url.split(":", 1)[0] + " + " +
                              settings.queue_url.split(":", 1)[0]}
    prepare(settings)  # the schema, before the other processes start
    with process([sys.executable, "-m", "switchboard", "serve", "--no-worker", "--port", str(port)],
                 base + "/v1/health", env=env) as api, \
            process([sys.executable, str(Path(__file__).resolve()), "--emulator", str(sandbox_port)],
                    sandbox + "/sandbox/telegram/sent", env=env) as emulator:
        with connection(), db.atomic():
            tenant = bootstrap.bootstrap(email=f"bench-{uuid.uuid4().hex[:8]}@example.com", password="bench bench")
        http = httpx2.Client(base_url=base, timeout=60)
        headers = {"Authorization": f"Bearer {tenant['apiKey']}"}

        def bot_with_contacts(count: int, first: int) -> tuple[Account, list[str]]:
            bot = connect(http, api_key=tenant["apiKey"], profile_id=tenant["profileId"], platform="telegram",
                          username=f"bench{first}")
            chats = [str(first + n) for n in range(count)]
            with connection():
                account = Account.get_by_id(bot["id"])
            for start in range(0, count, 2000):
                httpx2.post(sandbox + "/bench/contacts", json={"platformAccountId": account.platform_account_id,
                                                               "ids": chats[start:start + 2000]}).raise_for_status()
            moment = clock.now()
            with connection(), db.atomic():
                for start in range(0, count, 500):
                    Conversation.insert_many([
                        {"id": f"conv_{uuid.uuid4().hex[:26]}", "workspace": account.workspace_id,
                         "profile": account.profile_id, "account": account.id, "platform": "telegram",
                         "external_conversation_id": chat, "last_inbound_at": moment, "last_message_at": moment,
                         "activity_at": moment, "unread_count": 0, "status": "open", "created_at": moment,
                         "updated_at": moment} for chat in chats[start:start + 500]]).execute()
                ConversationCount.insert(account=account.id, workspace=account.workspace_id,
                                         profile=account.profile_id, platform="telegram", total=count).execute()
            return account, chats

        def send_now(account: Account, name: str) -> str:
            answer = http.post("/v1/broadcasts", headers=headers, json={
                "accountId": account.id, "name": name, "text": f"{name}: the sale is on", "sendNow": True})
            answer.raise_for_status()
            return str(answer.json()["id"])

        def completed(broadcast_id: str) -> bool:
            with connection():
                return bool(Broadcast.get_by_id(broadcast_id).status == "completed")

        def completed_at(broadcast_id: str) -> dt.datetime:
            with connection():
                return Broadcast.get_by_id(broadcast_id).completed_at  # type: ignore[no-any-return]

        def fanned(broadcast_id: str) -> bool:
            with connection():
                return bool(Broadcast.get_by_id(broadcast_id).fanned_out)

        def sent_log(account: Account) -> list[dict[str, Any]]:
            answer = httpx2.get(sandbox + "/sandbox/telegram/sent", params={"accountId": account.id}, timeout=60)
            return [row for row in answer.json()["data"] if row["kind"] == "dm"]

        def floor(account: Account, pids: dict[str, int], meter: CpuMeter) -> dict[str, Any]:
            """The same messages to the same conversations as plain inbox messages, queued in the same
            chunks and groups but with no broadcast around them: what the engine's send path alone
            costs in this harness, the floor of what a broadcast can cost."""
            from service.engine import core as engine
            from service.inbox import outbound
            from service.inbox import work as inbox_work
            from storage.models import Message

            with connection():
                conversations = list(Conversation.select(Conversation.id, Conversation.platform,
                                                         Conversation.last_inbound_at)
                                     .where(Conversation.account == account.id).order_by(Conversation.id))
            meter.start(pids)
            count_instructions(on=True)
            started = time.monotonic()
            for start in range(0, len(conversations), 500):
                with connection(), db.atomic():
                    queued = outbound.queue_outbound_many(conversations[start:start + 500], account, text="floor",
                                                          source="inbox")
                    engine.nudge_after_commit(inbox_work.MESSAGE_WORK, queued)

            def settled() -> bool:
                with connection():
                    return not Message.select(Message.id).where(Message.status.in_(("pending", "sending"))).exists()

            wait_until(settled, 600, 0.2)
            rate = len(conversations) / (time.monotonic() - started)
            instructions = count_instructions(on=False)
            spent = meter.stop(pids)
            found: dict[str, Any] = {"per_second": round(rate), "cpu_us_per_message": {
                name: round(spent[name] / len(conversations) * 1e6) for name in (*pids, "postgres")}}
            if instructions:
                found["worker_instructions_per_message"] = round(instructions / len(conversations))
            return found

        telegram = adapters.adapter("telegram")
        paced = telegram.capabilities
        runtime = start_worker(settings, embedded=False, workers=args.threads)
        try:
            time.sleep(1)  # consumer threads up before any clock runs
            # 1. throughput, the pace lifted, against a bare loop to the same emulator.
            account, chats = bot_with_contacts(args.recipients, 5_000_000)
            token = adapters.context(account).credentials["botToken"]
            bare_client = httpx2.Client(timeout=30, limits=httpx2.Limits(max_connections=args.threads))

            def bare(n: int) -> None:
                bare_client.post(f"{sandbox}/sandbox/telegram/bot{token}/sendMessage",
                                 json={"chat_id": chats[n], "text": f"bare {n}"}).raise_for_status()

            meter = CpuMeter(database_url=settings.database_url)
            pids = {"bench": os.getpid(), "emulator": emulator.pid, "api": api.pid}
            meter.start(pids)
            started = time.monotonic()
            with ThreadPoolExecutor(args.threads) as pool:
                list(pool.map(bare, range(args.recipients)))
            bare_rate = args.recipients / (time.monotonic() - started)
            bare_cpu = meter.stop(pids)

            telegram.capabilities = dataclasses.replace(paced, messages_per_second=None)  # type: ignore[misc]
            spy = spy_on(os.getpid(), "broadcast-worker")
            statements = StatementCounter() if os.environ.get("BENCH_STATEMENTS") else None
            if statements is not None:
                statements.counting = True
            meter.start(pids)
            count_instructions(on=True)
            # Timed by the broadcast's own `completed_at` (the service's clock, naive UTC), so this
            # process looks at it rarely: each look is a query on the worker's process, whose threads
            # it would take the GIL from (a look every 0.1 s was 5 % of the process's Python time).
            requested = dt.datetime.now(dt.UTC).replace(tzinfo=None)
            broadcast_id = send_now(account, "unpaced")
            fanned_out = wait_until(lambda: fanned(broadcast_id), 600, 0.05)
            wait_until(lambda: completed(broadcast_id), 600, 0.5)
            engine_rate = args.recipients / (completed_at(broadcast_id) - requested).total_seconds()
            broadcast_instructions = count_instructions(on=False)
            broadcast_cpu = meter.stop(pids)
            stop_spy(spy)
            if statements is not None:
                statements.counting = False
            delivered = [row["to"] for row in sent_log(account) if row["text"].startswith("unpaced")]
            report["throughput"] = {"bare_per_second": round(bare_rate), "broadcast_per_second": round(engine_rate),
                                    "ratio": round(engine_rate / bare_rate, 2), "goal": ">= 0.5",
                                    "fan_out_seconds": round(fanned_out, 2),
                                    "delivered": len(delivered), "sent_twice": len(delivered) - len(set(delivered)),
                                    # µs of CPU a message: this process is the bare client, then the worker.
                                    "cpu_us_per_message": {
                                        phase: {name: round(spent[name] / args.recipients * 1e6)
                                                for name in (*pids, "postgres")}
                                        for phase, spent in (("bare", bare_cpu), ("broadcast", broadcast_cpu))},
                                    "postgres_transactions_per_message": round(
                                        broadcast_cpu.get("transactions", 0) / args.recipients, 2),
                                    "load_average": [round(value, 2) for value in os.getloadavg()]}
            if statements is not None:
                report["throughput"]["statements_per_message"] = statements.per_message(args.recipients)
            if broadcast_instructions:
                report["throughput"]["worker_instructions_per_message"] = round(broadcast_instructions /
                                                                                args.recipients)

            if args.floor:
                report["floor"] = floor(account, pids, meter)

            # 2. the pace on: 30 a second per bot.
            telegram.capabilities = paced  # type: ignore[misc]
            account, _ = bot_with_contacts(args.paced, 6_000_000)
            broadcast_id = send_now(account, "paced")
            wait_until(lambda: completed(broadcast_id), 120, 0.1)
            moments = sorted(dt.datetime.fromisoformat(row["at"].replace("Z", "+00:00")).timestamp()
                             for row in sent_log(account))
            rate = (len(moments) - 1) / (moments[-1] - moments[0])
            report["pace"] = {"recipients": args.paced, "per_second": round(rate, 2), "limit": 30,
                              "off_by_percent": round(abs(rate - 30) / 30 * 100, 1), "goal": "within 5 %"}

            # 3. sendNow to the first message.
            account, _ = bot_with_contacts(1, 7_000_000)
            latencies = []
            for n in range(args.starts):
                before = len(sent_log(account))
                started = time.monotonic()
                send_now(account, f"start {n}")
                wait_until(lambda before=before: len(sent_log(account)) > before, 30, 0.01)
                latencies.append(time.monotonic() - started)
            latencies.sort()
            report["send_now_to_first_message_seconds"] = {
                "p50": round(statistics.median(latencies), 3),
                "p95": round(latencies[max(0, int(len(latencies) * 0.95) - 1)], 3), "goal": "p95 < 2"}
        finally:
            stop_worker(runtime)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
