"""The operator's commands: `backup`, `restore`, `secrets rotate` and `migrate` (docs/operations.md)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from kit.settings import Settings, default_data_dir

SettingsOf = Callable[[argparse.Namespace], Settings]

PG_ADVICE = (
    "The database is PostgreSQL: copy it with `pg_dump --format=custom --file=switchboard.dump <database URL>` "
    "(and `pg_restore` into an empty database). Keep the secret key with it (SWITCHBOARD_SECRET_KEY): "
    "the platform credentials and webhook secrets inside are encrypted with it."
)


def _backup(args: argparse.Namespace, settings_of: SettingsOf) -> int:
    from switchboard import backup as backups

    settings = settings_of(args)
    try:
        phrase = backups.passphrase(args.passphrase_file, confirm=True) if args.with_secret_key else None
        written = backups.backup(settings, Path(args.to), secret_passphrase=phrase)
    except backups.BackupError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"Backup written to {written.path}: {', '.join(written.databases) or 'no SQLite file'}, "
          f"{written.media} media file(s).")
    if written.postgres:
        print(PG_ADVICE)
    if written.with_secret_key:
        print("The secret key is inside, encrypted with your passphrase: `restore` asks for it.")
    else:
        print("The secret key is not inside: keep it apart (SWITCHBOARD_SECRET_KEY, or the data dir's "
              "`secret_key` file). Without it the credentials in this backup cannot be read; "
              "`--with-secret-key` includes it, encrypted with a passphrase.")
    return 0


def _restore(args: argparse.Namespace, settings_of: SettingsOf) -> int:
    from switchboard import backup as backups

    # Not `Settings.from_env`: it would generate a new secret key into the (empty) data dir.
    data_dir = Path(os.environ.get("SWITCHBOARD_DATA_DIR") or default_data_dir()).resolve()
    source = "SWITCHBOARD_DATA_DIR" if os.environ.get("SWITCHBOARD_DATA_DIR") else "default"
    print(f"switchboard: data dir {data_dir} ({source})", file=sys.stderr, flush=True)
    archive = Path(args.from_)
    try:
        backups.manifest_of(archive)
        phrase = None
        if backups.holds_secret_key(archive) and not os.environ.get("SWITCHBOARD_SECRET_KEY"):
            phrase = backups.passphrase(args.passphrase_file, confirm=False)
        restored = backups.restore(archive, data_dir, secret_passphrase=phrase)
    except backups.BackupError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"Restored into {restored.data_dir}: {', '.join(restored.databases) or 'no SQLite file'}, "
          f"{restored.media} media file(s).")
    if restored.secret_key:
        print("The secret key came with the backup (in the data dir's `secret_key` file).")
    else:
        print("The credentials inside need the secret key the backed-up service used: run with the same "
              "SWITCHBOARD_SECRET_KEY (or put its `secret_key` file in the data dir) before `serve`.")
    return 0


def _rotate(args: argparse.Namespace, settings_of: SettingsOf) -> int:
    from service.accounts import webhook_secrets
    from service.common import key_rotation
    from switchboard.wiring import prepare

    settings = settings_of(args)
    prepare(settings)

    def progress(column: str, so_far: key_rotation.Rotated) -> None:
        print(f"  {column}: done ({so_far.rewritten} rewritten so far)", flush=True)

    print(f"Encrypting stored secrets with the newest of {len(settings.secret_keys)} key(s)", flush=True)
    result = key_rotation.rotate(progress=progress)
    print(f"Rewritten: {result.rewritten}; already with the newest key: {result.already_newest}.")
    if result.unreadable:
        print(f"error: {len(result.unreadable)} value(s) no key opens (was a key dropped too early?):",
              file=sys.stderr)
        for where in result.unreadable[:20]:
            print(f"  {where}", file=sys.stderr)
        return 1
    if result.busy:
        print(f"{result.busy} value(s) kept changing meanwhile: run the command again.", file=sys.stderr)
        return 1
    # The sandbox's webhook secrets derive from its own secret, not the service's key.
    renewed = webhook_secrets.renew() if not settings.sandbox else webhook_secrets.Renewed()
    print(f"Webhooks set again with the newest key's secret: {renewed.renewed}.")
    if renewed.failed:
        print(f"error: {len(renewed.failed)} account(s) refused it (still heard while the older key is listed); "
              "reconnect them or run the command again:", file=sys.stderr)
        for account_id in renewed.failed[:20]:
            print(f"  {account_id}", file=sys.stderr)
        return 1
    if len(settings.secret_keys) > 1:
        print("Every stored secret is now encrypted with the newest key. Older keys still verify sessions and "
              "links signed before the rotation: drop them from SWITCHBOARD_SECRET_KEY once those have lapsed "
              "(dashboard sessions last 14 days).")
    return 0


def _migrate(args: argparse.Namespace, settings_of: SettingsOf) -> int:
    from kit import settings as settings_module
    from storage import db as storage_db
    from storage.migrations import migrate

    settings = settings_of(args)
    settings_module.configure(settings)
    storage_db.initialise(settings.database_url)
    applied = migrate()
    print(f"Applied migrations {', '.join(map(str, applied))}." if applied else "The schema is up to date.")
    return 0


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser], settings_of: SettingsOf) -> None:
    def bound(fn: Callable[[argparse.Namespace, SettingsOf], int]) -> Callable[[argparse.Namespace], int]:
        return lambda args: fn(args, settings_of)

    take = commands.add_parser("backup", help="write a consistent copy of the data while the service runs")
    take.add_argument("--to", required=True, help="the archive to write (a .tar.gz)")
    take.add_argument("--with-secret-key", action="store_true",
                      help="include the secret key, encrypted with a passphrase")
    take.add_argument("--passphrase-file", help="read the passphrase from this file (else "
                                                "SWITCHBOARD_BACKUP_PASSPHRASE, else asked for)")
    take.set_defaults(run=bound(_backup))

    back = commands.add_parser("restore", help="unpack a backup into an empty data dir")
    back.add_argument("--from", dest="from_", required=True, help="the archive `backup` wrote")
    back.add_argument("--passphrase-file", help="the passphrase of an included secret key")
    back.set_defaults(run=bound(_restore))

    secrets = commands.add_parser("secrets", help="the secret key")
    secrets_commands = secrets.add_subparsers(dest="secrets_command", required=True)
    rotate = secrets_commands.add_parser(
        "rotate", help="re-encrypt stored credentials with the newest key of SWITCHBOARD_SECRET_KEY")
    rotate.set_defaults(run=bound(_rotate))

    migrate = commands.add_parser("migrate", help="bring the database schema up to date (`serve` does it too)")
    migrate.set_defaults(run=bound(_migrate))
