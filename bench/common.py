"""Shared pieces of the benchmarks: a service in its own process, and a load generator.

Absolute numbers on a shared 2-core machine mean little, so every benchmark measures its
baseline in the same run, alternating the two, and reports the ratio.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_up(url: str, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args} exited with {process.returncode}")
        with contextlib.suppress(httpx2.TransportError):
            httpx2.get(url, timeout=1)
            return
        time.sleep(0.05)
    raise RuntimeError(f"{url} did not come up")


@contextlib.contextmanager
def process(args: list[str], url: str, env: dict[str, str] | None = None, *, timeout: float = 30
            ) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(args, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_up(url, proc, timeout)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def embedded_env(data_dir: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWITCHBOARD_")}
    env.update(SWITCHBOARD_DATA_DIR=data_dir, SWITCHBOARD_SECRET_KEY="bench-secret", PYTHONPATH=str(ROOT), **extra)
    return env


@contextlib.contextmanager
def scale_out_env(data_dir: str, *, keep: bool = False, **extra: str) -> Iterator[dict[str, str]]:
    """The scale-out setup's environment: a fresh PostgreSQL database (dropped after, unless `keep`)
    and Redis (database 13), from `BENCH_POSTGRES` (default the local server) and `BENCH_REDIS`; the
    database's name begins with `BENCH_DB_PREFIX` (default `switchboard_bench`)."""
    import uuid

    import psycopg2

    server = os.environ.get("BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432").rstrip("/")
    name = f"{os.environ.get('BENCH_DB_PREFIX', 'switchboard_bench')}_{uuid.uuid4().hex[:8]}"
    admin = psycopg2.connect(server + "/postgres")
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    try:
        yield embedded_env(data_dir, SWITCHBOARD_DATABASE_URL=f"{server}/{name}",
                           SWITCHBOARD_QUEUE_URL=os.environ.get("BENCH_REDIS", "redis://127.0.0.1:6379/13"), **extra)
    finally:
        if not keep:
            with admin.cursor() as cursor:
                cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def bootstrap(env: dict[str, str]) -> dict[str, str]:
    out = subprocess.run(
        [sys.executable, "-m", "switchboard", "bootstrap", "--email", "bench@example.com", "--password",
         "bench-password", "--json"],
        env=env, cwd=ROOT, capture_output=True, check=True, text=True,
    )
    return json.loads(out.stdout)


def send_as_a_task(message_ids: list[str]) -> None:
    """Send a group of queued messages as a worker's task does (`MESSAGE_WORK.run_group`); on a
    commit from before groups had a run of their own, one message after the other (the same loop,
    for benchmarks alternated against it)."""
    from service.inbox import work as inbox_work

    run_group = inbox_work.MESSAGE_WORK.run_group
    if run_group is None:
        for message_id in message_ids:
            inbox_work.send(message_id)
    else:
        run_group(message_ids)


def temp_dir() -> str:
    return tempfile.mkdtemp(prefix="switchboard-bench-")


def load(url: str, *, headers: dict[str, str], seconds: float, connections: int,
         server: subprocess.Popen[bytes] | None = None) -> dict[str, float]:
    """Requests per second, with wrk when installed, else a Python client; with `server`, also the
    CPU time that process spent per request (`cpu_us`), which the load generator's own share of
    the machine does not move as it moves the rate."""
    before = process_cpu_seconds(server.pid) if server else 0.0
    if shutil.which("wrk"):
        result = _wrk(url, headers=headers, seconds=seconds, connections=connections)
    else:
        result = _python_load(url, headers=headers, seconds=seconds, connections=connections)
    if server:
        result["cpu_us"] = (process_cpu_seconds(server.pid) - before) / result["requests"] * 1e6
    return result


def process_cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far, from /proc (all its threads)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wrk(url: str, *, headers: dict[str, str], seconds: float, connections: int) -> dict[str, float]:
    args = ["wrk", "-t1", f"-c{connections}", f"-d{int(seconds)}s", "--latency"]
    for name, value in headers.items():
        args += ["-H", f"{name}: {value}"]
    out = subprocess.run([*args, url], capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    non_2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    if non_2xx:
        raise RuntimeError(f"{non_2xx.group(1)} answers were not 2xx: the benchmark is not measuring success")
    requests = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    return {"rps": rps, "requests": requests, "tool": 0.0}


def _python_load(url: str, *, headers: dict[str, str], seconds: float, connections: int) -> dict[str, float]:
    import threading

    count = 0
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def worker() -> None:
        nonlocal count
        done = 0
        with httpx2.Client(headers=headers) as http:
            while time.monotonic() < stop:
                http.get(url).raise_for_status()
                done += 1
        with lock:
            count += done

    threads = [threading.Thread(target=worker) for _ in range(connections)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"rps": count / (time.monotonic() - started), "requests": count, "tool": 1.0}


TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def machine_cpu() -> tuple[int, int]:
    """(busy, all) clock ticks of every core since boot, from /proc/stat (idle and iowait are not busy)."""
    with open("/proc/stat") as stat:
        ticks = [int(field) for field in stat.readline().split()[1:9]]
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks)


def _pid_cpu(pid: int) -> float | None:
    try:
        return process_cpu_seconds(pid)
    except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
        return None


class CpuMeter:
    """CPU time spent during a stretch of a benchmark, counted two ways.

    The whole machine's (every process, from /proc/stat): right on a quiet machine, where nothing
    else runs. And the benchmark's own: the processes it started (by pid), the PostgreSQL backends
    serving its database (by `pg_stat_activity`, so other users of the same server are left out),
    and Redis's own CPU delta (`INFO cpu`; a Redis shared with others counts their commands too:
    give the benchmark a Redis server of its own). On a machine other work shares, only the second
    is the benchmark's.

    The autovacuum workers busy on the benchmark's database are counted apart (`autovacuum`, not in
    `own`): they work on whatever the tables' churn left, when their naptime ends, so they land on
    whichever operation is being measured then (in one run, 4 ms on each 32 ms poll round).
    """

    def __init__(self, *, database_url: str = "", queue_url: str = "") -> None:
        self.database_url = database_url if database_url.startswith("postgres") else ""
        self.queue_url = queue_url if queue_url.startswith("redis") else ""
        self._start: dict[str, Any] = {}

    def _backends(self) -> dict[int, tuple[float, bool]]:
        """Each backend serving the database: its CPU, and whether it is an autovacuum worker."""
        if not self.database_url:
            return {}
        import psycopg2

        name = self.database_url.rsplit("/", 1)[1].split("?", 1)[0]
        with contextlib.closing(psycopg2.connect(self.database_url)) as connection, connection.cursor() as cursor:
            cursor.execute("SELECT pid, backend_type = 'autovacuum worker' FROM pg_stat_activity"
                           " WHERE datname = %s AND pid <> pg_backend_pid()", (name,))
            pids = [(int(row[0]), bool(row[1])) for row in cursor.fetchall()]
        found = {pid: (_pid_cpu(pid), vacuum) for pid, vacuum in pids}
        return {pid: (cpu, vacuum) for pid, (cpu, vacuum) in found.items() if cpu is not None}

    def _transactions(self) -> int:
        """Transactions committed or rolled back in the benchmark's database (each statement outside
        one counts): work done, whatever the machine's load. PostgreSQL publishes these counts
        within a second, so `stop` waits that long first."""
        if not self.database_url:
            return 0
        import psycopg2

        name = self.database_url.rsplit("/", 1)[1].split("?", 1)[0]
        with contextlib.closing(psycopg2.connect(self.database_url)) as connection, connection.cursor() as cursor:
            cursor.execute("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s", (name,))
            return int(cursor.fetchone()[0])

    def _redis(self) -> float:
        if not self.queue_url:
            return 0.0
        import redis

        info = redis.Redis.from_url(self.queue_url).info("cpu")
        return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])

    def start(self, pids: dict[str, int]) -> None:
        self._start = {"pids": {name: _pid_cpu(pid) or 0.0 for name, pid in pids.items()},
                       "backends": self._backends(), "redis": self._redis(), "machine": machine_cpu(),
                       "transactions": self._transactions(), "at": time.monotonic()}

    def stop(self, pids: dict[str, int]) -> dict[str, Any]:
        """Seconds of CPU since `start`: per process, `postgres` (backends), `redis`, `own` (their
        sum), `machine` (all processes) and `machine_busy` (the share of every core busy); on
        PostgreSQL also `transactions` (a count)."""
        machine = machine_cpu()
        backends = self._backends()
        redis_cpu = self._redis()
        begun = self._start
        spent: dict[str, float] = {}
        for name, pid in pids.items():
            now = _pid_cpu(pid)
            spent[name] = max(0.0, (now or 0.0) - begun["pids"].get(name, 0.0)) if now is not None else 0.0
        used = {pid: (cpu - begun["backends"].get(pid, (0.0, vacuum))[0], vacuum)
                for pid, (cpu, vacuum) in backends.items()}
        spent["postgres"] = sum(cpu for cpu, vacuum in used.values() if not vacuum)
        spent["redis"] = max(0.0, redis_cpu - begun["redis"])
        spent["own"] = sum(spent.values())
        spent["autovacuum"] = sum(cpu for cpu, vacuum in used.values() if vacuum)
        busy = machine[0] - begun["machine"][0]
        spent["machine"] = busy / TICKS_PER_SECOND
        spent["machine_busy"] = busy / max(1, machine[1] - begun["machine"][1])
        spent["seconds"] = time.monotonic() - begun["at"]
        if self.database_url:
            time.sleep(1.1)
            spent["transactions"] = self._transactions() - begun["transactions"]
        return spent


class BackendWaits:
    """What the PostgreSQL backends serving the benchmark's database wait on while they work, sampled
    from `pg_stat_activity` every 10 ms on a thread of its own (through the `postgres` database, so
    its own backend is not counted with the benchmark's): the shares of active backend samples
    running on a core and waiting for the WAL to reach the disk (`WALWrite`, `WALSync`: a commit
    that waits for the disk), for a lock, or for anything else. A limit that is not the CPU shows
    here: a machine whose cores are not all busy may have a disk whose flushes are."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url if database_url.startswith("postgres") else ""
        self._stop = threading.Event()
        self._counts: collections.Counter[str] = collections.Counter()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if not self.database_url:
            return
        self._stop.clear()
        self._counts.clear()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def stop(self) -> dict[str, float]:
        if self._thread is None:
            return {}
        self._stop.set()
        self._thread.join()
        self._thread = None
        total = sum(self._counts.values()) or 1
        return {name: round(count / total, 2) for name, count in sorted(self._counts.items())}

    def _sample(self) -> None:
        import psycopg2

        name = self.database_url.rsplit("/", 1)[1].split("?", 1)[0]
        server = self.database_url.rsplit("/", 1)[0]
        with contextlib.closing(psycopg2.connect(server + "/postgres")) as connection:
            connection.autocommit = True
            with connection.cursor() as cursor:
                while not self._stop.wait(0.01):
                    cursor.execute("SELECT wait_event_type, wait_event FROM pg_stat_activity "
                                   "WHERE datname = %s AND state = 'active'", (name,))
                    for kind, event in cursor.fetchall():
                        self._counts[_wait_class(kind, event)] += 1


def _wait_class(kind: str | None, event: str | None) -> str:
    if kind is None:
        return "cpu"
    if event in ("WALWrite", "WALSync"):
        return "disk_flush"
    return "lock" if kind in ("Lock", "LWLock") else "other"


def spy_on(pid: int, name: str) -> subprocess.Popen[bytes] | None:
    """With BENCH_PYSPY=<dir>: a py-spy profile of the process (samples only while a thread holds
    the GIL: where its Python time goes), into <dir>/<name>.txt."""
    folder = os.environ.get("BENCH_PYSPY")
    if not folder:
        return None
    spy = subprocess.Popen([str(Path(sys.executable).parent / "py-spy"), "record", "--gil", "-r", "250", "-f", "raw",
                            "-o", f"{folder}/{name}.txt", "--pid", str(pid)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)  # attached before the clock runs
    return spy


def stop_spy(spy: subprocess.Popen[bytes] | None) -> None:
    if spy is not None:
        spy.send_signal(signal.SIGINT)
        spy.wait()
