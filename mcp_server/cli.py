"""`switchboard`: serve, worker, bootstrap."""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
from dataclasses import replace

from service.settings import Settings

log = logging.getLogger("switchboard")


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from mcp_server.app import create_app, prepare
    from service import bootstrap
    from storage.db import connection, db

    overrides: dict[str, object] = {}
    settings = Settings.from_env()
    if "SWITCHBOARD_BASE_URL" not in os.environ:
        overrides["base_url"] = f"http://{args.host}:{args.port}"
    if "SWITCHBOARD_SANDBOX" not in os.environ and settings.is_sqlite:
        overrides["sandbox"] = True  # the embedded setup is for trying things: sandbox on
    settings = replace(settings, **overrides)  # type: ignore[arg-type]

    prepare(settings)
    with connection(), db.atomic():
        created = bootstrap.first_run()
    if created:
        print(
            "\nSwitchboard is set up. Keep these; they are shown only now.\n"
            f"  Dashboard:  {settings.base_url}/dashboard/login\n"
            f"  E-mail:     {created['email']}\n"
            f"  Password:   {created['password']}\n"
            f"  API key:    {created['apiKey']}\n"
            f"  Workspace:  {created['workspaceId']}   Profile: {created['profileId']}\n"
            f"  Try:        curl -H 'Authorization: Bearer {created['apiKey']}' {settings.base_url}/v1/workspaces\n",
            flush=True,
        )
    print(f"Switchboard {settings.base_url} (sandbox {'on' if settings.sandbox else 'off'})", flush=True)
    app = create_app(settings, worker=not args.no_worker)
    uvicorn.run(app, host=args.host, port=args.port, log_level="info", access_log=False, proxy_headers=True)
    return 0


def _worker(args: argparse.Namespace) -> int:
    from mcp_server.app import prepare, start_worker, stop_worker

    settings = Settings.from_env()
    prepare(settings)
    runtime = start_worker(settings, embedded=True, workers=args.workers)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(f"Switchboard worker running with {args.workers} threads", flush=True)
    stop.wait()
    stop_worker(runtime)
    return 0


def _bootstrap(args: argparse.Namespace) -> int:
    from mcp_server.app import prepare
    from service import bootstrap
    from service.errors import ServiceError
    from storage.db import connection, db

    prepare(Settings.from_env())
    try:
        with connection(), db.atomic():
            out = bootstrap.bootstrap(email=args.email, password=args.password)
    except ServiceError as error:
        print(f"error: {error.message}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(f"{key}: {value}")
    return 0


def _set_password(args: argparse.Namespace) -> int:
    """A new dashboard password; every session of that person ends, in every process."""
    import getpass

    from mcp_server.app import prepare
    from service import users
    from service.errors import ServiceError
    from storage.db import connection, db

    password = args.password if args.password is not None else getpass.getpass("New password: ")
    prepare(Settings.from_env())
    try:
        with connection(), db.atomic():
            user = users.set_password(email=args.email, password=password)
    except ServiceError as error:
        print(f"error: {users.explain(error)}", file=sys.stderr)
        return 1
    print(f"Password set for {user.email}; every dashboard session of theirs has ended.")
    return 0


def _sandbox_seed(args: argparse.Namespace) -> int:
    """Connect one sandbox account per platform to a profile of the running service."""
    from mcp_server.app import prepare
    from mcp_server.sandbox_seed import seed
    from service import api_keys
    from storage.db import connection, db
    from storage.models import Profile

    settings = Settings.from_env()
    prepare(settings)
    with connection(), db.atomic():
        profile = Profile.get_or_none(Profile.id == args.profile)
        if profile is None:
            print(f"error: no profile {args.profile}", file=sys.stderr)
            return 1
        # A key of its own for the few calls, revoked at the end.
        key = api_keys.create_key(
            workspace_id=profile.workspace_id, name="sandbox seed", scope="profiles", profile_ids=[profile.id]
        )
    try:
        accounts = seed(args.url or settings.base_url, api_key=key["key"], profile_id=profile.id)
    finally:
        with connection(), db.atomic():
            from service.clock import now
            from storage.models import ApiKey

            ApiKey.update(revoked_at=now()).where(ApiKey.id == key["id"]).execute()
    if args.json:
        print(json.dumps({"accounts": accounts}))
    else:
        for platform, account_id in accounts.items():
            print(f"{platform:10} {account_id}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="switchboard", description="Switchboard: one API for social platforms.")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the whole service in one process")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--no-worker", action="store_true", help="serve only; run `switchboard worker` apart")
    serve.set_defaults(run=_serve)

    worker = commands.add_parser("worker", help="run a queue consumer with the scheduler")
    worker.add_argument("--workers", type=int, default=4)
    worker.set_defaults(run=_worker)

    boot = commands.add_parser("bootstrap", help="create a workspace, profile, user and API key")
    boot.add_argument("--email", required=True)
    boot.add_argument("--password", required=True)
    boot.add_argument("--json", action="store_true")
    boot.set_defaults(run=_bootstrap)

    people = commands.add_parser("users", help="dashboard users")
    people_commands = people.add_subparsers(dest="users_command", required=True)
    set_password = people_commands.add_parser("set-password", help="set a user's password (ends their sessions)")
    set_password.add_argument("--email", required=True)
    set_password.add_argument("--password", help="the new password (prompted when omitted)")
    set_password.set_defaults(run=_set_password)

    sandbox = commands.add_parser("sandbox", help="the platform emulator")
    sandbox_commands = sandbox.add_subparsers(dest="sandbox_command", required=True)
    seed = sandbox_commands.add_parser("seed", help="connect one sandbox account per platform")
    seed.add_argument("--profile", required=True)
    seed.add_argument("--url", help="the running service (default SWITCHBOARD_BASE_URL)")
    seed.add_argument("--json", action="store_true")
    seed.set_defaults(run=_sandbox_seed)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    # The MCP SDK logs every request at INFO; a busy server would spend its time writing those lines.
    logging.getLogger("mcp").setLevel(logging.WARNING)
    args = build_parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
