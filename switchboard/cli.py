"""`switchboard`: serve, worker, bootstrap, users, sandbox (serve, seed), webhooks listen, analytics snapshot,
and the operator's backup, restore, secrets rotate and migrate (`switchboard.ops_commands`).

Every command reads the same settings as `serve` (`SWITCHBOARD_*`, the data dir beside the virtual
environment by default) and says on stderr which data dir it uses; commands asked for `--json`
print only their answer.
"""

from __future__ import annotations

import argparse
import errno
import getpass
import json
import logging
import os
import signal
import socket
import sys
import threading
from dataclasses import replace

import httpx2

from kit.settings import Settings
from platforms.log_format import configure_logging
from switchboard import ops_commands

log = logging.getLogger("switchboard")

# Commands that run for a while and log what they do; the others print only their answer.
LOGGING_COMMANDS = {"serve", "worker", "sandbox serve"}


def _settings(args: argparse.Namespace) -> Settings:
    settings = Settings.from_env()
    if not getattr(args, "json", False):
        source = "SWITCHBOARD_DATA_DIR" if os.environ.get("SWITCHBOARD_DATA_DIR") else "default"
        if settings.log_format == "json":  # stderr holds JSON lines only
            log.info("data dir %s (%s)", settings.data_dir, source)
        else:
            print(f"switchboard: data dir {settings.data_dir} ({source})", file=sys.stderr, flush=True)
    return settings


def _port_free(host: str, port: int) -> bool:
    """Whether uvicorn will be able to bind (same SO_REUSEADDR as it uses)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                return False
            raise
    return True


def _port_in_use(host: str, port: int) -> int:
    print(f"error: {host}:{port} is already in use (another switchboard?); choose another with --port, "
          f"e.g. --port {port + 1}", file=sys.stderr)
    return 1


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from service.identity import bootstrap
    from storage.db import connection
    from switchboard.app import create_app, prepare
    from switchboard.running import announced

    overrides: dict[str, object] = {}
    settings = _settings(args)
    if "SWITCHBOARD_BASE_URL" not in os.environ:
        overrides["base_url"] = f"http://{args.host}:{args.port}"
    if "SWITCHBOARD_SANDBOX" not in os.environ and settings.is_sqlite:
        overrides["sandbox"] = True  # the embedded setup is for trying things: sandbox on
        if "SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE" not in os.environ:
            overrides["webhook_allow_private"] = True  # and webhooks to this machine (`webhooks listen`)
    settings = replace(settings, **overrides)  # type: ignore[arg-type]
    if not _port_free(args.host, args.port):
        return _port_in_use(args.host, args.port)

    prepare(settings)
    with connection():
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
    sandbox = "off"
    if settings.sandbox:
        sandbox = f"on at {settings.sandbox_base_url}/sandbox"
    print(
        f"Switchboard {settings.base_url} (sandbox {sandbox}; API reference {settings.base_url}/docs)\n"
        f"  Data dir:   {settings.data_dir}",
        flush=True,
    )
    app = create_app(settings, worker=not args.no_worker)
    with announced(settings):
        # log_config=None: uvicorn's lines go through the root handler, which withholds exception text.
        uvicorn.run(
            app, host=args.host, port=args.port, log_level="info", access_log=False, log_config=None, proxy_headers=True
        )
    return 0


def _worker(args: argparse.Namespace) -> int:
    from switchboard.wiring import prepare, start_worker, stop_worker

    settings = _settings(args)
    prepare(settings)
    runtime = start_worker(settings, embedded=True, workers=args.workers)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(f"Switchboard worker running with {args.workers} threads", flush=True)
    stop.wait()
    stop_worker(runtime)
    from tasks import engine as engine_tasks

    ticker = runtime.ticker
    print(f"Switchboard worker stopped: ran {engine_tasks.rows_run} rows, {engine_tasks.batch_tasks} batch tasks "
          f"taking {engine_tasks.batch_items} items; scheduler turns taken "
          f"{ticker.turns if ticker else 0}, left to another worker {ticker.passed if ticker else 0}", flush=True)
    return 0


def _bootstrap(args: argparse.Namespace) -> int:
    from kit.errors import ServiceError
    from service.identity import bootstrap
    from storage.db import connection
    from switchboard.wiring import prepare

    prepare(_settings(args))
    try:
        with connection():
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
    from kit.errors import ServiceError
    from service.identity import users
    from storage.db import connection
    from switchboard.wiring import prepare

    settings = _settings(args)
    password = args.password
    if password is None:
        password = getpass.getpass("New password: ")
        if getpass.getpass("Again: ") != password:
            print("error: the two passwords differ", file=sys.stderr)
            return 1
    prepare(settings)
    try:
        with connection():
            users.set_password(email=args.email, password=password)
    except ServiceError as error:
        details = "; ".join(f"the {d.field} {d.message}" for d in getattr(error, "details", None) or [])
        print(f"error: {details or error.message}", file=sys.stderr)
        return 1
    print(f"The password of {args.email} is set; every dashboard session of theirs has ended.")
    return 0


def _sandbox_seed(args: argparse.Namespace) -> int:
    """Connect one sandbox account per platform to a profile of the running service."""
    from service.identity import api_keys
    from storage.db import connection, db
    from storage.models import ApiKey, Profile, RateLimitCounter
    from switchboard.running import NoService, service_url, verify
    from switchboard.sandbox_seed import seed
    from switchboard.wiring import prepare

    settings = _settings(args)
    try:
        url = service_url(settings, args.url)
        verify(settings, url)  # before any key exists: it must go to this data dir's own service
    except NoService as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    prepare(settings)
    with connection(), db.atomic():
        if args.profile is None:
            # Without --profile: the only profile there is, or the list to choose from.
            profiles = list(Profile.select().order_by(Profile.created_at, Profile.id).limit(51))
            if len(profiles) != 1:
                listed = "".join(f"\n  --profile {p.id}  ({p.name}, workspace {p.workspace_id})" for p in profiles[:50])
                print("error: " + ("no profile yet: run `switchboard serve` once, or `switchboard bootstrap`"
                                   if not profiles else f"{len(profiles)} profiles here; name one:{listed}"),
                      file=sys.stderr)
                return 1
            args.profile = profiles[0].id
        profile = Profile.get_or_none(Profile.id == args.profile)
        if profile is None:
            print(f"error: no profile {args.profile}", file=sys.stderr)
            return 1
        # A key of its own for the few calls, deleted at the end (no revoked key left in the list).
        key = api_keys.create_key(
            workspace_id=profile.workspace_id, name="sandbox seed", scope="profiles", profile_ids=[profile.id]
        )
    try:
        accounts = seed(url, api_key=key.key, profile_id=profile.id)
    except (httpx2.HTTPError, RuntimeError) as error:
        print(f"error: the sandbox refused to connect an account ({_why(error)}); is SWITCHBOARD_SANDBOX_URL "
              "the sandbox this service uses?", file=sys.stderr)
        return 1
    finally:
        with connection(), db.atomic():
            ApiKey.delete().where(ApiKey.id == key.id).execute()
            RateLimitCounter.delete().where(RateLimitCounter.key_id == key.id).execute()
    if args.json:
        print(json.dumps({"accounts": accounts}))
    else:
        for platform, account_id in accounts.items():
            print(f"{platform:10} {account_id}")
    return 0


def _why(error: Exception) -> str:
    """What a failed call to the service answered, in a line (never a traceback)."""
    if isinstance(error, httpx2.HTTPStatusError):
        try:
            message = error.response.json().get("error", {}).get("message")
        except ValueError:
            message = None
        return f"HTTP {error.response.status_code}" + (f": {message}" if message else "")
    return str(error) or type(error).__name__


def _sandbox_serve(args: argparse.Namespace) -> int:
    """The emulator as its own process, for several API processes and workers to share."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from switchboard.app import prepare, sandbox_app

    settings = _settings(args)
    # Its public URL: SWITCHBOARD_SANDBOX_URL when set (behind a proxy, say), else where it listens.
    settings = replace(settings, sandbox=True, sandbox_url=settings.sandbox_url or f"http://{args.host}:{args.port}")
    if not _port_free(args.host, args.port):
        return _port_in_use(args.host, args.port)
    prepare(settings)  # the control endpoints look up the service's account ids in its database
    app = Starlette(routes=[Mount("/sandbox", app=sandbox_app(settings))])
    print(
        f"Switchboard sandbox {settings.sandbox_url}/sandbox, webhooks to {settings.base_url}/hooks\n"
        f"  Point the service at it: SWITCHBOARD_SANDBOX_URL={settings.sandbox_url}",
        flush=True,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level="info", access_log=False, log_config=None)
    return 0


def _analytics_snapshot(args: argparse.Namespace) -> int:
    """Take today's follower count of every connected account now, as the daily job does."""
    from service.analytics import ops as analytics
    from switchboard.running import running_sandbox
    from switchboard.wiring import prepare

    settings = _settings(args)
    sandbox = running_sandbox(settings)
    if sandbox is not None and not settings.sandbox:
        # The running service talks to its sandbox: so does this snapshot, not to the real platforms.
        settings = replace(settings, sandbox=True, sandbox_url=sandbox)
        if not args.json:
            print(f"switchboard: platforms of the running service: the sandbox at {sandbox}/sandbox",
                  file=sys.stderr, flush=True)
    prepare(settings)
    day = analytics.today().isoformat()
    snapshots = analytics.take_now()
    taken = [s for s in snapshots if s.outcome == "taken"]
    if args.json:
        print(json.dumps({"date": day, "snapshots": [
            {"accountId": s.account_id, "platform": s.platform, "outcome": s.outcome, "followers": s.followers,
             "reason": s.reason} for s in snapshots]}))
        return 0
    for s in snapshots:
        what = f"{s.followers} followers" if s.outcome == "taken" else f"{s.outcome}: {s.reason}"
        print(f"{s.account_id}  {s.platform:10} {what}")
    skipped = len(snapshots) - len(taken)
    print(f"Follower snapshot of {day}: {len(taken)} account(s) taken, {skipped} skipped.")
    return 0


def _webhooks_listen(args: argparse.Namespace) -> int:
    from switchboard.webhook_listen import listen

    return listen(args, _settings(args))


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

    users = commands.add_parser("users", help="dashboard sign-ins")
    users_commands = users.add_subparsers(dest="users_command", required=True)
    set_password = users_commands.add_parser("set-password", help="set a new password for a user")
    set_password.add_argument("--email", required=True)
    set_password.add_argument("--password", help="the new password (prompted when omitted)")
    set_password.set_defaults(run=_set_password)

    sandbox = commands.add_parser("sandbox", help="the platform emulator")
    sandbox_commands = sandbox.add_subparsers(dest="sandbox_command", required=True)
    seed = sandbox_commands.add_parser("seed", help="connect one sandbox account per platform")
    seed.add_argument("--profile", help="the profile (default: the only one there is)")
    seed.add_argument("--url", help="the running service (default: SWITCHBOARD_BASE_URL, else the running serve's)")
    seed.add_argument("--json", action="store_true")
    seed.set_defaults(run=_sandbox_seed)
    sandbox_serve = sandbox_commands.add_parser("serve", help="run the emulator as its own process")
    sandbox_serve.add_argument("--host", default="127.0.0.1")
    sandbox_serve.add_argument("--port", type=int, default=8100)
    sandbox_serve.set_defaults(run=_sandbox_serve)

    webhooks = commands.add_parser("webhooks", help="outbound webhooks")
    webhooks_commands = webhooks.add_subparsers(dest="webhooks_command", required=True)
    listen = webhooks_commands.add_parser("listen", help="receive the service's webhook events here")
    listen.add_argument("--forward-to", help="also POST each event to this local http(s) URL")
    listen.add_argument("--events", help="comma-separated event names (default: every event)")
    listen.add_argument("--workspace", help="the workspace (default: the only one, else required)")
    listen.add_argument("--url", help="the running service (default: SWITCHBOARD_BASE_URL, else the running serve's)")
    listen.add_argument("--port", type=int, default=0, help="port of the local HTTPS receiver (default: any free)")
    listen.set_defaults(run=_webhooks_listen)

    analytics = commands.add_parser("analytics", help="follower analytics")
    analytics_commands = analytics.add_subparsers(dest="analytics_command", required=True)
    snapshot = analytics_commands.add_parser(
        "snapshot", help="take today's follower count of every connected account now (the daily job does it too)")
    snapshot.add_argument("--json", action="store_true")
    snapshot.set_defaults(run=_analytics_snapshot)

    ops_commands.add_commands(commands, _settings)
    return parser


def configure_process_logging(command: str) -> None:
    """The log of a `switchboard` command: INFO for the long-running ones, WARNING for the rest;
    every line redacted and every traceback without its exception's text (platforms/log_format.py)."""
    if command in LOGGING_COMMANDS:
        configure_logging(logging.INFO, "%(asctime)s %(levelname)s %(name)s %(message)s")
        # The MCP SDK logs every request at INFO, httpx2 every outbound call (each webhook delivery,
        # each platform call) and Huey two lines for every task: a busy worker spent a tenth of its
        # time writing those lines. Huey's consumer still says at INFO how it started and stopped.
        for chatty in ("mcp", "httpx2", "huey"):
            logging.getLogger(chatty).setLevel(logging.WARNING)
        logging.getLogger("huey.consumer").setLevel(logging.INFO)
    else:
        configure_logging(logging.WARNING, "%(levelname)s %(name)s %(message)s")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    log_format = (os.environ.get("SWITCHBOARD_LOG_FORMAT") or "text").strip().lower()
    if log_format not in {"text", "json"}:
        print("error: SWITCHBOARD_LOG_FORMAT must be `text` or `json`", file=sys.stderr)
        return 2
    configure_process_logging(" ".join(filter(None, [args.command, getattr(args, "sandbox_command", None)])))
    if log_format == "json":
        from switchboard.json_logs import JsonFormatter

        for handler in logging.getLogger().handlers:
            handler.setFormatter(JsonFormatter())
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
