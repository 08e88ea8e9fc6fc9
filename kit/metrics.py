"""Prometheus metrics of every process of the service, collected together.

Off unless `SWITCHBOARD_METRICS_TOKEN` is set: then `configure()` (from `prepare`, in every process)
points prometheus-client's multiprocess mode at `<data dir>/metrics`, where each process keeps its
counters in a memory-mapped file of its own, and `/metrics` (switchboard/metrics_endpoint.py) sums
them: the API processes and the workers that share a data dir report as one service. Files are
named by host and process id, so containers sharing the data volume do not collide; a process's
files stay after it stops (its counts still count) until a process of the same host starts and
finds it gone.

The recording functions below are what the service calls, each at one central place (the HTTP
layer, the work engine, the platforms' HTTP client, webhook delivery, polls, the pace); while off,
each is one test of a flag.
"""

from __future__ import annotations

import atexit
import bisect
import collections
import contextlib
import logging
import os
import re
import socket
import threading
from pathlib import Path
from typing import Any

from kit import files

_on = False
_metrics: dict[str, Any] = {}
_children: dict[tuple[str, tuple[str, ...]], Any] = {}
_directory: Path | None = None

# Seconds; requests and platform calls: from a cached read (~1 ms) to a platform's slowest answers.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
PACE_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 15.0, 60.0)

_ID_SEGMENT = re.compile(r"\d")
_VERSION_SEGMENT = re.compile(r"v?\d{1,2}(\.\d{1,2})?")


def enabled() -> bool:
    return _on


def directory() -> Path | None:
    """Where the processes' files are, while metrics are on."""
    return _directory if _on else None


def _process_identity(host: str) -> Any:
    pid = os.getpid
    return lambda: f"{host}-{pid()}"


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9.-]", "-", socket.gethostname()) or "host"


def _forget_stopped_processes(path: Path, host: str) -> None:
    """Remove the files of this host's processes that are gone (their counts go: a counter reset,
    which Prometheus' rate() takes in its stride)."""
    for found in path.glob(f"*_{host}-*.db"):
        pid_text = found.stem.rsplit("-", 1)[-1]
        if not pid_text.isdigit():
            continue
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:
            with contextlib.suppress(FileNotFoundError):
                found.unlink()
        except PermissionError:  # alive, another user's
            continue


def configure(path: Path | None) -> None:
    """Record metrics into `path` (None: stop recording). Call before the process records anything."""
    global _on, _directory
    if _on and path == _directory:
        return  # the same process preparing again (the app's lifespan after the command's start)
    flush()  # what was observed for the files configured until now
    _children.clear()
    if path is None:
        if _on:
            os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
        _on = False
        _directory = None
        return
    files.private_dir(path, tighten=True)
    host = _host()
    _forget_stopped_processes(path, host)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path)
    from prometheus_client import Counter, Histogram, values

    # Chosen by prometheus-client once, at its import, from the environment: set it for this
    # process's metrics now, with files named by host and process (not by process id alone).
    values.ValueClass = values.MultiProcessValue(  # type: ignore[no-untyped-call]
        process_identifier=_process_identity(host))
    _metrics.update(
        http=Histogram("switchboard_http_request_duration_seconds",
                       "HTTP requests by method, route template and status, and how long they took.",
                       ["method", "route", "status"], buckets=LATENCY_BUCKETS, registry=None),
        claims=Counter("switchboard_engine_claims", "Rows of durable work claimed for an attempt, by kind.",
                       ["kind"], registry=None),
        outcomes=Counter("switchboard_engine_outcomes", "Outcomes recorded for claimed rows, by kind and the "
                         "status the row moved to.", ["kind", "status"], registry=None),
        platform=Histogram("switchboard_platform_request_duration_seconds",
                           "Calls to the platforms' APIs by platform, operation (method and path template) and "
                           "outcome (ok, rejected, retry_later, reauth_required, indeterminate, ...).",
                           ["platform", "operation", "outcome"], buckets=LATENCY_BUCKETS, registry=None),
        webhooks=Counter("switchboard_webhook_deliveries", "Webhook delivery attempts by outcome (delivered, "
                         "failed) and the endpoint's status class (2xx, 4xx, 5xx, none).",
                         ["outcome", "status"], registry=None),
        polls=Counter("switchboard_inbox_polls", "Inbox polls (platforms read by polling) by outcome.",
                      ["outcome"], registry=None),
        pace=Histogram("switchboard_pacing_wait_seconds", "Waits for a send slot under a platform's pace, by "
                       "whether the slot was taken (granted) or further than the sender would wait (deferred).",
                       ["result"], buckets=PACE_BUCKETS, registry=None),
    )
    _directory = path
    _on = True
    _start_flushing()


def _child(name: str, labels: tuple[str, ...]) -> Any:
    key = (name, labels)
    child = _children.get(key)
    if child is None:
        child = _children[key] = _metrics[name].labels(*labels)
    return child


# What this process observed since its last flush into its files. A write to the memory-mapped
# files takes a lock and a check of the process id per value (a histogram's observation is two):
# some 6 µs, most of what a cached `/v1` read costs on top of ~90 µs. So observations are added
# up here and written once a second by a thread, at a scrape, and when the process stops. An HTTP
# request's is only appended to a deque (atomic, no lock: a tenth of a microsecond on the request's
# path) and added up at the flush.
_http_seen: collections.deque[tuple[str, str, int, float]] = collections.deque()
_pending: dict[tuple[str, tuple[Any, ...]], list[float]] = {}
_pending_lock = threading.Lock()
_BOUNDS = {"http": LATENCY_BUCKETS, "platform": LATENCY_BUCKETS, "pace": PACE_BUCKETS}
FLUSH_SECONDS = 1.0


def _observe(name: str, labels: tuple[Any, ...], value: float, bounds: tuple[float, ...] = LATENCY_BUCKETS) -> None:
    """A histogram's observation: one more in the bucket of `value`, `value` more in the sum."""
    key = (name, labels)
    with _pending_lock:
        counts = _pending.get(key)
        if counts is None:
            counts = _pending[key] = [0.0] * (len(bounds) + 2)  # buckets, +Inf, sum
        counts[bisect.bisect_left(bounds, value)] += 1
        counts[-1] += value


def _count(name: str, labels: tuple[Any, ...]) -> None:
    key = (name, labels)
    with _pending_lock:
        counts = _pending.get(key)
        if counts is None:
            counts = _pending[key] = [0.0]
        counts[0] += 1


def flush() -> None:
    """Write what this process observed into its files (the scrape, the flusher thread, the exit)."""
    global _pending
    if not _on:
        return
    with _pending_lock:
        taken, _pending = _pending, {}
    seen = _http_seen
    for _ in range(len(seen)):  # what is there now; what comes meanwhile waits for the next flush
        try:
            method, route, status, seconds = seen.popleft()
        except IndexError:  # a concurrent flush (a scrape beside the thread) took the rest
            break
        key = ("http", (method, route, status))
        counts = taken.get(key)
        if counts is None:
            counts = taken[key] = [0.0] * (len(LATENCY_BUCKETS) + 2)
        counts[bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1
        counts[-1] += seconds
    for (name, labels), counts in taken.items():
        child = _child(name, tuple(map(str, labels)))
        if name in _BOUNDS:
            # prometheus-client's own parts of a histogram child: its per-bucket values (each
            # bucket's own count, summed into `le` at collection) and its sum.
            for index, count in enumerate(counts[:-1]):
                if count:
                    child._buckets[index].inc(count)
            child._sum.inc(counts[-1])
        else:
            child.inc(counts[0])


class _Flusher(threading.Thread):
    def __init__(self) -> None:
        super().__init__(name="metrics-flush", daemon=True)
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.wait(FLUSH_SECONDS):
            try:
                flush()
            except Exception:  # a full disk, say: the next turn tries again; nothing else may stop
                logging.getLogger("switchboard.metrics").warning("metrics could not be written")


_flusher: _Flusher | None = None


def _start_flushing() -> None:
    global _flusher
    if _flusher is None or not _flusher.is_alive():
        _flusher = _Flusher()
        _flusher.start()
        atexit.register(flush)


# --- what the service records ------------------------------------------------------------------
def http_request(method: str, route: str, status: int, seconds: float) -> None:
    if _on:
        _http_seen.append((method, route, status, seconds))


def engine_claimed(kind: str) -> None:
    if _on:
        _count("claims", (kind,))


def engine_outcome(kind: str, status: str) -> None:
    if _on:
        _count("outcomes", (kind, status))


def platform_call(platform: str, method: str, url: str, outcome: str, seconds: float) -> None:
    if _on:
        _observe("platform", (platform, operation(method, url), outcome), seconds)


def webhook_delivery(delivered: bool, status: int | None) -> None:
    if _on:
        _count("webhooks", ("delivered" if delivered else "failed", f"{status // 100}xx" if status else "none"))


def inbox_poll(outcome: str) -> None:
    if _on:
        _count("polls", (outcome,))


def pacing_wait(granted: bool, seconds: float) -> None:
    if _on and seconds > 0:
        _observe("pace", ("granted" if granted else "deferred",), seconds, PACE_BUCKETS)


_operations: dict[tuple[str, str], str] = {}


def operation(method: str, url: str) -> str:
    """`POST /{id}/sendMessage` for `https://api.telegram.org/bot123:abc/sendMessage`: the method and
    the URL's path with every segment holding a digit (ids, tokens) but short versions (`v23.0`, `2`)
    replaced, so a platform's operations are a few label values rather than one per id."""
    key = (method, url)
    found = _operations.get(key)
    if found is None:
        path = url.split("://", 1)[-1].split("?", 1)[0].partition("/")[2]
        segments = [
            s if not _ID_SEGMENT.search(s) or _VERSION_SEGMENT.fullmatch(s) else "{id}" for s in path.split("/")
        ]
        found = f"{method} /{'/'.join(segments)}"
        if len(_operations) > 4096:  # every URL holds an id or two: keep the memo small
            _operations.clear()
        _operations[key] = found
    return found
