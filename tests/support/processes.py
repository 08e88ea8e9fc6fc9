"""Run `switchboard` as real separate processes, sharing a test's database and queue."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2

from kit.settings import Settings


def service_env(settings: Settings, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWITCHBOARD_")}
    env.update(
        SWITCHBOARD_DATA_DIR=str(settings.data_dir),
        SWITCHBOARD_DATABASE_URL=settings.database_url,
        SWITCHBOARD_QUEUE_URL=settings.queue_url,
        SWITCHBOARD_SECRET_KEY=settings.secret_key,
        SWITCHBOARD_BASE_URL=settings.base_url,
        SWITCHBOARD_SCHEDULER_TICK_SECONDS=str(settings.scheduler_tick_seconds),
        SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE="1" if settings.webhook_allow_private else "0",
        SWITCHBOARD_SANDBOX="1" if settings.sandbox else "0",
        SWITCHBOARD_RATE_LIMIT_PER_MINUTE=str(settings.rate_limit_per_minute),
        SWITCHBOARD_FOLLOWER_BACKFILL="1" if settings.follower_backfill else "0",
        PYTHONUNBUFFERED="1",
    )
    if settings.webhook_ca_bundle:
        env["SWITCHBOARD_WEBHOOK_CA_BUNDLE"] = settings.webhook_ca_bundle
    env.update(extra)
    return env


def switchboard(*args: str) -> list[str]:
    return [sys.executable, "-m", "switchboard", *args]


@contextlib.contextmanager
def serve_process(settings: Settings, port: int, *extra_args: str, **env: str) -> Iterator[str]:
    """`switchboard serve --port PORT` in its own process; yields its URL once healthy."""
    process = subprocess.Popen(
        switchboard("serve", "--port", str(port), *extra_args),
        env=service_env(settings, **env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()


@contextlib.contextmanager
def worker_processes(settings: Settings, count: int, log_dir: Path, **env: str) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`count` processes of `switchboard worker`, stopped (SIGTERM) on the way out."""
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for n in range(count):
            with (log_dir / f"worker-{n}.log").open("ab") as log:
                processes.append(subprocess.Popen(switchboard("worker", "--workers", "8"),
                                                  env=service_env(settings, **env), stdout=log, stderr=subprocess.STDOUT))
        yield processes
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


# A process's start (imports, migrations, the app's routes and schemas) is a few seconds of CPU; on a
# machine busy with other work it was seen to take over 30 s. The bound only stops a test whose
# process never comes up.
START_TIMEOUT = 90.0


def wait_healthy(url: str, process: subprocess.Popen[bytes], timeout: float = START_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"switchboard exited with {process.returncode}")
        with contextlib.suppress(httpx2.TransportError):
            if httpx2.get(url + "/v1/health", timeout=2).status_code == 200:
                return
        time.sleep(0.05)
    raise RuntimeError("switchboard did not become healthy")


@contextlib.contextmanager
def api_without_worker(settings: Settings) -> Iterator[httpx2.Client]:
    """The API (and the emulator) in this process with no worker, on the settings' port: the work
    is left to the test's worker processes, or to the test itself."""
    from switchboard.app import create_app
    from tests.support.live_server import live_server

    port = int(settings.base_url.rsplit(":", 1)[1])
    with live_server(create_app(settings, worker=False), port=port) as url, \
            httpx2.Client(base_url=url, timeout=30) as http:
        yield http
