"""The composition root: builds the whole service from settings and owns its lifespan.

One router holds: `/mcp` (the MCP server for AI assistants, first), `/v1` (the HTTP API),
`/hooks/{platform}` (platform webhooks), `/sandbox` (the platform emulator, when on), `/oauth` and
`/.well-known` (the authorisation server) and `/dashboard`.
"""

from __future__ import annotations

import contextlib
import gc
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.routing import BaseRoute, Mount, Route

from http_api import docs, hooks
from http_api.app import EXCEPTION_HANDLERS, v1_routes
from http_api.middleware import ServiceApp
from http_api.routes import media as media_routes
from mcp_server import server as mcp_server
from oauth import dashboard, endpoints
from platforms.emulator import create_emulator_app
from service.accounts import adapters
from service.accounts import work as account_work
from service.analytics import ops as analytics
from service.analytics import work as analytics_work
from service.automations import ops as automations
from service.automations import work as automation_work
from service.broadcasts import ops as broadcasts
from service.broadcasts import work as broadcast_work
from service.engine import core as engine
from service.inbox import conversations, outbound, pacer, polling, profiles
from service.kit import health, signals
from service.kit import settings as settings_module
from service.kit.settings import Settings
from service.posts import ops as posts
from service.posts import publishing
from service.posts import work as post_work
from service.sequences import ops as sequences
from service.sequences import work as sequence_work
from service.webhooks import work as webhook_work
from storage import db as storage_db
from storage import files
from storage.migrations import migrate
from storage.models import Account
from switchboard import running
from tasks import engine as engine_tasks
from tasks import posts as post_tasks
from tasks import queue, scheduler

log = logging.getLogger("switchboard")


@dataclass
class Runtime:
    """What the lifespan started, so it can stop it."""

    consumer: Any = None
    ticker: scheduler.Ticker | None = None


def wire() -> None:
    """Connect everything the service runs on, here and nowhere else: the receivers of each
    cross-domain signal (`service.kit.signals`), the engine's kinds of durable work and how they
    reach the queue, and the scheduler's tick jobs."""
    signals.disconnect_all()
    # What each kind of platform event stored at /hooks does.
    for kinds, handler in conversations.INBOUND_HANDLERS.items():
        signals.platform_event.connect(handler, *kinds)
    signals.platform_event.connect(automations.comment_received, "comment")
    signals.platform_event.connect(publishing.on_native_post, "post")
    # Sequences enrol new conversations and story replies, and stop when the contact writes.
    signals.conversation_started.connect(sequences.conversation_started)
    signals.contact_wrote.connect(sequences.contact_wrote)
    # A contact known only by a scoped id (Instagram, Facebook) gets their name read from the platform.
    signals.contact_wrote.connect(profiles.contact_wrote)
    # Broadcast recipients follow their message.
    signals.message_finished.connect(broadcasts.message_finished, "broadcast", sent=False)
    signals.message_finished.ride(broadcasts.recipient_sent, "broadcast")
    signals.message_failed_later.connect(broadcasts.message_failed_later)
    # What an account's permanent deletion takes with it.
    signals.account_deleting.connect(lambda account_id: ("conversations", conversations.delete_for_account(account_id)))
    signals.account_deleting.connect(lambda account_id: ("followerSnapshots", analytics.delete_for_account(account_id)))
    signals.account_deleting.connect(lambda account_id: ("broadcasts", broadcasts.delete_for_account(account_id)))
    signals.account_deleting.connect(lambda account_id: ("postTargets", posts.delete_for_account(account_id)))
    # The outbox's dispatcher starts as soon as events commit.
    signals.events_committed.connect(engine_tasks.batch_nudger(webhook_work.DISPATCH_WORK.name))
    engine.reset()
    engine.register(webhook_work.DISPATCH_WORK)
    engine.register(webhook_work.DELIVERY_WORK)
    engine.register(outbound.MESSAGE_WORK)
    engine.register(automation_work.REPLY_WORK)
    engine.register(sequence_work.ENROLLMENT_WORK)
    engine.register(broadcast_work.START_WORK)
    engine.register(broadcast_work.SEND_WORK)
    engine.register(publishing.TARGET_WORK)
    engine.register(post_work.DELETION_WORK)
    engine.register(account_work.RENEWAL_WORK)
    engine.register(analytics_work.SNAPSHOT_WORK)
    engine.register(profiles.LOOKUP_WORK)
    engine.register(polling.POLL_WORK)
    engine.set_nudger(engine_tasks.enqueue)
    scheduler.set_jobs([scheduler.housekeeping, engine_tasks.sweep, broadcasts.complete_finished,
                        post_tasks.forget_expired_uploads])


def prepare(settings: Settings) -> None:
    """Configure the process-wide handles (settings, database, queue, platforms, pace), wire the
    service and upgrade the schema."""
    settings_module.configure(settings)
    if settings.data_dir.exists():
        files.private_dir(settings.data_dir, tighten=True)  # it holds every secret at rest
    storage_db.initialise(settings.database_url)
    queue.configure(settings)
    adapters.configure(settings)
    pacer.configure(settings)
    health.configure(queue_answers=queue.ping)
    wire()
    migrate()


def _sandbox_account(platform: str, account_id: str) -> str | None:
    """The emulator's view of our account ids (its control endpoints take `acc_...`)."""
    with storage_db.connection():
        account = Account.get_or_none(Account.id == account_id, Account.platform == platform)
        return account.platform_account_id if account is not None else None


def sandbox_app(settings: Settings) -> Starlette:
    """The platform emulator, keeping its state in the data dir's `sandbox.db`."""
    return create_emulator_app(
        config=adapters.platform_config(settings),
        resolve_account=_sandbox_account,
        state_path=settings.data_dir / "sandbox.db",
    )


def start_worker(settings: Settings, *, embedded: bool, workers: int = 4) -> Runtime:
    runtime = Runtime()
    runtime.consumer = queue.consumer(workers=workers, embedded=embedded)
    runtime.consumer.start()
    runtime.ticker = scheduler.Ticker(settings.scheduler_tick_seconds).start()
    return runtime


def stop_worker(runtime: Runtime) -> None:
    if runtime.ticker is not None:
        runtime.ticker.stop()
    if runtime.consumer is not None:
        runtime.consumer.stop(graceful=True)


def create_app(settings: Settings, *, worker: bool = True) -> ServiceApp:
    """The whole service as one ASGI app. `worker=False` for API-only processes (scale-out)."""

    mcp = mcp_server.build_mcp(settings)  # one per app: its session manager runs once

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        prepare(settings)
        runtime = start_worker(settings, embedded=True) if worker else Runtime()
        try:
            async with mcp.session_manager.run():
                # What start-up made (modules, models, schemas, routes: some 140,000 objects) lives as
                # long as the app: kept out of the collector's full passes, which otherwise stop the
                # process for 60 ms every few thousand MCP calls to walk it all again. Given back
                # when the app stops (a test process runs many apps, one after another).
                gc.freeze()
                try:
                    yield
                finally:
                    gc.unfreeze()
        finally:
            stop_worker(runtime)

    routes: list[BaseRoute] = [*v1_routes(base_url=settings.base_url), *hooks.ROUTES, *media_routes.ROUTES]
    if settings.sandbox and not settings.sandbox_url:  # else `switchboard sandbox serve` runs it apart
        routes.append(Mount("/sandbox", app=sandbox_app(settings)))
    routes += endpoints.routes(settings)  # /.well-known, /oauth
    routes += dashboard.build_routes(settings)  # /dashboard
    routes += docs.routes()  # / (to the dashboard), /docs (the API reference)
    routes.append(Route(running.PROOF_PATH, running.proof_endpoint(settings)))  # see `running`
    # The MCP app, on exactly /mcp rather than mounted at "/": a catch-all mount would answer every
    # unknown /v1 path (and wrong method) with its own plain 404 instead of our JSON errors. Its
    # protected-resource metadata route is served by ours. First: the router tries routes in order,
    # and a tool call should not be matched against every /v1 path before its own.
    routes.insert(0, Route("/mcp", endpoint=mcp_server.mcp_app(mcp, settings)))
    return ServiceApp(routes=routes, exception_handlers=EXCEPTION_HANDLERS, lifespan=lifespan)
