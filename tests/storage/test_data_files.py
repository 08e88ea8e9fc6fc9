"""The data directory and every file in it are private to the service's user: 0700 and 0600."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from kit.settings import Settings
from service.identity import bootstrap
from storage.db import connection, db
from switchboard.app import create_app, prepare
from tests.conftest import bearer
from tests.support.live_server import free_port, live_server


@pytest.fixture
def loose_umask() -> Iterator[None]:
    """The usual umask (files 0644, directories 0755): the service must not rely on a strict one."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _run_embedded_service(data: Path) -> None:
    """Serve the embedded setup from `data` (its own secret key, SQLite database and queue), write."""
    port = free_port()
    settings = Settings.from_env({"SWITCHBOARD_DATA_DIR": str(data), "SWITCHBOARD_BASE_URL": f"http://127.0.0.1:{port}",
                                  "SWITCHBOARD_SANDBOX": "1"})
    try:
        with live_server(create_app(settings, worker=True), port=port) as url:
            with connection():
                made = bootstrap.bootstrap(email="files@example.com", password="correct horse")
            answer = httpx2.post(url + "/v1/profiles", headers=bearer(made["apiKey"]), json={"name": "Second"})
            assert answer.status_code == 201
            names = {p.name for p in data.iterdir()}
            assert {"switchboard.db", "switchboard.db-wal", "queue.db", "secret_key"} <= names, names
            for path in data.iterdir():
                assert _mode(path) == 0o600, (path.name, oct(_mode(path)))
    finally:
        db.close() if not db.is_closed() else None


def test_a_new_data_directory_and_its_files_are_0700_and_0600(tmp_path, loose_umask, service):
    data = tmp_path / "fresh" / "data"
    _run_embedded_service(data)
    assert _mode(data) == 0o700
    prepare(service)


def test_an_existing_loose_data_directory_is_tightened(tmp_path, loose_umask, service):
    data = tmp_path / "old"
    data.mkdir(mode=0o755)
    (data / "secret_key").write_text("an-old-secret-key-written-0644-by-an-earlier-version")
    os.chmod(data / "secret_key", 0o644)
    os.chmod(data, 0o755)
    _run_embedded_service(data)
    assert _mode(data) == 0o700
    assert _mode(data / "secret_key") == 0o600
    prepare(service)
