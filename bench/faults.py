"""Faults: the service's dependencies fail under a steady mixed load, and what it does about it.

    python bench/faults.py [--quick] [--only postgres,redis,stall,platform,disk] [--outage-seconds 120]
                           [--json]

The scale-out setup (two `serve --no-worker` API processes behind a small TCP balancer, two
`worker` processes, a standalone `sandbox serve`) on a PostgreSQL cluster and a Redis server of its
own (made here, on free ports, removed at the end: never the machine's shared ones), under a steady
load: Telegram DMs (inbox replies), X posts published now, a broadcast to 60 contacts in each
phase, every event delivered to a webhook endpoint on a local HTTPS receiver. One after the other:

- `postgres`: the cluster is restarted (`pg_ctlcluster ... restart`, or `pg_ctl restart`);
- `redis`: the Redis server is stopped, and started again 3 s later;
- `stall`: Redis drops every connection and answers no one for 8 s (`CLIENT KILL TYPE normal`,
  `CLIENT PAUSE 8000 ALL`), the server itself running on;
- `platform`: Telegram answers every call 500 for half of `--outage-seconds`, then holds every call
  unanswered (the sandbox's 504 fault) for the other half; the load goes on, and the work drains after;
- `disk`: the embedded setup (one `serve`, SQLite) with its data dir on a small tmpfs, which is
  filled while DMs and posts are made, then emptied.

Each fault reports the requests refused during it (by status), the time from the fault's end until
the API answered writes again (`recovered_seconds`), and, once the work has settled, the phase's
messages, broadcast recipients and posts that were lost (taken with 2xx, never on the platform,
neither `failed` nor `unknown`), sent twice, failed, and left `unknown` with the reason stored on
each. `--quick` shortens the platform outage to 20 s and every phase's tail (a run of some 5
minutes instead of 15). Needs root (or a user that may run `pg_createcluster`), PostgreSQL 15's
binaries, `redis-server` and, for `disk`, permission to mount a tmpfs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import embedded_env, free_port, temp_dir, wait_until_up  # noqa: E402
from bench.soak import Balancer, wait_for_list  # noqa: E402

PG_BIN = Path("/usr/lib/postgresql/15/bin")
CONTACTS = 60  # per bot; two bots: the 120 contacts of a broadcast pair


# --- the dependencies, our own ----------------------------------------------------------------------
class Postgres:
    """A PostgreSQL cluster for this run only: `pg_createcluster` as root, else `initdb` in a temp dir."""

    def __init__(self, work: Path) -> None:
        self.port = free_port()
        self.name = f"sbfaults{uuid.uuid4().hex[:6]}"
        self.managed = os.geteuid() == 0 and shutil.which("pg_createcluster") is not None
        self.data = work / "pg"
        if self.managed:
            subprocess.run(["pg_createcluster", "15", self.name, "-p", str(self.port), "-o", "max_connections=300",
                            "--", "--auth=trust"],
                           check=True, capture_output=True)
        else:
            subprocess.run([str(PG_BIN / "initdb"), "-D", str(self.data), "--auth=trust", "-U", "postgres"],
                           check=True, capture_output=True)
        self.start()
        import psycopg2

        admin = psycopg2.connect(self.server + "/postgres")
        admin.autocommit = True
        with admin.cursor() as cursor:
            cursor.execute("CREATE DATABASE switchboard")
        admin.close()

    @property
    def server(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}"

    def _ctl(self, action: str) -> None:
        if self.managed:
            subprocess.run(["pg_ctlcluster", "--skip-systemctl-redirect", "15", self.name, action], check=True,
                           capture_output=True)
        else:
            subprocess.run([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-w", "-l", str(self.data / "log"),
                            "-o", f"-p {self.port} -k {self.data} -c max_connections=300", action],
                           check=True, capture_output=True)

    def start(self) -> None:
        self._ctl("start")

    def restart(self) -> None:
        self._ctl("restart")

    def remove(self) -> None:
        if self.managed:
            subprocess.run(["pg_dropcluster", "15", self.name, "--stop"], capture_output=True)
        else:
            with contextlib.suppress(subprocess.CalledProcessError):
                self._ctl("stop")


class Redis:
    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(["redis-server", "--port", str(self.port), "--save", "", "--appendonly", "no",
                                         "--bind", "127.0.0.1"], stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while self.cli("PING") != "PONG":
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        assert self.process is not None
        self.process.terminate()
        self.process.wait(timeout=20)

    def cli(self, *command: str) -> str:
        done = subprocess.run(["redis-cli", "-p", str(self.port), *command], capture_output=True, text=True)
        return done.stdout.strip()


# --- the load ---------------------------------------------------------------------------------------
class Load:
    """Steady DMs and posts through the balancer, each named for the phase it was made in; every
    answer kept (time, phase, kind, status) for the phase's report."""

    def __init__(self, http: httpx2.Client, auth: dict[str, str], conversations: list[str], x: dict[str, Any],
                 rate: float) -> None:
        self.http, self.auth, self.conversations, self.x, self.rate = http, auth, conversations, x, rate
        self.phase = "steady"
        self.answers: list[tuple[float, str, str, int]] = []  # (time, phase, kind, status; 0: no answer)
        self.replies: dict[str, str] = {}  # text -> phase
        self.refused_replies: set[str] = set()
        self.posts: dict[str, str] = {}  # content -> phase
        self.refused_posts: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _note(self, kind: str, status: int) -> None:
        with self._lock:
            self.answers.append((time.monotonic(), self.phase, kind, status))

    def _reply(self, n: int) -> None:
        text = f"faults {self.phase} reply {n}"
        self.replies[text] = self.phase
        try:
            answer = self.http.post(f"/v1/conversations/{self.conversations[n % len(self.conversations)]}/messages",
                                    headers=self.auth, json={"text": text})
            status = answer.status_code
        except httpx2.HTTPError:
            status = 0
        if status not in (201, 202):
            self.refused_replies.add(text)
        self._note("reply", status)

    def _post(self, n: int) -> None:
        content = f"faults {self.phase} post {n}"
        self.posts[content] = self.phase
        try:
            answer = self.http.post("/v1/posts", headers=self.auth, json={
                "content": content, "targets": [{"accountId": self.x["id"]}], "publishNow": True})
            status = answer.status_code
        except httpx2.HTTPError:
            status = 0
        if status != 201:
            self.refused_posts.add(content)
        self._note("post", status)

    def _run(self) -> None:
        with ThreadPoolExecutor(16) as pool:
            n, next_at = 0, time.monotonic()
            while not self._stop.is_set():
                pool.submit(self._reply, n)
                if n % 4 == 0:
                    pool.submit(self._post, n)
                n += 1
                next_at += 1 / self.rate
                time.sleep(max(0.0, next_at - time.monotonic()))

    def refused(self, phase: str) -> dict[str, int]:
        with self._lock:
            return dict(Counter(f"{kind} {status or 'no answer'}" for _, p, kind, status in self.answers
                                if p == phase and status not in (201, 202)))

    def first_write_after(self, moment: float) -> float | None:
        with self._lock:
            times = [at for at, _, _, status in self.answers if at >= moment and status in (201, 202)]
        return min(times) if times else None


def wait_recovered(load: Load, since: float, timeout: float = 180) -> float | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        first = load.first_write_after(since)
        if first is not None:
            return round(first - since, 1)
        time.sleep(0.2)
    return None


# --- the scale-out run ------------------------------------------------------------------------------
def scale_out(args: argparse.Namespace, phases: list[str], work: Path) -> dict[str, Any]:
    import trustme

    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(work / "ca.pem"))
    ca.issue_cert("localhost", "127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(work / "server.pem"))
    hook_port, sandbox_port, front = free_port(), free_port(), free_port()
    api_ports = [free_port(), free_port()]
    postgres, redis = Postgres(work), Redis()
    report: dict[str, Any] = {}
    procs: dict[str, subprocess.Popen[bytes]] = {}
    receiver = subprocess.Popen([sys.executable, str(REPO / "bench" / "soak.py"), "--receiver", str(hook_port),
                                 str(work / "server.pem"), str(work / "arrivals.json")], cwd=REPO)
    env = embedded_env(str(work / "data"), SWITCHBOARD_DATABASE_URL=postgres.server + "/switchboard",
                       SWITCHBOARD_QUEUE_URL=redis.url, SWITCHBOARD_BASE_URL=f"http://127.0.0.1:{front}",
                       SWITCHBOARD_SANDBOX="1", SWITCHBOARD_SANDBOX_URL=f"http://127.0.0.1:{sandbox_port}",
                       SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE="1", SWITCHBOARD_WEBHOOK_CA_BUNDLE=str(work / "ca.pem"),
                       SWITCHBOARD_WEBHOOK_RETRY_DELAYS="2,5,10,30,60")
    try:
        for name, command, url in (
                ("sandbox", ["sandbox", "serve", "--port", str(sandbox_port)],
                 f"http://127.0.0.1:{sandbox_port}/sandbox/"),
                ("api0", ["serve", "--no-worker", "--port", str(api_ports[0])], f"http://127.0.0.1:{api_ports[0]}/v1/health"),
                ("api1", ["serve", "--no-worker", "--port", str(api_ports[1])], f"http://127.0.0.1:{api_ports[1]}/v1/health"),
                ("worker0", ["worker", "--workers", "4"], None), ("worker1", ["worker", "--workers", "4"], None)):
            log = (work / f"{name}.log").open("ab")
            procs[name] = subprocess.Popen([sys.executable, "-m", "switchboard", *command], cwd=REPO, env=env,
                                           stdout=log, stderr=subprocess.STDOUT)
            if url is not None:
                wait_until_up(url, procs[name], 120)
        Balancer(front, api_ports)
        boot = subprocess.run([sys.executable, "-m", "switchboard", "bootstrap", "--email", "faults@example.com",
                               "--password", "faults faults", "--json"], env=env, cwd=REPO, check=True,
                              capture_output=True, text=True)
        tenant = json.loads(boot.stdout)
        auth = {"Authorization": f"Bearer {tenant['apiKey']}"}
        http = httpx2.Client(base_url=f"http://127.0.0.1:{front}", timeout=60)
        sandbox = httpx2.Client(base_url=f"http://127.0.0.1:{sandbox_port}", timeout=60)
        from switchboard.sandbox_seed import connect

        bots = [connect(http, api_key=tenant["apiKey"], profile_id=tenant["profileId"], platform="telegram",
                        username=f"faultsbot{n}{uuid.uuid4().hex[:6]}") for n in range(2)]
        x = connect(http, api_key=tenant["apiKey"], profile_id=tenant["profileId"], platform="x")
        for n, bot in enumerate(bots):
            for contact in range(CONTACTS):
                sandbox.post("/sandbox/telegram/inbound-message", json={
                    "accountId": bot["id"], "from": {"id": str(70000 + n * 1000 + contact)}, "text": "hi"},
                ).raise_for_status()
        conversations = [c for bot in bots for c in wait_for_list(http, auth, bot["id"], CONTACTS)]
        http.post("/v1/webhooks", headers=auth, json={"url": f"https://localhost:{hook_port}/hook"}).raise_for_status()
        load = Load(http, auth, conversations, x, args.rate)
        load.start()
        tail = 15.0 if args.quick else 30.0
        time.sleep(5)
        broadcasts: dict[str, str] = {}

        def broadcast(phase: str) -> None:
            bot = bots[len(broadcasts) % len(bots)]
            for _ in range(30):
                with contextlib.suppress(httpx2.HTTPError):
                    made = http.post("/v1/broadcasts", headers=auth, json={
                        "accountId": bot["id"], "name": f"faults {phase}", "text": f"faults {phase} broadcast",
                        "sendNow": True})
                    if made.status_code == 201:
                        broadcasts[made.json()["id"]] = phase
                        return
                time.sleep(1)

        def phase(name: str, fault: Callable[[], None]) -> None:
            load.phase = name
            broadcast(name)
            time.sleep(2)  # the broadcast under way when the fault strikes
            began = time.monotonic()
            fault()
            ended = time.monotonic()
            recovered = wait_recovered(load, ended)
            time.sleep(tail)
            report[name] = {"fault_seconds": round(ended - began, 1), "recovered_seconds": recovered,
                            "refused": load.refused(name)}

        def restart_redis() -> None:
            redis.stop()
            time.sleep(3)
            redis.start()

        def stall_redis() -> None:
            redis.cli("CLIENT", "KILL", "TYPE", "normal")
            redis.cli("CLIENT", "PAUSE", "8000", "ALL")
            time.sleep(8)

        outage = 20.0 if args.quick else args.outage_seconds

        def platform_outage() -> None:
            sandbox.post("/sandbox/telegram/faults", json={"failNext": 1_000_000, "status": 500}).raise_for_status()
            time.sleep(outage / 2)
            sandbox.post("/sandbox/telegram/faults", json={"failNext": 1_000_000, "status": 504,
                                                           "holdSeconds": 20}).raise_for_status()
            time.sleep(outage / 2)
            sandbox.post("/sandbox/telegram/faults", json={"failNext": 0, "status": 500}).raise_for_status()

        faults = {"postgres": postgres.restart, "redis": restart_redis, "stall": stall_redis,
                  "platform": platform_outage}
        for name in phases:
            if name in faults:
                phase(name, faults[name])
        load.phase = "after"
        time.sleep(3)
        load.stop()
        report["settled_seconds"] = settle(env["SWITCHBOARD_DATABASE_URL"], limit=900)
        account(report, env["SWITCHBOARD_DATABASE_URL"], load, broadcasts, sandbox, bots, x)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in procs.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=20)
        receiver.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            receiver.wait(timeout=20)
        with contextlib.suppress(Exception):
            redis.stop()
        postgres.remove()
    return report


def settle(database_url: str, *, limit: float) -> float | None:
    """Seconds until nothing is pending or sending and every broadcast and post target is done."""
    from storage.db import connection, initialise
    from storage.models import BroadcastRecipient, Message, PostTarget

    initialise(database_url)
    began = time.monotonic()
    while time.monotonic() - began < limit:
        with connection():
            open_rows = (Message.select().where(Message.status.in_(("pending", "sending"))).count()
                         + BroadcastRecipient.select().where(BroadcastRecipient.status == "pending").count()
                         + PostTarget.select().where(PostTarget.status.in_(("queued", "publishing"))).count())
        if not open_rows:
            return round(time.monotonic() - began, 1)
        time.sleep(1)
    return None


def account(report: dict[str, Any], database_url: str, load: Load, broadcasts: dict[str, str],
            sandbox: httpx2.Client, bots: list[dict[str, Any]], x: dict[str, Any]) -> None:
    """Each phase's lost, sent twice, failed and unknown, from storage and the platform's own log."""
    from storage.db import connection
    from storage.models import Broadcast, BroadcastRecipient, Message, Post, PostTarget

    dm_log = [row for bot in bots for row in
              sandbox.get("/sandbox/telegram/sent", params={"accountId": bot["id"]}).json()["data"]
              if row["kind"] == "dm"]
    on_platform = Counter(row["text"] for row in dm_log)
    delivered = Counter((row["to"], row["text"]) for row in dm_log)
    x_log = Counter(row["text"] for row in sandbox.get("/sandbox/x/sent", params={"accountId": x["id"]}).json()["data"]
                    if row["kind"] == "post")
    with connection():
        messages = {m.text: (m.status, m.error) for m in Message.select(Message.text, Message.status, Message.error)
                    .where(Message.text.startswith("faults "), Message.text.contains(" reply "))}
        recipients = [(r.broadcast_id, r.status, r.reason) for r in BroadcastRecipient.select(
            BroadcastRecipient.broadcast, BroadcastRecipient.status, BroadcastRecipient.reason)]
        names = {b.id: b.name for b in Broadcast.select(Broadcast.id, Broadcast.name)}
        targets = [(t.post.content, t.status, t.error) for t in PostTarget.select(
            PostTarget.status, PostTarget.error, Post.content).join(Post)]
    for phase in {*load.replies.values(), *broadcasts.values()}:
        entry = report.setdefault(phase, {})
        asked = [text for text, p in load.replies.items() if p == phase]
        stored = [text for text in asked if text in messages]
        statuses = Counter(messages[text][0] for text in stored)
        unknown_why = Counter(messages[text][1] for text in stored if messages[text][0] == "unknown")
        entry["messages"] = {
            "asked": len(asked), "refused": sum(1 for text in asked if text in load.refused_replies),
            "stored_though_refused": sum(1 for text in stored if text in load.refused_replies),
            "statuses": dict(statuses),
            "lost": sum(1 for text in stored
                        if text not in on_platform and messages[text][0] not in ("unknown", "failed")),
            "sent_twice": sum(1 for text in asked if on_platform.get(text, 0) > 1),
            "unknown": statuses.get("unknown", 0), "unknown_why": dict(unknown_why)}
        phase_broadcasts = {b for b, p in broadcasts.items() if p == phase}
        rows = [(status, error) for b, status, error in recipients if b in phase_broadcasts]
        text = f"faults {phase} broadcast"
        entry["broadcast_recipients"] = {
            "count": len(rows), "statuses": dict(Counter(status for status, _ in rows)),
            "lost": sum(1 for status, _ in rows if status == "pending"),
            "sent_twice": sum(1 for (to, sent), n in delivered.items() if sent == text and n > 1),
            "unknown_why": dict(Counter(error for status, error in rows if status == "unknown"))}
        assert all(names.get(b) == f"faults {p}" for b, p in broadcasts.items())
        posted = [(content, status, error) for content, status, error in targets
                  if load.posts.get(content) == phase]
        entry["posts"] = {
            "asked": sum(1 for p in load.posts.values() if p == phase),
            "refused": sum(1 for content, p in load.posts.items() if p == phase and content in load.refused_posts),
            "statuses": dict(Counter(status for _, status, _ in posted)),
            "lost": sum(1 for content, status, _ in posted if status in ("queued", "publishing")
                        or (status == "published" and x_log.get(content, 0) == 0)),
            "sent_twice": sum(1 for content, _, _ in posted if x_log.get(content, 0) > 1),
            "unknown_why": dict(Counter(error for _, status, error in posted if status == "unknown"))}


# --- a full disk under the embedded setup -------------------------------------------------------------
@contextlib.contextmanager
def small_disk(work: Path, megabytes: int) -> Iterator[Path | None]:
    target = work / "disk"
    target.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={megabytes}m,mode=0700", "tmpfs", str(target)],
                             capture_output=True).returncode == 0
    try:
        yield target if mounted else None
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(target)], capture_output=True)


def fill(directory: Path) -> Path:
    """Fill the file system under `directory` to the last byte with one file; return it."""
    filler = directory / "filler"
    # Unbuffered: a buffered file's close would flush into the full disk and raise.
    with filler.open("wb", buffering=0) as out:
        for size in (1 << 20, 4096, 1):  # to the last byte
            with contextlib.suppress(OSError):
                while True:
                    out.write(b"\0" * size)
    return filler


def full_disk(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    with small_disk(work, 96) as disk:
        if disk is None:
            return {"skipped": "mounting a tmpfs is not permitted here"}
        port, sandbox_port = free_port(), free_port()
        # The platform keeps its own disk: what it received is counted, not lost with the service's.
        env = embedded_env(str(disk / "data"), SWITCHBOARD_BASE_URL=f"http://127.0.0.1:{port}",
                           SWITCHBOARD_SANDBOX="1", SWITCHBOARD_SANDBOX_URL=f"http://127.0.0.1:{sandbox_port}")
        # It reads the service's accounts (to resolve their ids) from the service's database file.
        platform_env = embedded_env(str(work / "sandbox-data"), SWITCHBOARD_BASE_URL=f"http://127.0.0.1:{port}",
                                    SWITCHBOARD_DATABASE_URL=f"sqlite:///{disk / 'data' / 'switchboard.db'}")
        platform = subprocess.Popen([sys.executable, "-m", "switchboard", "sandbox", "serve", "--port",
                                     str(sandbox_port)], cwd=REPO, env=platform_env,
                                    stdout=(work / "disk-sandbox.log").open("ab"), stderr=subprocess.STDOUT)
        wait_until_up(f"http://127.0.0.1:{sandbox_port}/sandbox/", platform, 120)
        boot = subprocess.run([sys.executable, "-m", "switchboard", "bootstrap", "--email", "disk@example.com",
                               "--password", "disk disk disk", "--json"], env=env, cwd=REPO, check=True,
                              capture_output=True, text=True)
        tenant = json.loads(boot.stdout)
        log = (work / "disk-serve.log").open("ab")
        serve = subprocess.Popen([sys.executable, "-m", "switchboard", "serve", "--port", str(port)], cwd=REPO,
                                 env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            base = f"http://127.0.0.1:{port}"
            wait_until_up(base + "/v1/health", serve, 120)
            http = httpx2.Client(base_url=base, timeout=60)
            auth = {"Authorization": f"Bearer {tenant['apiKey']}"}
            from switchboard.sandbox_seed import connect

            platform_http = httpx2.Client(base_url=f"http://127.0.0.1:{sandbox_port}", timeout=60)
            both = Routed(http, platform_http)
            bot = connect(both, api_key=tenant["apiKey"], profile_id=tenant["profileId"], platform="telegram")  # type: ignore[arg-type]
            x = connect(both, api_key=tenant["apiKey"], profile_id=tenant["profileId"], platform="x")  # type: ignore[arg-type]
            for contact in range(20):
                platform_http.post("/sandbox/telegram/inbound-message", json={
                    "accountId": bot["id"], "from": {"id": str(90000 + contact)}, "text": "hi"}).raise_for_status()
            conversations = wait_for_list(http, auth, bot["id"], 20)
            load = Load(http, auth, conversations, x, args.rate)
            load.phase = "disk"
            load.start()
            time.sleep(5)
            filler = fill(disk)
            full_for = 20.0 if args.quick else 60.0
            time.sleep(full_for)
            filler.unlink()
            ended = time.monotonic()
            recovered = wait_recovered(load, ended)
            time.sleep(10)
            load.stop()
            report: dict[str, Any] = {"fault_seconds": full_for, "recovered_seconds": recovered,
                                      "refused": load.refused("disk")}
            settled = settle_http(http, auth, 300)
            report["settled_seconds"] = settled
            dm_log = Counter(row["text"] for row in platform_http.get("/sandbox/telegram/sent", params={
                "accountId": bot["id"]}).json()["data"] if row["kind"] == "dm")
            stored: dict[str, str] = {}
            for conversation in conversations:
                page = 1
                while True:
                    listed = http.get(f"/v1/conversations/{conversation}/messages", headers=auth,
                                      params={"limit": 100, "page": page}).json()
                    stored.update({m["text"]: m["status"] for m in listed["data"] if m["direction"] == "outbound"})
                    if page >= listed["pagination"]["pages"]:
                        break
                    page += 1
            asked = list(load.replies)
            posts = http.get("/v1/posts", headers=auth, params={"limit": 100}).json()["pagination"]["total"]
            report["messages"] = {
                "asked": len(asked), "refused": len(load.refused_replies),
                "stored_though_refused": sum(1 for text in load.refused_replies if text in stored),
                "statuses": dict(Counter(stored.values())),
                "lost": sum(1 for text, status in stored.items() if text not in dm_log
                            and status not in ("unknown", "failed")),
                "sent_twice": sum(1 for n in dm_log.values() if n > 1)}
            report["posts"] = {"asked": len(load.posts), "refused": len(load.refused_posts), "stored": posts,
                               "stored_though_refused": posts - (len(load.posts) - len(load.refused_posts))}
            return report
        finally:
            for proc in (serve, platform):
                proc.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=20)


class Routed:
    """The service for its paths, the standalone sandbox for `/sandbox/...` (the seeding helper's calls)."""

    def __init__(self, service: httpx2.Client, sandbox: httpx2.Client) -> None:
        self.service, self.sandbox = service, sandbox

    def _for(self, url: str) -> httpx2.Client:
        return self.sandbox if url.startswith("/sandbox/") else self.service

    def get(self, url: str, **kwargs: Any) -> httpx2.Response:
        return self._for(url).get(url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> httpx2.Response:
        return self._for(url).post(url, **kwargs)


def settle_http(http: httpx2.Client, auth: dict[str, str], limit: float) -> float | None:
    began = time.monotonic()
    while time.monotonic() - began < limit:
        pending = sum(http.get("/v1/posts", headers=auth, params={"status": status, "limit": 1}).json()
                      ["pagination"]["total"] for status in ("scheduled", "publishing"))
        if not pending:
            return round(time.monotonic() - began, 1)
        time.sleep(1)
    return None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="a 20 s platform outage and short tails")
    parser.add_argument("--only", default="postgres,redis,stall,platform,disk")
    parser.add_argument("--outage-seconds", type=float, default=120.0)
    parser.add_argument("--rate", type=float, default=4.0, help="DMs a second (and a post every fourth)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON only")
    args = parser.parse_args()
    phases = [name.strip() for name in args.only.split(",") if name.strip()]
    work = Path(temp_dir())
    report: dict[str, Any] = {"quick": args.quick}
    began = time.monotonic()
    if any(name != "disk" for name in phases):
        report["scale_out"] = scale_out(args, phases, work)
    if "disk" in phases:
        report["disk"] = full_disk(args, work)
    report["run_seconds"] = round(time.monotonic() - began)
    print(json.dumps(report, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
