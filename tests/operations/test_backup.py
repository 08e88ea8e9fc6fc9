"""`switchboard backup` copies a running service's data consistently, and `switchboard restore`
brings it back into an empty data dir with every row and credential readable."""

from __future__ import annotations

import sqlite3
import subprocess
import tarfile
from dataclasses import replace

import pytest

from kit import crypto
from kit.settings import Settings
from service.identity import bootstrap
from storage.db import connection
from storage.models import Account
from switchboard.wiring import prepare
from tests.conftest import PG_BASE
from tests.operations.load import Writer
from tests.support.processes import service_env, switchboard

pytestmark = pytest.mark.skipif(bool(PG_BASE), reason="SQLite's online backup; PostgreSQL is pg_dump's")

PASSPHRASE = "correct horse battery staple"


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(switchboard(*args), env=env, capture_output=True, text=True, timeout=120)


def test_a_backup_taken_under_writes_restores_every_row_and_credential(service, tmp_path):
    with connection():
        tenant = bootstrap.bootstrap(email="owner@example.com", password="long enough password")
    (service.data_dir / "media").mkdir(exist_ok=True)
    (service.data_dir / "media" / "med_1").write_bytes(b"\x89PNG picture bytes")
    archive = tmp_path / "backup.tar.gz"
    env = service_env(service, SWITCHBOARD_BACKUP_PASSPHRASE=PASSPHRASE)

    with Writer(tenant["workspaceId"], tenant["profileId"]) as writer:
        writer.wait_turns(5)
        before = dict(writer.written)  # committed before the backup began: must all be inside
        taken = _run("backup", "--to", str(archive), "--with-secret-key", env=env)
        writer.wait_turns(2)  # still writing after the copy: the backup held no one up
    assert taken.returncode == 0, taken.stderr
    assert "switchboard.db" in taken.stdout and "queue.db" in taken.stdout
    assert service.secret_key not in taken.stdout + taken.stderr
    # The key is inside only encrypted.
    with tarfile.open(archive) as opened:
        assert all(service.secret_key.encode() not in opened.extractfile(m).read()
                   for m in opened.getmembers() if m.isfile())

    restored_dir = tmp_path / "restored"
    restore_env = {k: v for k, v in env.items() if k not in {"SWITCHBOARD_SECRET_KEY", "SWITCHBOARD_DATABASE_URL",
                                                             "SWITCHBOARD_QUEUE_URL"}}
    restore_env["SWITCHBOARD_DATA_DIR"] = str(restored_dir)
    back = _run("restore", "--from", str(archive), env=restore_env)
    assert back.returncode == 0, back.stderr
    assert oct(restored_dir.stat().st_mode & 0o777) == "0o700"
    assert oct((restored_dir / "switchboard.db").stat().st_mode & 0o777) == "0o600"
    assert (restored_dir / "media" / "med_1").read_bytes() == b"\x89PNG picture bytes"
    with sqlite3.connect(restored_dir / "switchboard.db") as check:
        assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)

    # The restored service, with the key that came in the backup and nothing of the original's.
    restored = Settings.from_env({"SWITCHBOARD_DATA_DIR": str(restored_dir)})
    assert restored.secret_keys == service.secret_keys
    prepare(restored)
    try:
        with connection():
            stored = {a.id: crypto.decrypt_json(a.credentials)["access_token"]
                      for a in Account.select().where(Account.workspace == tenant["workspaceId"])}
    finally:
        prepare(service)
    # Every account committed before the backup began is there, and every stored credential opens
    # to a token the writer gave that account (the writer renews earlier ones as it goes).
    assert set(before) <= set(stored)
    assert all(token in writer.history[account] for account, token in stored.items())

    # A restore never lands on data: the restored dir is not empty any more.
    again = _run("restore", "--from", str(archive), env=restore_env)
    assert again.returncode == 1
    assert "not empty" in again.stderr


def test_a_backup_without_the_key_says_the_key_is_needed_and_restores_with_it(service, tmp_path):
    archive = tmp_path / "backup.tar.gz"
    env = service_env(service)
    with connection():
        tenant = bootstrap.bootstrap(email="owner@example.com", password="long enough password")
    with Writer(tenant["workspaceId"], tenant["profileId"]) as writer:
        writer.wait_turns(2)
        taken = _run("backup", "--to", str(archive), env=env)
    assert taken.returncode == 0, taken.stderr
    assert "secret key is not inside" in taken.stdout

    restored_dir = tmp_path / "restored"
    back = _run("restore", "--from", str(archive),
                env={**env, "SWITCHBOARD_DATA_DIR": str(restored_dir)})
    assert back.returncode == 0, back.stderr
    assert "need the secret key" in back.stdout
    assert not (restored_dir / "secret_key").exists()
    restored = replace(Settings.from_env({"SWITCHBOARD_DATA_DIR": str(restored_dir),
                                          "SWITCHBOARD_SECRET_KEY": service.secret_key}))
    prepare(restored)
    try:
        with connection():
            tokens = [crypto.decrypt_json(a.credentials)["access_token"] for a in Account.select()]
    finally:
        prepare(service)
    assert len(tokens) >= 2
    assert all(t.startswith("secret-token-") for t in tokens)


def test_a_wrong_passphrase_restores_nothing_readable_and_says_so(service, tmp_path):
    archive = tmp_path / "backup.tar.gz"
    taken = _run("backup", "--to", str(archive), "--with-secret-key",
                 env=service_env(service, SWITCHBOARD_BACKUP_PASSPHRASE=PASSPHRASE))
    assert taken.returncode == 0, taken.stderr
    env = {k: v for k, v in service_env(service).items() if k != "SWITCHBOARD_SECRET_KEY"}
    env.update(SWITCHBOARD_DATA_DIR=str(tmp_path / "restored"), SWITCHBOARD_BACKUP_PASSPHRASE="not the phrase")
    back = _run("restore", "--from", str(archive), env=env)
    assert back.returncode == 1
    assert "passphrase does not open" in back.stderr
    assert "not the phrase" not in back.stderr
    assert not (tmp_path / "restored").exists() or not any((tmp_path / "restored").iterdir())
