"""The composition root: builds the whole service from settings and owns its lifespan.

One router holds: `/mcp` (the MCP server for AI assistants, first), `/v1` (the HTTP API),
`/hooks/{platform}` (platform webhooks), `/sandbox` (the platform emulator, when on), `/oauth` and
`/.well-known` (the authorisation server), sign-in and `/dashboard`.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.routing import BaseRoute, Mount, Route

from dashboard import routes as dashboard
from http_api import docs, hooks
from http_api.app import EXCEPTION_HANDLERS, v1_routes
from http_api.middleware import ServiceApp
from http_api.routes import media as media_routes
from kit.settings import Settings
from mcp_server import server as mcp_server
from oauth import endpoints, signin
from platforms.emulator_kit import catalog as sandbox_catalog
from platforms.emulator_kit.app import create_emulator_app
from service.accounts import adapters
from storage import db as storage_db
from storage.models import Account
from switchboard import running

# What the worker part of the service is (`switchboard.wiring`), named here too: the composition
# root's callers (the CLI, the tests, the benchmarks) find all of it in one place.
from switchboard.wiring import Runtime, prepare, start_storage, start_worker, stop_worker, wire

__all__ = ["Runtime", "create_app", "prepare", "sandbox_app", "start_worker", "stop_worker", "wire"]


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


def create_app(settings: Settings, *, worker: bool = True) -> ServiceApp:
    """The whole service as one ASGI app. `worker=False` for API-only processes (scale-out)."""

    mcp = mcp_server.build_mcp(settings)  # one per app: its session manager runs once

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        prepare(settings)
        runtime = start_worker(settings, embedded=True) if worker else start_storage()
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

    routes: list[BaseRoute] = [
        *v1_routes(
            base_url=settings.base_url, rate_limit_per_minute=settings.rate_limit_per_minute,
            reference_appendix=sandbox_catalog.markdown(),
        ),
        *hooks.ROUTES, *media_routes.ROUTES,
    ]
    if settings.sandbox and not settings.sandbox_url:  # else `switchboard sandbox serve` runs it apart
        routes.append(Mount("/sandbox", app=sandbox_app(settings)))
    routes += endpoints.routes(settings)  # /.well-known, /oauth
    routes += signin.all_routes(settings)  # /dashboard/login, /dashboard/logout
    routes += dashboard.build_routes(settings)  # /dashboard
    routes += docs.routes()  # / (to the dashboard), /docs (the API reference)
    routes.append(Route(running.PROOF_PATH, running.proof_endpoint(settings)))  # see `running`
    # The MCP app, on exactly /mcp rather than mounted at "/": a catch-all mount would answer every
    # unknown /v1 path (and wrong method) with its own plain 404 instead of our JSON errors. Its
    # protected-resource metadata route is served by ours. First: the router tries routes in order,
    # and a tool call should not be matched against every /v1 path before its own.
    routes.insert(0, Route("/mcp", endpoint=mcp_server.mcp_app(mcp, settings)))
    return ServiceApp(routes=routes, exception_handlers=EXCEPTION_HANDLERS, lifespan=lifespan)
