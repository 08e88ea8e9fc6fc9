"""`switchboard backup` and `switchboard restore`: a consistent copy of a running service's data.

SQLite files (the database, the queue, the sandbox) are copied with SQLite's online backup API:
one read transaction over each source, so the copy is the database as of one instant while the
service goes on writing (WAL lets writers continue beside a reader); a plain file copy of a live
database can be torn. Media files are copied as they are (each is written once, under a temporary
name, then renamed). A PostgreSQL database is not copied: `pg_dump` does that (docs/operations.md).

The archive is a gzipped tar with a `manifest.json`. The secret key is left out unless asked for
(`--with-secret-key`), and then only encrypted with a passphrase: without the key, the platform
credentials and webhook secrets inside cannot be read.
"""

from __future__ import annotations

import base64
import getpass
import io
import json
import os
import sqlite3
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from kit import clock, files
from kit.settings import VERSION, Settings

FORMAT = 1
PASSPHRASE_ENV = "SWITCHBOARD_BACKUP_PASSPHRASE"  # noqa: S105 - the name of a variable
KEY_MEMBER = "secret_key.enc"


class BackupError(Exception):
    """Something the person running the command must change (its text is for them)."""


def sqlite_path(url: str) -> Path | None:
    """The file of a `sqlite:///...` URL; None for any other database or queue."""
    parts = urlsplit(url)
    if parts.scheme != "sqlite":
        return None
    return Path(parts.path[1:] if parts.path.startswith("//") else parts.path)


def _sources(settings: Settings) -> dict[str, Path]:
    """The SQLite files to copy, by their name in the archive (and in a restored data dir)."""
    found: dict[str, Path] = {}
    for name, path in (("switchboard.db", sqlite_path(settings.database_url)),
                       ("queue.db", sqlite_path(settings.queue_url)),
                       ("sandbox.db", settings.data_dir / "sandbox.db")):
        if path is not None and path.exists():
            found[name] = path
    return found


def copy_sqlite(source: Path, target: Path) -> None:
    """A consistent copy of a live SQLite database (the online backup API, in one step)."""
    src = sqlite3.connect(source, timeout=30)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)  # pages=-1: every page within one read transaction of the source
    finally:
        dst.close()
        src.close()


# --- the secret key, sealed with a passphrase ------------------------------------------------------
def _passphrase_key(passphrase: str, salt: bytes) -> bytes:
    derived = Scrypt(salt=salt, length=32, n=2**15, r=8, p=1).derive(passphrase.encode())
    return base64.urlsafe_b64encode(derived)


def seal_secret_keys(keys: tuple[str, ...], passphrase: str) -> bytes:
    salt = os.urandom(16)
    token = Fernet(_passphrase_key(passphrase, salt)).encrypt(",".join(keys).encode())
    return json.dumps({"kdf": "scrypt", "n": 2**15, "r": 8, "p": 1, "salt": base64.b64encode(salt).decode(),
                       "token": token.decode()}).encode()


def open_secret_keys(sealed: bytes, passphrase: str) -> str:
    data = json.loads(sealed)
    try:
        return Fernet(_passphrase_key(passphrase, base64.b64decode(data["salt"]))).decrypt(
            data["token"].encode()).decode()
    except InvalidToken:
        raise BackupError("the passphrase does not open the secret key in this backup") from None


def passphrase(file: str | None, *, confirm: bool) -> str:
    """From `--passphrase-file`, else SWITCHBOARD_BACKUP_PASSPHRASE, else asked for at the terminal."""
    if file:
        given = Path(file).read_text().strip()
    elif os.environ.get(PASSPHRASE_ENV):
        given = os.environ[PASSPHRASE_ENV]
    else:
        if not sys.stdin.isatty():
            raise BackupError(f"a passphrase is needed: --passphrase-file, or {PASSPHRASE_ENV}")
        given = getpass.getpass("Passphrase for the secret key: ")
        if confirm and getpass.getpass("Again: ") != given:
            raise BackupError("the two passphrases differ")
    if len(given) < 8:
        raise BackupError("the passphrase needs at least 8 characters")
    return given


# --- backup --------------------------------------------------------------------------------------
@dataclass
class Written:
    path: Path
    databases: list[str]
    media: int
    with_secret_key: bool
    postgres: bool


def backup(settings: Settings, target: Path, *, secret_passphrase: str | None = None) -> Written:
    """Write the archive to `target` (through a temporary file beside it, then renamed)."""
    sources = _sources(settings)
    postgres = sqlite_path(settings.database_url) is None
    media_dir = settings.data_dir / "media"
    media = sorted(p for p in media_dir.iterdir() if p.is_file() and not p.name.endswith(".part")) \
        if media_dir.is_dir() else []
    manifest = {
        "format": FORMAT, "version": VERSION, "createdAt": clock.iso(clock.now()),
        "databases": sorted(sources), "media": len(media),
        "postgresql": "not included: dump it with pg_dump" if postgres else None,
        "secretKey": "included, encrypted with a passphrase" if secret_passphrase else "not included",
    }
    target = target.resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".switchboard-backup-", dir=target.parent) as scratch:
        staged = Path(scratch) / "archive.tar.gz"
        with tarfile.open(staged, "w:gz") as archive:
            _add_bytes(archive, "manifest.json", json.dumps(manifest, indent=2).encode())
            for name, source in sources.items():
                copy = Path(scratch) / name
                copy_sqlite(source, copy)
                archive.add(copy, arcname=name)
            for path in media:
                try:
                    archive.add(path, arcname=f"media/{path.name}")
                except FileNotFoundError:  # deleted meanwhile: it is not in the copy, as if taken a moment later
                    continue
            if secret_passphrase:
                _add_bytes(archive, KEY_MEMBER, seal_secret_keys(settings.secret_keys, secret_passphrase))
        os.chmod(staged, 0o600)
        os.replace(staged, target)
    return Written(target, sorted(sources), len(media), bool(secret_passphrase), postgres)


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o600
    info.mtime = int(clock.now().timestamp())
    archive.addfile(info, io.BytesIO(data))


# --- restore -------------------------------------------------------------------------------------
@dataclass
class Restored:
    data_dir: Path
    databases: list[str]
    media: int
    secret_key: bool


def manifest_of(source: Path) -> dict[str, object]:
    try:
        with tarfile.open(source, "r:gz") as archive:
            member = archive.extractfile("manifest.json")
            if member is None:
                raise KeyError("manifest.json")
            manifest: dict[str, object] = json.loads(member.read())
    except (OSError, tarfile.TarError, KeyError, ValueError):
        raise BackupError(f"{source} is not a Switchboard backup") from None
    if manifest.get("format") != FORMAT:
        raise BackupError(f"{source} is a backup of a format this version does not read")
    return manifest


def restore(source: Path, data_dir: Path, *, secret_passphrase: str | None = None) -> Restored:
    """Unpack the archive into `data_dir`, which must be empty (or not exist yet)."""
    manifest_of(source)
    if data_dir.exists() and any(data_dir.iterdir()):
        raise BackupError(f"the data dir {data_dir} is not empty: restore into an empty one")
    keys = None
    with tarfile.open(source, "r:gz") as archive:
        if secret_passphrase is not None and KEY_MEMBER in archive.getnames():
            sealed = archive.extractfile(KEY_MEMBER)
            # Opened first: a wrong passphrase leaves the data dir as it was.
            keys = open_secret_keys(sealed.read() if sealed is not None else b"{}", secret_passphrase)
    files.private_dir(data_dir, tighten=True)
    databases: list[str] = []
    media = 0
    if keys is not None:
        _write_private(data_dir / "secret_key", keys.encode())
    with tarfile.open(source, "r:gz") as archive:
        for member in archive.getmembers():
            if not member.isfile():
                continue
            name = member.name
            handle = archive.extractfile(member)
            if handle is None:
                continue
            if name in {"switchboard.db", "queue.db", "sandbox.db"}:
                _write_private(data_dir / name, handle.read())
                databases.append(name)
            elif name.startswith("media/") and "/" not in name[len("media/"):] and name != "media/":
                files.private_dir(data_dir / "media", tighten=True)
                _write_private(data_dir / "media" / name[len("media/"):], handle.read())
                media += 1
    return Restored(data_dir, sorted(databases), media, keys is not None)


def holds_secret_key(source: Path) -> bool:
    with tarfile.open(source, "r:gz") as archive:
        return KEY_MEMBER in archive.getnames()


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
