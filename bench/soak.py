"""Soak: the scale-out setup under a steady mixed load, with processes killed on the way.

    python bench/soak.py [--minutes 10] [--rate 6] [--kills 2] [--preload 1e6] [--keep]

PostgreSQL (a fresh database, `BENCH_POSTGRES`) and Redis (`BENCH_REDIS`), two `serve --no-worker`
API processes behind a small TCP balancer in this process, two `worker` processes and a standalone
`sandbox serve`. For `--minutes`, every second: `--rate` inbox replies (Telegram DMs), a post
published now (X), a comment that a comment automation answers with a private reply (Instagram),
and every 20 s a broadcast to 20 contacts; every event goes to a webhook endpoint on a local HTTPS
receiver. `--kills` times, at a random moment, one worker and one API process are SIGKILLed and
started again. At the end, once the work has settled (in one snapshot of the database: no message
pending or sending, no event undispatched, no delivery waiting, no broadcast of the soak's
uncompleted, no post target of its queued, publishing or being reconciled), it reports:

- lost: DMs, broadcast recipients, private replies (a comment not answered) and posts that never
  reached the platform and are not `unknown` either (a kill during a platform call leaves `unknown`,
  never resent: counted apart, a comment's private reply too), and webhook events never delivered:
  an event still missing a minute after the count is lost, one that arrives in that minute is
  counted `late` (the settling missed some work that was still to announce it);
- sent twice: anything the platform received twice (at-most-once kinds); webhooks are at least
  once, so their repeats are counted but are not a fault;
- p50 / p99 latency of each kind: a reply, the request itself; a post, from the request to its
  `post.published` delivery; a broadcast, to `broadcast.completed`; a comment, from the platform's
  webhook to the private reply on the platform; a webhook, from the event to its arrival;
- RSS of each process at the start and at the end (a process started again is measured from its
  own start).

With `--preload N` (say 1e6), the fresh database is first loaded in bulk with N rows of other
workspaces' history (bench/growth.py's loader: messages, conversations, outbox events and their
deliveries, posts and targets, audit rows; here the outbox's events spread over 60 days, so half are
past the 30 days' retention when the load begins), and the server runs autovacuum with
docs/operations.md's settings for the run (bench/growth.py's `deployment_autovacuum`). The report
then gives the rows by table at the start of the load and at the end, what bounds each, and the rows
left past a retention; and, with or without a preload, each kind's p99 latency minute by minute, the
first minute's against the last's, beside the machine's busy share in each minute.

Anything lost, sent twice or left `unknown` is named in the report (`lost_items`: the message,
recipient, post target, comment and event ids, with their rows' states), so it can be traced. With
`--keep` the database is kept at the end instead of dropped (the report gives its URL), beside the
run's directory with every process's log; the Redis database (`BENCH_REDIS`) is never emptied by
the soak, so its queue is kept too.

Figures depend on the machine's load: the report says what the machine did besides (its busy
share, from /proc/stat, against the benchmark's own processes' CPU).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import signal
import ssl
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import growth  # noqa: E402
from bench.common import CpuMeter, free_port, machine_cpu, scale_out_env, temp_dir, wait_until_up  # noqa: E402


# --- a TCP balancer: the API processes behind one address, as a load balancer would put them ---------
class Balancer:
    def __init__(self, port: int, backends: list[int]) -> None:
        self.port, self.backends = port, backends
        self._turn = 0
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", self.port))
        self.loop.run_forever()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for _ in range(len(self.backends) * 20):  # a backend being restarted refuses: try the next
            self._turn += 1
            port = self.backends[self._turn % len(self.backends)]
            try:
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.05)
        else:
            writer.close()
            return

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, ConnectionError):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            with contextlib.suppress(OSError, RuntimeError):
                sink.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


# --- the webhook receiver: every envelope with its arrival time ------------------------------------
def run_receiver(port: int, cert: str, out: str) -> None:
    import uvicorn

    arrivals: list[tuple[float, str, str, str, Any]] = []

    async def app(scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (message := await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            with open(out, "w") as file:
                json.dump(arrivals, file)
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["path"] == "/dump":
            with open(out, "w") as file:
                json.dump(arrivals, file)
        else:
            with contextlib.suppress(ValueError, KeyError):
                envelope = json.loads(body)
                data = envelope["data"]
                key = data.get("id") if isinstance(data, dict) else None
                arrivals.append((time.time(), envelope["id"], envelope["type"], envelope["createdAt"], key))
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

    uvicorn.run(app, host="127.0.0.1", port=port, ssl_certfile=cert, log_level="warning")


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def instant(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def percentiles(values: list[float]) -> dict[str, float | int | None]:
    if not values:
        return {"count": 0, "p50_ms": None, "p99_ms": None}
    ordered = sorted(values)
    return {"count": len(ordered), "p50_ms": round(statistics.median(ordered) * 1000),
            "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=6.0, help="inbox replies a second")
    parser.add_argument("--kills", type=int, default=2)
    parser.add_argument("--preload", type=float, default=0, help="rows of history loaded first (1e6)")
    parser.add_argument("--keep", action="store_true", help="keep the database at the end (its URL is printed)")
    parser.add_argument("--receiver", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.receiver:
        run_receiver(int(args.receiver[0]), args.receiver[1], args.receiver[2])
        return 0

    import trustme

    work = Path(temp_dir())
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(work / "ca.pem"))
    ca.issue_cert("localhost", "127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(work / "server.pem"))
    hook_port, sandbox_port, front = free_port(), free_port(), free_port()
    api_ports = [free_port(), free_port()]
    arrivals_file = work / "arrivals.json"
    procs: dict[str, subprocess.Popen[bytes]] = {}
    rss: dict[str, dict[str, int]] = {}
    born: dict[str, float] = {}
    report: dict[str, Any] = {"minutes": args.minutes, "replies_per_second": args.rate}

    with scale_out_env(str(work / "data"), keep=args.keep, SWITCHBOARD_BASE_URL=f"http://127.0.0.1:{front}",
                       SWITCHBOARD_SANDBOX="1", SWITCHBOARD_SANDBOX_URL=f"http://127.0.0.1:{sandbox_port}",
                       SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE="1", SWITCHBOARD_WEBHOOK_CA_BUNDLE=str(work / "ca.pem"),
                       SWITCHBOARD_SEND_LEASE_SECONDS="10") as env, \
            (growth.deployment_autovacuum(env["SWITCHBOARD_DATABASE_URL"]) if args.preload
             else contextlib.nullcontext(None)) as vacuuming:
        env["PYTHONPATH"] = str(REPO)
        report["run_directory"] = str(work)  # each process's log: <name>-<start>.log
        if args.keep:
            report["kept_database"] = env["SWITCHBOARD_DATABASE_URL"]
            report["queue"] = env["SWITCHBOARD_QUEUE_URL"]
            print(f"soak: keeping {env['SWITCHBOARD_DATABASE_URL']}; logs in {work}", file=sys.stderr, flush=True)
        report["autovacuum"] = {None: "as the server has it", True: "on, docs/operations.md's settings",
                                False: "off (the server refused ALTER SYSTEM)"}[vacuuming]

        starts: Counter[str] = Counter()

        def start(name: str) -> None:
            starts[name] += 1
            log_path = work / f"{name}-{starts[name]}.log"
            log = log_path.open("ab")
            if name.startswith("api"):
                port = api_ports[int(name[-1])]
                command = ["serve", "--no-worker", "--port", str(port)]
            elif name == "sandbox":
                command = ["sandbox", "serve", "--port", str(sandbox_port)]
            else:
                command = ["worker", "--workers", "4"]
            procs[name] = subprocess.Popen([sys.executable, "-m", "switchboard", *command], cwd=REPO, env=env,
                                           stdout=log, stderr=subprocess.STDOUT)
            if name.startswith("api"):
                wait_until_up(f"http://127.0.0.1:{port}/v1/health", procs[name], 120)
            elif name == "sandbox":
                wait_until_up(f"http://127.0.0.1:{sandbox_port}/sandbox/", procs[name], 120)
            else:
                deadline = time.monotonic() + 120
                while "running" not in log_path.read_text() and time.monotonic() < deadline:
                    time.sleep(0.1)
            born[name] = time.monotonic()
            rss[name] = {}

        receiver = subprocess.Popen([sys.executable, __file__, "--receiver", str(hook_port),
                                     str(work / "server.pem"), str(arrivals_file)], cwd=REPO)
        try:
            boot = subprocess.run([sys.executable, "-m", "switchboard", "bootstrap", "--email", "soak@example.com",
                                   "--password", "soak soak soak", "--json"], env=env, cwd=REPO, check=True,
                                  capture_output=True, text=True)
            tenant = json.loads(boot.stdout)
            preloaded: dict[str, int] = {}
            if args.preload:
                database_url = env["SWITCHBOARD_DATABASE_URL"]
                loaded_at = datetime.now(UTC)
                took = growth.preload(env, int(args.preload), event_days=60)
                report["preload"] = {"rows": int(args.preload), "seconds": round(took)}
                preloaded = table_rows(database_url)
                if vacuuming:
                    report["preload"]["autovacuum_seconds"] = round(growth.await_autovacuum(database_url, loaded_at))
                else:
                    growth.vacuum(database_url)
            for name in ("sandbox", "api0", "api1", "worker0", "worker1"):
                start(name)
            Balancer(front, api_ports)
            auth = {"Authorization": f"Bearer {tenant['apiKey']}"}
            http = httpx2.Client(base_url=f"http://127.0.0.1:{front}", timeout=60)
            sandbox = httpx2.Client(base_url=f"http://127.0.0.1:{sandbox_port}", timeout=60)
            from switchboard.sandbox_seed import connect

            bots = [connect(http, api_key=tenant["apiKey"], profile_id=tenant["profileId"], platform="telegram",
                            username=f"soakbot{n}{uuid.uuid4().hex[:6]}") for n in range(4)]
            x = connect(http, api_key=tenant["apiKey"], profile_id=tenant["profileId"], platform="x")
            instagram = connect(http, api_key=tenant["apiKey"], profile_id=tenant["profileId"], platform="instagram")
            for n, bot in enumerate(bots):
                for contact in range(20):
                    sandbox.post("/sandbox/telegram/inbound-message", json={
                        "accountId": bot["id"], "from": {"id": str(50000 + n * 100 + contact)}, "text": "hi"},
                    ).raise_for_status()
            conversations: dict[str, list[str]] = {}
            for bot in bots:
                listed = wait_for_list(http, auth, bot["id"], 20)
                conversations[bot["id"]] = listed
            http.post("/v1/comment-automations", headers=auth, json={
                "accountId": instagram["id"], "name": "soak", "matchType": "any", "dmText": "thanks"},
            ).raise_for_status()
            http.post("/v1/webhooks", headers=auth, json={"url": f"https://localhost:{hook_port}/hook"},
                      ).raise_for_status()
            hooked_at = time.time()  # events before it have no delivery

            sent_at: dict[str, dict[str, float]] = {"reply": {}, "post": {}, "broadcast": {}, "comment": {}}
            reply_latency: list[tuple[float, float]] = []  # (asked at, seconds)
            failures: Counter[str] = Counter()
            hooks_refused: list[str] = []
            lock = threading.Lock()
            stop = threading.Event()
            meter = CpuMeter(database_url=env["SWITCHBOARD_DATABASE_URL"], queue_url=env["SWITCHBOARD_QUEUE_URL"])

            def reply(n: int) -> None:
                bot = bots[n % len(bots)]
                conversation = conversations[bot["id"]][(n // len(bots)) % 20]
                text = f"soak reply {n}"
                began = time.time()
                try:
                    answer = http.post(f"/v1/conversations/{conversation}/messages", headers=auth, json={"text": text})
                    with lock:
                        sent_at["reply"][text] = began
                        if answer.status_code in (201, 202):
                            reply_latency.append((began, time.time() - began))
                        else:
                            failures[f"reply {answer.status_code}"] += 1
                except httpx2.HTTPError:  # the API process died with the request in it: maybe sent
                    with lock:
                        sent_at["reply"][text] = began
                        failures["reply cut by a kill"] += 1

            def other(n: int) -> None:
                began = time.time()
                with contextlib.suppress(httpx2.HTTPError):
                    made = http.post("/v1/posts", headers=auth, json={
                        "content": f"soak post {n}", "targets": [{"accountId": x["id"]}], "publishNow": True})
                    if made.status_code == 201:
                        with lock:
                            sent_at["post"][made.json()["id"]] = began
                    comment = f"soak-comment-{n}-{uuid.uuid4().hex[:6]}"
                    got = sandbox.post("/sandbox/instagram/comment", json={
                        "accountId": instagram["id"], "mediaId": "soak-media", "commentId": comment,
                        "from": {"id": f"fan{n}", "handle": f"fan{n}"}, "text": "love it"})
                    if got.status_code == 200:
                        with lock:
                            sent_at["comment"][comment] = time.time()
                            if not got.json().get("delivered"):  # the service answered the platform's hook non-2xx
                                failures[f"comment hook answered {got.json().get('hookStatus')}"] += 1
                                hooks_refused.append(comment)
                    if n % 20 == 0:
                        bot = bots[(n // 20) % len(bots)]
                        made = http.post("/v1/broadcasts", headers=auth, json={
                            "accountId": bot["id"], "name": f"soak {n}", "text": f"soak broadcast {n}",
                            "sendNow": True})
                        if made.status_code == 201:
                            with lock:
                                sent_at["broadcast"][made.json()["id"]] = began

            def pace(rate: float, job: Any) -> None:
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(8) as pool:
                    n, next_at = 0, time.monotonic()
                    while not stop.is_set():
                        pool.submit(job, n)
                        n += 1
                        next_at += 1 / rate
                        time.sleep(max(0.0, next_at - time.monotonic()))

            busy_by_minute: list[float] = []

            def sample_machine() -> None:
                """The machine's busy share in each minute of the load (/proc/stat), beside each minute's p99."""
                last = machine_cpu()
                while not stop.wait(60):
                    now = machine_cpu()
                    busy_by_minute.append(round((now[0] - last[0]) / max(1, now[1] - last[1]), 2))
                    last = now

            def sample_rss() -> None:
                while not stop.is_set():
                    for name, proc in list(procs.items()):
                        if time.monotonic() - born[name] >= 15 and proc.poll() is None:
                            rss[name].setdefault("start", rss_kib(proc.pid))
                    stop.wait(1)

            pids = {name: proc.pid for name, proc in procs.items()}
            rows_at_start = table_rows(env["SWITCHBOARD_DATABASE_URL"])  # the retention jobs ran since the preload
            load_began = time.time()
            threading.Thread(target=sample_rss, daemon=True).start()
            threading.Thread(target=sample_machine, daemon=True).start()
            meter.start(pids)
            loaders = [threading.Thread(target=pace, args=(args.rate, reply)), threading.Thread(target=pace,
                                                                                               args=(1.0, other))]
            for loader in loaders:
                loader.start()
            seconds = args.minutes * 60
            moments = sorted(random.uniform(seconds * 0.15, seconds * 0.85) for _ in range(args.kills))
            began = time.monotonic()
            kills = []
            for moment in moments:
                time.sleep(max(0.0, began + moment - time.monotonic()))
                for victim in (random.choice(["worker0", "worker1"]), random.choice(["api0", "api1"])):
                    procs[victim].send_signal(signal.SIGKILL)
                    procs[victim].wait()
                    kills.append({"at_seconds": round(time.monotonic() - began), "process": victim})
                    start(victim)  # its RSS is measured anew from this start
            time.sleep(max(0.0, began + seconds - time.monotonic()))
            stop.set()
            for loader in loaders:
                loader.join()
            spent = meter.stop({name: proc.pid for name, proc in procs.items()})
            for name, proc in procs.items():
                rss[name]["end"] = rss_kib(proc.pid)
            report["kills"] = kills

            # Let the work settle (`open_work`): nothing left that could still send or announce.
            from storage.db import initialise

            initialise(env["SWITCHBOARD_DATABASE_URL"])
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                left = open_work(env["SWITCHBOARD_DATABASE_URL"], tenant["workspaceId"])
                if not any(left.values()):
                    break
                time.sleep(1)
            settled_after = time.monotonic() - began - seconds
            report["settled_at"] = datetime.now(UTC).isoformat()
            report["settled_seconds_after_load"] = round(settled_after)
            report.update(settle_report(sandbox, sent_at, reply_latency, arrivals_file, hook_port, work, bots, x,
                                        instagram, hooked_at, tenant["workspaceId"]))
            report["failures_seen_by_clients"] = dict(failures)
            if hooks_refused:
                report["comment_hooks_refused"] = hooks_refused
            report["p99_by_minute"] = report.pop("timed")  # (settle_report's) per kind, minute by minute
            report["p99_by_minute"] = {kind: by_minute(samples, load_began, int(args.minutes))
                                       for kind, samples in report["p99_by_minute"].items()}
            report["rows"] = rows_report(env["SWITCHBOARD_DATABASE_URL"], rows_at_start, preloaded)
            # From 15 s into each process's life under load (warmed up) to the end; a process started
            # again after a kill is measured from its own start.
            report["rss_kib"] = {name: {"start": value.get("start"), "end": value.get("end"),
                                        "growth": round(value["end"] / value["start"] - 1, 3)
                                        if value.get("start") else None} for name, value in rss.items()}
            report["cpu_seconds"] = {name: round(value, 1) for name, value in spent.items() if name != "machine_busy"}
            report["machine_busy"] = round(spent["machine_busy"], 2)
            report["machine_busy_by_minute"] = busy_by_minute
        finally:
            for proc in procs.values():
                if proc.poll() is None:
                    proc.terminate()
            for proc in procs.values():
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=20)
            receiver.terminate()
            receiver.wait(timeout=20)
    print(json.dumps(report, indent=2))
    return 0


# One statement, so one snapshot: a message's outcome commits with its event, an event's dispatch
# with its deliveries, so nothing moves between counts taken apart and is missed by both. Besides the
# outbox, what will still send or announce: the soak's broadcasts not completed (the last recipient's
# outcome commits before `broadcast.completed`, which the worker or the next tick writes after it)
# and its post targets queued, publishing, or `unknown` awaiting their reconciliation.
_OPEN_WORK = """
SELECT (SELECT count(*) FROM message WHERE status IN ('pending', 'sending')),
       (SELECT count(*) FROM webhook_delivery WHERE status IN ('QUEUED', 'RETRYING')),
       (SELECT count(*) FROM event WHERE dispatched_at IS NULL),
       (SELECT count(*) FROM broadcast WHERE workspace_id = %(workspace)s AND status IN ('scheduled', 'sending')),
       (SELECT count(*) FROM post_target WHERE workspace_id = %(workspace)s
           AND (status IN ('queued', 'publishing') OR (status = 'unknown' AND next_attempt_at IS NOT NULL)))
"""


def open_work(database_url: str, workspace: str) -> dict[str, int]:
    """What is still to be done: messages, deliveries, undispatched events, broadcasts, post targets."""
    import psycopg2

    connection = psycopg2.connect(database_url)
    try:
        with connection.cursor() as cursor:
            cursor.execute(_OPEN_WORK, {"workspace": workspace})
            counts = cursor.fetchone()
    finally:
        connection.close()
    return dict(zip(("messages", "deliveries", "events", "broadcasts", "post_targets"), map(int, counts),
                    strict=True))


def wait_for_list(http: httpx2.Client, auth: dict[str, str], account_id: str, count: int) -> list[str]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        data = http.get("/v1/conversations", headers=auth, params={"accountId": account_id, "limit": 100}).json()
        if len(data["data"]) >= count:
            return [row["id"] for row in data["data"]]
        time.sleep(0.2)
    raise SystemExit("the contacts' conversations did not appear")


def settle_report(sandbox: httpx2.Client, sent_at: dict[str, dict[str, float]],
                  reply_latency: list[tuple[float, float]],
                  arrivals_file: Path, hook_port: int, work: Path, bots: list[dict], x: dict,
                  instagram: dict, hooked_at: float, workspace: str) -> dict[str, Any]:
    from storage.db import connection
    from storage.models import AutomationLog, BroadcastRecipient, Event, Message, PostTarget, WebhookDelivery

    context = ssl.create_default_context(cafile=str(work / "ca.pem"))
    httpx2.post(f"https://localhost:{hook_port}/dump", verify=context, timeout=30)
    arrivals = json.loads(arrivals_file.read_text())
    dm_log = [row for bot in bots for row in
              sandbox.get("/sandbox/telegram/sent", params={"accountId": bot["id"]}).json()["data"]]
    x_log = sandbox.get("/sandbox/x/sent", params={"accountId": x["id"]}).json()["data"]
    ig_log = sandbox.get("/sandbox/instagram/sent", params={"accountId": instagram["id"]}).json()["data"]
    out: dict[str, Any] = {}

    # Replies: each text once on the platform, or `unknown` (a kill during its call).
    texts = Counter(row["text"] for row in dm_log if row["kind"] == "dm" and row["text"].startswith("soak reply"))
    with connection():
        replies = {m.text: m for m in Message.select(Message.id, Message.text, Message.status)
                   .where(Message.text.startswith("soak reply"))}
        statuses = {text: message.status for text, message in replies.items()}
        recipient_rows = list(BroadcastRecipient.select(BroadcastRecipient.id, BroadcastRecipient.status,
                                                        BroadcastRecipient.message_id))
        recipients = Counter(r.status for r in recipient_rows)
        # The soak's own workspace's (a preloaded history has other workspaces' posts waiting).
        target_rows = list(PostTarget.select(PostTarget.id, PostTarget.post, PostTarget.status)
                           .where(PostTarget.workspace == workspace))
        targets = Counter(t.status for t in target_rows)
        events = {e.id for e in Event.select(Event.id, Event.created_at).where(Event.workspace == workspace)
                  if e.created_at.replace(tzinfo=UTC).timestamp() > hooked_at}
    asked = set(sent_at["reply"])
    lost_replies = [text for text in asked if text in statuses and text not in texts
                    and statuses[text] not in ("unknown", "failed")]
    out["replies"] = {
        "asked": len(asked), "on_platform": len(texts), "sent_twice": sum(1 for n in texts.values() if n > 1),
        "unknown": sum(1 for text in asked if statuses.get(text) == "unknown"),
        "never_stored": sum(1 for text in asked if text not in statuses),  # the request died with its process
        "lost": len(lost_replies),
        "latency": percentiles([seconds for _, seconds in reply_latency])}
    broadcast_dms = Counter((row["to"], row["text"]) for row in dm_log
                            if row["kind"] == "dm" and row["text"].startswith("soak broadcast"))
    out["broadcast_recipients"] = {"statuses": dict(recipients),
                                   "sent_twice": sum(1 for n in broadcast_dms.values() if n > 1),
                                   "lost": recipients.get("pending", 0)}
    posts = Counter(row["text"] for row in x_log if row["kind"] == "post")
    out["posts"] = {"asked": len(sent_at["post"]), "targets": dict(targets),
                    "sent_twice": sum(1 for n in posts.values() if n > 1),
                    "lost": targets.get("queued", 0) + targets.get("publishing", 0)}
    replies_to = Counter(row["to"] for row in ig_log if row["kind"] == "private_reply")
    unanswered = [comment for comment in sent_at["comment"] if comment not in replies_to]
    with connection():
        private_replies = {m.comment_id: m for m in Message.select(
            Message.id, Message.comment_id, Message.status, Message.attempts, Message.error, Message.next_attempt_at,
            Message.claimed_until).where(Message.comment_id.in_(unanswered))} if unanswered else {}
        logged = {entry.comment_id: entry for entry in AutomationLog.select(
            AutomationLog.id, AutomationLog.comment_id, AutomationLog.message_id, AutomationLog.reason)
            .where(AutomationLog.comment_id.in_(unanswered))} if unanswered else {}
    # A private reply whose call a kill cut is `unknown` (never sent again), as a reply's is.
    lost_comments = [comment for comment in unanswered if comment not in private_replies
                     or private_replies[comment].status not in ("unknown", "failed")]
    out["comments"] = {"asked": len(sent_at["comment"]), "answered": len(replies_to),
                       "sent_twice": sum(1 for n in replies_to.values() if n > 1),
                       "not_answered": len(unanswered),
                       "unknown": sum(1 for c in unanswered if c in private_replies
                                      and private_replies[c].status == "unknown"),
                       "failed": sum(1 for c in unanswered if c in private_replies
                                     and private_replies[c].status == "failed"),
                       "lost": len(lost_comments),
                       "latency": percentiles([instant(row["at"]) - sent_at["comment"][row["to"]] for row in ig_log
                                               if row["kind"] == "private_reply" and row["to"] in sent_at["comment"]])}
    delivered = Counter(envelope_id for _, envelope_id, _, _, _ in arrivals)
    first: dict[tuple[str, Any], float] = {}
    for at, _, kind, _, key in arrivals:
        first.setdefault((kind, key), at)
    missing = sorted(events - set(delivered))
    # Late or lost: the work has settled, so an event still to arrive is a fault of the settling (late)
    # or lost. Looked for again for a minute: one that arrives was late, the others are lost.
    counted, late = time.time(), dict[str, float]()
    while missing and time.time() < counted + 60 and len(late) < len(missing):
        time.sleep(2)
        httpx2.post(f"https://localhost:{hook_port}/dump", verify=context, timeout=30)
        for at, envelope_id, _, _, _ in json.loads(arrivals_file.read_text()):
            if envelope_id in missing:
                late.setdefault(envelope_id, round(at - counted, 1))
    lost_events = [event for event in missing if event not in late]
    out["webhooks"] = {"events": len(events), "delivered": len(delivered), "late": len(late),
                       "lost": len(lost_events), "repeated": sum(n - 1 for n in delivered.values()),
                       "latency": percentiles([at - instant(created) for at, _, _, created, _ in arrivals])}

    # What was lost, sent twice or left `unknown`, by id, with its rows' states: to trace it in a kept
    # database (--keep) and the processes' logs.
    def when(moment: Any) -> str | None:
        return moment.isoformat() if moment is not None else None

    def work_row(row: Any) -> dict[str, Any]:
        return {"id": row.id, "status": row.status, "attempts": row.attempts,
                "next_attempt_at": when(row.next_attempt_at), "claimed_until": when(row.claimed_until)}

    items: dict[str, Any] = {}
    if lost_replies:
        items["replies"] = [{"text": text, "message": replies[text].id, "status": replies[text].status}
                            for text in sorted(lost_replies)]
    if unknown_replies := sorted(text for text in asked if statuses.get(text) == "unknown"):
        items["replies_unknown"] = [{"text": text, "message": replies[text].id} for text in unknown_replies]
    if twice := sorted(text for text, n in texts.items() if n > 1):
        items["replies_sent_twice"] = [{"text": text, "message": getattr(replies.get(text), "id", None)}
                                       for text in twice]
    if pending := [r for r in recipient_rows if r.status in ("pending", "unknown")]:
        items["broadcast_recipients"] = [{"id": r.id, "status": r.status, "message": r.message_id} for r in pending]
    if stuck := [t for t in target_rows if t.status in ("queued", "publishing", "unknown")]:
        items["post_targets"] = [{"id": t.id, "post": t.post_id, "status": t.status} for t in stuck]
    if unanswered:
        items["comments"] = [
            {"comment": comment, "asked_at": datetime.fromtimestamp(sent_at["comment"][comment], UTC).isoformat(),
             "automation_log": logged[comment].id if comment in logged else None,
             "log_reason": logged[comment].reason if comment in logged else None,
             "private_reply": {**work_row(private_replies[comment]), "error": private_replies[comment].error}
             if comment in private_replies else None}
            for comment in unanswered]
    if missing:
        with connection():
            missing_rows = {e.id: e for e in Event.select(Event.id, Event.type, Event.created_at,
                                                          Event.dispatched_at).where(Event.id.in_(missing))}
            deliveries: dict[str, list[Any]] = {}
            for d in WebhookDelivery.select().where(WebhookDelivery.event.in_(missing)):
                deliveries.setdefault(d.event_id, []).append(d)
        items["webhook_events"] = [
            {"event": event, "type": missing_rows[event].type, "created_at": when(missing_rows[event].created_at),
             "dispatched_at": when(missing_rows[event].dispatched_at),
             "arrived_seconds_after_the_count": late.get(event),
             "deliveries": [{**work_row(d), "last_error": d.last_error, "response_status": d.response_status,
                             "nudged_at": when(d.nudged_at), "updated_at": when(d.updated_at)}
                            for d in deliveries.get(event, [])]}
            for event in missing]
    if items:
        out["lost_items"] = items
    out["posts"]["latency"] = percentiles([first[("post.published", post)] - began
                                           for post, began in sent_at["post"].items()
                                           if ("post.published", post) in first])
    out["broadcasts"] = {"asked": len(sent_at["broadcast"]), "latency": percentiles(
        [first[("broadcast.completed", b)] - began for b, began in sent_at["broadcast"].items()
         if ("broadcast.completed", b) in first])}
    # Each latency with the instant its work was asked for, for the minute-by-minute p99.
    out["timed"] = {
        "reply": reply_latency,
        "post": [(began, first[("post.published", post)] - began) for post, began in sent_at["post"].items()
                 if ("post.published", post) in first],
        "broadcast": [(began, first[("broadcast.completed", b)] - began) for b, began in sent_at["broadcast"].items()
                      if ("broadcast.completed", b) in first],
        "comment": [(sent_at["comment"][row["to"]], instant(row["at"]) - sent_at["comment"][row["to"]])
                    for row in ig_log if row["kind"] == "private_reply" and row["to"] in sent_at["comment"]],
        "webhook": [(instant(created), at - instant(created)) for at, _, _, created, _ in arrivals]}
    return out


def by_minute(samples: list[tuple[float, float]], began: float, whole: int) -> dict[str, Any]:
    """A kind's p99 latency (ms) in each whole minute of the load, by when its work was asked for, and
    the last minute's against the first's."""
    minutes: dict[int, list[float]] = {}
    for at, seconds in samples:
        if at >= began:
            minutes.setdefault(int((at - began) // 60), []).append(seconds)
    series = [percentiles(minutes.get(minute, []))["p99_ms"] for minute in range(whole)]
    first, last = (series[0], series[-1]) if series else (None, None)
    return {"p99_ms": series, "first": first, "last": last,
            "last_vs_first": round(last / first, 2) if first and last else None}


# What keeps each table's rows bounded (docs/operations.md), and for those with a retention, the column
# and the age past which no row should be left.
BOUNDS: dict[str, tuple[str, str | None, float]] = {
    "event": ("outbox retention, 30 days", "created_at", 30 * 86400),
    "webhook_delivery": ("its event's retention, 30 days", "created_at", 30 * 86400),
    "audit_entry": ("audit retention, 400 days", "at", 400 * 86400),
    "idempotency_record": ("24 hours", "created_at", 86400),
    "inbound_record": ("inbound retention, 31 days", "processed_at", 31 * 86400),
    "rate_limit_counter": ("old windows, each minute", None, 0),
    "session": ("expiry", None, 0),
    "account_chore": ("one row per account and chore", None, 0),
    "inbox_poll": ("one row per polled account", None, 0),
}


def table_rows(database_url: str) -> dict[str, int]:
    """Rows of every table of the schema, counted."""
    import psycopg2

    connection = psycopg2.connect(database_url)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
            tables = [row[0] for row in cursor.fetchall()]
            counts = {}
            for table in tables:
                cursor.execute(f'SELECT count(*) FROM "{table}"')
                counts[table] = int(cursor.fetchone()[0])
        return counts
    finally:
        connection.close()


def rows_report(database_url: str, at_start: dict[str, int], preloaded: dict[str, int]) -> dict[str, Any]:
    """Rows by table at the start of the load and at the end, what bounds each, and for a table with a
    retention, its rows older than it at the end (none, when the retention keeps up)."""
    import psycopg2

    at_end = table_rows(database_url)
    out: dict[str, Any] = {}
    connection = psycopg2.connect(database_url)
    try:
        with connection.cursor() as cursor:
            for table, rows in at_end.items():
                if not rows and not at_start.get(table):
                    continue
                bound, column, seconds = BOUNDS.get(table, ("no retention: the workspaces' own record", None, 0))
                entry: dict[str, Any] = {"preloaded": preloaded.get(table), "start": at_start.get(table, 0),
                                         "end": rows, "bounded_by": bound}
                if column:
                    cursor.execute(f'SELECT count(*) FROM "{table}" WHERE "{column}" < '
                                   "now() AT TIME ZONE 'UTC' - make_interval(secs => %s)", (seconds,))
                    entry["past_retention"] = int(cursor.fetchone()[0])
                out[table] = entry
        return out
    finally:
        connection.close()


if __name__ == "__main__":
    sys.exit(main())
