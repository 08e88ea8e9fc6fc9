"""Benchmark: outbound messages through the work engine, against the sandbox emulator.

    python bench/sending.py [--messages 1000] [--bots 200] [--threads 16] [--workers 8] [--rounds 2]
                            [--worker-rounds 2] [--threads-two N] [--probe-workers 4]
                            [--parts engine,workers,kill]

Storage follows SWITCHBOARD_DATABASE_URL / SWITCHBOARD_QUEUE_URL when set (PostgreSQL + Redis; give
it a database of its own), else SQLite files in a temporary directory. A `switchboard serve
--no-worker` child hosts the API and the emulator; this process shares its storage. In one run:

1. engine vs bare loop: N Telegram `sendMessage` calls spread over the bots, made by the same number
   of threads, first as bare `httpx2` posts, then as engine sends (claim, pace, adapter call, finish
   with its event), in groups as a worker's tasks hand them out; alternated, best round of each.
   Besides the rates, the CPU per message of this process (the sender) and of every process the
   benchmark runs. Goal: ratio >= 0.6. The bots are many so that the platform's rate is not what
   is measured: Telegram takes 30 messages a second from a bot (the emulator answers 429 past it,
   the engine paces under it), and the rates are printed against that ceiling (`platform_ceiling`).
   With 50 bots a machine that sends 1,500 a second had the bare loop refused, and the engine held
   by its pace.
2. workers: N queued messages sent by one `switchboard worker` process, then by two, alternated
   `--worker-rounds` times in the order one, two, two, one, ... (the message table grows with every
   run, and a later run costs more a message: neither count may always go second, and each count's
   rate and CPU are the mean of its rounds, which that order balances); time from the
   nudge until the last is `sent`, how many rows each worker was handed, and the CPU each message
   cost, counted two ways (`bench.common.CpuMeter`): the whole machine's (right on a quiet machine)
   and the benchmark's own processes' (its workers, the API with the emulator, the PostgreSQL
   backends of its database, Redis): on a machine that others share, only the second is ours.
   The ceiling a second process can reach is the share of the machine the first run left idle, and
   at most what takes the emulator's process (one core at most) to a whole core (`ceiling_emulator`);
   on PostgreSQL, where its backends spent their active time (`BackendWaits`) shows a limit that is
   not the CPU (the disk's flushes of the claims' commits). A machine may not give all of its idle
   share: a last round sends with `--probe-workers` processes (4; the same threads in all as two
   workers'), and the busiest share any round reached, over one worker's, is `ceiling_reached`.
   Goals: two workers' CPU per message within 10 % of one's; their rate >= 0.9 of the lowest
   ceiling (`of_the_ceiling`; `of_the_idle_share_ceiling` leaves out the reached one).
3. kill: the emulator answers in 1.5 s; a worker is SIGKILLed with messages in the platform's hands
   and a fresh one started; time from the kill until no message is `pending` or `sending`.
   Goal: <= lease + 2 s.

Profiling: BENCH_PYSPY=<dir> records py-spy profiles of the sender and the workers (GIL-holding
samples); BENCH_CALLGRIND=<dir> runs the workers under valgrind's callgrind, counting instructions
only while messages are sent (a count the machine's load does not move; slow: use ~300 messages).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import (  # noqa: E402
    BackendWaits,
    CpuMeter,
    embedded_env,
    free_port,
    process,
    send_as_a_task,
    spy_on,
    stop_spy,
    temp_dir,
)

DISPATCH = "event_dispatch"
LEASE_SECONDS = int(os.environ.get("BENCH_LEASE", "3"))


def wait_until(condition: Any, timeout: float, step: float = 0.02) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if condition():
            return time.monotonic() - started
        time.sleep(step)
    raise SystemExit("timed out waiting for the engine")


def tidy(database_url: str) -> None:
    """VACUUM ANALYZE the benchmark's database before a round (PostgreSQL), as the server's autovacuum
    (on as installed) keeps it between rounds. A server run with autovacuum off, as on the machine
    these figures come from, never does: each round then inherited every earlier round's dead row
    versions, with plans made without statistics (the sweep's probe read the message table whole),
    and a round cost up to 1.3 times the CPU a message of the round before it."""
    if not database_url.startswith("postgres"):
        return
    import psycopg2

    connection = psycopg2.connect(database_url)
    try:
        connection.autocommit = True  # VACUUM runs outside a transaction
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    finally:
        connection.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--bots", type=int, default=200)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--workers", type=int, default=8, help="threads in each worker process")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads-two", type=int, default=0,
                        help="threads in each of the two worker processes (default: --workers)")
    parser.add_argument("--worker-rounds", type=int, default=2, help="one and two workers in turn, this many times")
    parser.add_argument("--probe-workers", type=int, default=4,
                        help="worker processes of the round that finds the busiest the machine gets (0: none)")
    parser.add_argument("--parts", default="engine,workers,kill", help="which of the three to run")
    args = parser.parse_args()

    from kit.settings import Settings
    from service.accounts import adapters
    from service.engine import core as engine
    from service.identity import bootstrap
    from service.inbox import outbound
    from service.inbox import work as inbox_work
    from storage.db import connection, db
    from storage.models import Account, Conversation, Message
    from switchboard.app import prepare
    from switchboard.sandbox_seed import connect
    from tasks.engine import groups

    work = Path(temp_dir())
    port = free_port()
    env = embedded_env(
        str(work / "data"),
        SWITCHBOARD_BASE_URL=f"http://127.0.0.1:{port}",
        SWITCHBOARD_SANDBOX="1",
        SWITCHBOARD_SCHEDULER_TICK_SECONDS="0.5",
        SWITCHBOARD_SEND_LEASE_SECONDS=str(LEASE_SECONDS),
    )
    for name in ("SWITCHBOARD_DATABASE_URL", "SWITCHBOARD_QUEUE_URL"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    settings = Settings.from_env(env)
    env["SWITCHBOARD_DATABASE_URL"], env["SWITCHBOARD_QUEUE_URL"] = settings.database_url, settings.queue_url
    base = settings.base_url
    report: dict[str, Any] = {"messages": args.messages, "bots": args.bots, "threads": args.threads,
                              "storage": settings.database_url.split(":", 1)[0] + " + " +
                              settings.queue_url.split(":", 1)[0]}

    meter = CpuMeter(database_url=settings.database_url, queue_url=settings.queue_url)
    waits = BackendWaits(settings.database_url)
    with process([sys.executable, "-m", "switchboard", "serve", "--no-worker", "--port", str(port)],
                 base + "/v1/health", env=env) as server:
        prepare(settings)
        with connection(), db.atomic():
            tenant = bootstrap.bootstrap(email=f"bench-{uuid.uuid4().hex[:8]}@example.com", password="bench bench")
        http = httpx2.Client(base_url=base, timeout=30)
        chats: list[tuple[str, str]] = []  # (conversation id, bot token)
        for n in range(args.bots):
            bot = connect(http, api_key=tenant["apiKey"], profile_id=tenant["profileId"], platform="telegram")
            http.post("/sandbox/telegram/inbound-message",
                      json={"accountId": bot["id"], "from": {"id": str(9000 + n)}, "text": "hi"}).raise_for_status()
            with connection():
                account = Account.get_by_id(bot["id"])
                conversation = Conversation.get(Conversation.account == account.id)
                chats.append((conversation.id, adapters.context(account).credentials["botToken"]))

        def queue(count: int, tag: str) -> list[str]:
            with connection(), db.atomic():
                rows = {cid: Conversation.get_by_id(cid) for cid, _ in chats}
                accounts = {cid: Account.get_by_id(row.account_id) for cid, row in rows.items()}
                made = []
                for n in range(count):
                    cid = chats[n % len(chats)][0]
                    made.append(outbound.queue_outbound(rows[cid], accounts[cid], text=f"{tag} {n}",
                                                        nudge=False).id)
            return made

        def unsettled(ids: list[str]) -> int:
            with connection():
                return Message.select().where(Message.id.in_(ids), Message.status.in_(("pending", "sending"))).count()

        def nothing_to_send() -> bool:
            # Asked 20 times a second while workers send, so it reads the work index (the rows that
            # still have a next attempt: pending or sending), not the run's rows: a count over 3,000
            # ids took 16 ms of a backend each time, a quarter of a core charged to the workers' run.
            # In the index's order: with statistics that say thousands are pending (taken as the round
            # starts), the planner read the whole table for the first such row instead, 2-4 ms a time
            # and more in each later round.
            with connection():
                return not (Message.select(Message.id).where(Message.next_attempt_at.is_null(False))
                            .order_by(Message.next_attempt_at).exists())

        def all_sent(ids: list[str]) -> bool:
            with connection():
                return Message.select().where(Message.id.in_(ids), Message.status == "sent").count() == len(ids)

        # 1. engine vs bare loop, in this process, the same threads.
        def bare(n: int) -> None:
            _, token = chats[n % len(chats)]
            chat_id = str(9000 + n % len(chats))
            answer = client.post(f"{base}/sandbox/telegram/bot{token}/sendMessage",
                                 json={"chat_id": chat_id, "text": f"bare {n}"})
            answer.raise_for_status()

        client = httpx2.Client(timeout=30, limits=httpx2.Limits(max_connections=args.threads))
        # The most the platform takes from these bots a second: a rate near it is the platform's.
        platform_ceiling = args.bots * adapters.adapter("telegram").capabilities.messages_per_second
        best = {"bare": 0.0, "engine": 0.0}
        # CPU per message of this process (the client, or the engine's threads) and of the server
        # (the emulator), with the database's backends and Redis: steadier than a rate on a busy machine.
        cpu: dict[str, list[float]] = {"bare": [], "engine": [], "bare_client": [], "engine_client": [],
                                       "bare_busy": [], "engine_busy": []}
        pids = {"bench": os.getpid(), "api_and_emulator": server.pid}
        parts = set(args.parts.split(","))
        for _ in range(args.rounds if "engine" in parts else 0):
            meter.start(pids)
            started = time.monotonic()
            with ThreadPoolExecutor(args.threads) as pool:
                list(pool.map(bare, range(args.messages)))
            best["bare"] = max(best["bare"], args.messages / (time.monotonic() - started))
            spent = meter.stop(pids)
            cpu["bare"].append(spent["own"] / args.messages * 1e6)
            cpu["bare_client"].append(spent["bench"] / args.messages * 1e6)
            cpu["bare_busy"].append(spent["machine_busy"])

            ids = queue(args.messages, "engine")
            tidy(settings.database_url)
            spy = spy_on(os.getpid(), "engine")
            meter.start(pids)
            started = time.monotonic()
            with ThreadPoolExecutor(args.threads) as pool:
                # In groups, as a worker's tasks hand them out (`tasks.engine.enqueue`).
                list(pool.map(send_as_a_task, groups(ids)))
                # Rows the pace handed back for later, asked of the work index as the workers' part
                # does: a count over the run's ids took 3 % of this process's profile, inside the timed round.
                while not nothing_to_send():
                    list(pool.map(inbox_work.send, ids))
            best["engine"] = max(best["engine"], args.messages / (time.monotonic() - started))
            spent = meter.stop(pids)
            stop_spy(spy)
            cpu["engine"].append(spent["own"] / args.messages * 1e6)
            cpu["engine_client"].append(spent["bench"] / args.messages * 1e6)
            cpu["engine_busy"].append(spent["machine_busy"])
            if not all_sent(ids):
                raise SystemExit("the engine did not send every message")
        if "engine" in parts:
            report["engine_vs_bare"] = {
                "bare_per_second": round(best["bare"]), "engine_per_second": round(best["engine"]),
                "ratio": round(best["engine"] / best["bare"], 2), "goal": ">= 0.6",
                "platform_ceiling_per_second": platform_ceiling,
                "bare_of_platform_ceiling": round(best["bare"] / platform_ceiling, 2),
                # The sender's own CPU per message (this process: the bare client, or the engine with
                # its client), and everything the benchmark runs (with the emulator, PostgreSQL, Redis).
                "sender_cpu_us_per_message": {"bare": [round(v) for v in cpu["bare_client"]],
                                              "engine": [round(v) for v in cpu["engine_client"]]},
                "own_cpu_us_per_message": {"bare": [round(v) for v in cpu["bare"]],
                                           "engine": [round(v) for v in cpu["engine"]]},
                # The share of the machine's cores busy in each round.
                "machine_busy": {"bare": [round(v, 2) for v in cpu["bare_busy"]],
                                 "engine": [round(v, 2) for v in cpu["engine_busy"]]},
                "sender_cpu_ratio": round(statistics.median(cpu["bare_client"]) /
                                          statistics.median(cpu["engine_client"]), 2),
            }

        # 2. one worker process against two: the rate, and the CPU each message cost, counted two
        # ways (see `CpuMeter`): the whole machine's, and the benchmark's own processes'.
        def with_workers(count: int, round_: int, threads: int = 0) -> dict[str, Any]:
            # Events the engine part (or the last run) left for the outbox's dispatcher are dispatched
            # here first, so that no run pays for another's.
            with connection():
                while engine.run_batches(DISPATCH):
                    pass
            ids = queue(args.messages, f"workers-{count}")
            tidy(settings.database_url)
            # The default lease: the short one of the kill test would have the sweeper hand out again
            # every row still waiting in the queue after 3 s (a backlog, not a lost task).
            threads = threads or (args.workers if count == 1 else (args.threads_two or args.workers))
            # A log of each round's own: a log kept from an earlier round already said "running", and
            # the wait below let the clock start while the new worker was still starting up.
            logs = [work / f"worker-{count}-{round_}-{n}.log" for n in range(count)]
            workers = [start_worker({**env, "SWITCHBOARD_SEND_LEASE_SECONDS": "60"}, log, threads) for log in logs]
            try:
                # Each worker's start-up (imports, connections: seconds of CPU on a busy machine) must
                # be over before the clock and the CPU count start.
                for log in logs:
                    wait_until(lambda log=log: "running" in log.read_text(), 600)
                warm_up(threads * count)
                time.sleep(1)
                pids = {"api_and_emulator": server.pid, **{f"worker_{n}": w.pid for n, w in enumerate(workers)}}
                spies = [spy_on(w.pid, f"w{count}-{n}") for n, w in enumerate(workers)]
                count_instructions([w.pid for w in workers], True)
                meter.start(pids)
                waits.start()
                started = time.monotonic()
                engine.nudge_now(inbox_work.MESSAGE_WORK, ids)
                wait_until(nothing_to_send, 1800, 0.05)
                elapsed = time.monotonic() - started
                backend_waits = waits.stop()
                spent = meter.stop(pids)
                count_instructions([w.pid for w in workers], False)
                for spy in spies:
                    stop_spy(spy)
            finally:
                stop(workers)
            if not all_sent(ids):
                raise SystemExit("the workers did not send every message")
            return {"per_second": args.messages / elapsed, "spent": spent,
                    "machine_us": spent["machine"] / args.messages * 1e6,
                    "own_us": spent["own"] / args.messages * 1e6,
                    "rows_by_worker": [rows_run(log) for log in logs], "load": os.getloadavg()[0],
                    "backend_waits": backend_waits}

        def warm_up(threads: int) -> None:
            # A consumer thread opens its database connection at its first task, and a PostgreSQL
            # backend's start (and each statement prepared on it) is counted from the moment it
            # appears: with twice the threads, the run would pay for twice the connections, a
            # once-a-process cost that a long-running worker does not have a message. So every
            # thread sends one message first: slow answers and a task a message keep every thread
            # busy at once, so that none takes two.
            http.post("/sandbox/telegram/latency", json={"milliseconds": 300}).raise_for_status()
            warm = queue(threads * 2, "warm-up")
            for message_id in warm:
                engine.nudge_now(inbox_work.MESSAGE_WORK, [message_id])
            wait_until(lambda: all_sent(warm), 120, 0.05)
            http.post("/sandbox/telegram/latency", json={"milliseconds": 0}).raise_for_status()

        def workers_part() -> dict[str, Any]:
            # Alternated, one and two workers in turn, since the machine's load drifts between runs,
            # in the order one, two, two, one (and so on): the message table grows by the messages of
            # every run, and a later run costs more a message than an earlier one, so neither count may
            # always go second. That order balances a drift for the mean of each count's rounds, not
            # for the best of them (with a steady drift the best is one's first round and two's
            # second, which always favours one), so each figure is the mean of its count's rounds.
            runs: dict[int, list[dict[str, Any]]] = {1: [], 2: []}
            for round_ in range(args.worker_rounds):
                for count in ((1, 2) if round_ % 2 == 0 else (2, 1)):
                    runs[count].append(with_workers(count, round_))
            # The busiest this machine gets on this work: the same threads as two workers' in more
            # processes (more GILs, more connections), one round after the others. A machine whose
            # kernel leaves a core idle while this mix's tasks wait on the other (see docs/benchmarks.md)
            # gives a second worker less than the idle share one worker left: this is what it gives.
            probe = None
            if args.probe_workers > 2:
                probe = with_workers(args.probe_workers, args.worker_rounds, max(
                    1, round(2 * (args.threads_two or args.workers) / args.probe_workers)))

            def mean(count: int, figure: Callable[[dict[str, Any]], float]) -> float:
                return statistics.fmean(figure(run) for run in runs[count])

            rate = [mean(count, lambda run: run["per_second"]) for count in (1, 2)]
            busy = [mean(count, lambda run: run["spent"]["machine_busy"]) for count in (1, 2)]
            own_share = mean(1, lambda run: run["spent"]["own"] / run["spent"]["seconds"])
            # The emulator (with the idle API) is one Python process that a second worker does not
            # double: at most one core, whatever the machine leaves idle.
            emulator = [mean(count, lambda run: run["spent"]["api_and_emulator"] / run["spent"]["seconds"])
                        for count in (1, 2)]
            own = [mean(count, lambda run: run["own_us"]) for count in (1, 2)]
            cores = os.cpu_count() or 1
            busiest = max([busy[1], *([probe["spent"]["machine_busy"]] if probe else [])])
            ceilings = {"machine": min(2.0, 1 / busy[0]), "emulator": 1 / emulator[0] if emulator[0] else 2.0,
                        "reached": busiest / busy[0]}
            return {
                "one_per_second": round(rate[0]), "two_per_second": round(rate[1]),
                "ratio": round(rate[1] / rate[0], 2),
                "each_run_per_second": {count: [round(run["per_second"]) for run in runs[count]] for count in (1, 2)},
                "platform_ceiling_per_second": platform_ceiling,
                # What a second process can add at most: the cores one worker left idle. On a quiet
                # machine 1 / (the share busy); with other work on the machine, (own + idle) / own.
                "ceiling_machine": round(min(2.0, 1 / busy[0]), 2),
                "ceiling_own": round(min(2.0, (own_share + (1 - busy[0]) * cores) / own_share), 2),
                "emulator_core_share": [round(share, 2) for share in emulator],
                "ceiling_emulator": round(1 / emulator[0], 2) if emulator[0] else None,
                # The busiest the machine was in any round (two workers', the probe's) over one
                # worker's share: what the machine gave more processes on this work.
                "ceiling_reached": round(ceilings["reached"], 2),
                "probe": None if probe is None else {
                    "workers": args.probe_workers, "per_second": round(probe["per_second"]),
                    "machine_busy": round(probe["spent"]["machine_busy"], 2),
                    "own_cpu_us_per_message": round(probe["own_us"])},
                # Two's rate / one's, against the lowest ceiling (the goal: >= 0.9); and against the
                # lower of the idle share's and the emulator's, as if the idle were all to be had.
                "of_the_ceiling": round(rate[1] / rate[0] / min(ceilings.values()), 2),
                "of_the_idle_share_ceiling": round(
                    rate[1] / rate[0] / min(ceilings["machine"], ceilings["emulator"]), 2),
                "machine_busy": [round(share, 2) for share in busy],
                "machine_cpu_us_per_message": {count: [round(run["machine_us"]) for run in runs[count]]
                                               for count in (1, 2)},
                "own_cpu_us_per_message": {count: [round(run["own_us"]) for run in runs[count]] for count in (1, 2)},
                "own_cpu_two_to_one": round(own[1] / own[0], 2),
                # What each worker's tasks were handed (from its last log line; the warm-up's too): rows,
                # the event outbox's dispatch tasks, and the events those took.
                "rows_by_worker_with_warm_up": {count: [run["rows_by_worker"] for run in runs[count]]
                                                for count in (1, 2)},
                "load_average": {count: [round(run["load"], 1) for run in runs[count]] for count in (1, 2)},
                # Where the database's backends spent their active time (PostgreSQL): a share waiting
                # for the disk's flush is a ceiling no idle core lifts.
                "backend_waits": {count: [run["backend_waits"] for run in runs[count]] for count in (1, 2)},
                "database_transactions_per_message": {
                    count: [round(run["spent"].get("transactions", 0) / args.messages, 2) for run in runs[count]]
                    for count in (1, 2)},
                "own_cpu_us_by_process": {count: [
                    {name: round(value / args.messages * 1e6) for name, value in run["spent"].items()
                     if name not in ("own", "machine", "machine_busy", "seconds", "transactions")}
                    for run in runs[count]] for count in (1, 2)},
                "goal": "CPU per message of two within 10 % of one's; ratio >= 0.9 of the ceiling",
            }

        # 3. SIGKILL with calls in the platform's hands, another worker running beside it (as in any
        # deployment with more than one): how long the killed worker's rows stay `sending`.
        def kill_part() -> dict[str, Any]:
            out: dict[str, Any] = {}
            http.post("/sandbox/telegram/latency", json={"milliseconds": 1500}).raise_for_status()
            ids = queue(40, "kill")
            victim = start_worker(env, work / "victim.log", args.workers)
            time.sleep(3)
            engine.nudge_now(inbox_work.MESSAGE_WORK, ids)  # the victim takes the tasks
            survivor = start_worker(env, work / "survivor.log", args.workers)
            try:
                wait_until(lambda: "running" in (work / "survivor.log").read_text(), 60)

                def in_flight() -> set[str]:
                    with connection():
                        rows = Message.select(Message.id).where(Message.id.in_(ids), Message.status == "sending")
                        return {row.id for row in rows}

                wait_until(lambda: len(in_flight()) >= 4, 60)
                victim.send_signal(signal.SIGKILL)
                victim.wait()
                killed = time.monotonic()
                orphans = in_flight()  # the survivor's own calls finish within the latency
                wait_until(lambda: not (orphans & in_flight()), 60, 0.02)
                orphans_settled = time.monotonic() - killed
                wait_until(lambda: unsettled(ids) == 0, 120, 0.02)
                all_settled = time.monotonic() - killed
            finally:
                stop([survivor])
            with connection():
                statuses = [m.status for m in Message.select(Message.status).where(Message.id.in_(ids))]
            out["kill"] = {"lease_seconds": LEASE_SECONDS, "orphans_settled_after_seconds": round(orphans_settled, 2),
                              "all_settled_after_seconds": round(all_settled, 2),
                              "unknown": statuses.count("unknown"), "sent": statuses.count("sent"),
                              "goal": f"<= {LEASE_SECONDS + 2}"}
            sent_log = http.get("/sandbox/telegram/sent").json()["data"]
            texts = [row["text"] for row in sent_log if row["kind"] == "dm" and row["text"].startswith("kill ")]
            out["sent_twice"] = len(texts) - len(set(texts))
            return out

        if "workers" in parts:
            report["workers"] = workers_part()
        if "kill" in parts:
            report.update(kill_part())
    print(json.dumps(report, indent=2))
    return 0


def rows_run(log: Path) -> list[int] | None:
    """What a stopped worker's tasks were handed, from its last log line: rows, the batch kinds'
    tasks (the event outbox's dispatch) and the items those took."""
    found = re.findall(r"worker stopped: ran (\d+) rows, (\d+) batch tasks taking (\d+) items", log.read_text())
    return [int(value) for value in found[-1]] if found else None


def start_worker(env: dict[str, str], log_path: Path, threads: int) -> subprocess.Popen[bytes]:
    # BENCH_CALLGRIND=<dir>: each worker under valgrind's callgrind, counting nothing until
    # `count_instructions` turns it on: instructions do not change with the machine's load.
    folder = os.environ.get("BENCH_CALLGRIND")
    wrap = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
            f"--callgrind-out-file={folder}/{log_path.stem}.%p.out"] if folder else []
    with log_path.open("ab") as log:
        return subprocess.Popen([*wrap, sys.executable, "-m", "switchboard", "worker", "--workers", str(threads)],
                                cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)


def count_instructions(pids: list[int], on: bool) -> None:
    if os.environ.get("BENCH_CALLGRIND"):
        for pid in pids:
            subprocess.run(["callgrind_control", "-i", "on" if on else "off", str(pid)], check=False,
                           capture_output=True)
            if not on:
                subprocess.run(["callgrind_control", "-d", str(pid)], check=False, capture_output=True)


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for worker in processes:
        worker.terminate()
    for worker in processes:
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()


if __name__ == "__main__":
    sys.exit(main())
