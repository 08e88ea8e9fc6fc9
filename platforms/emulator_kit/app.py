"""The sandbox: an emulator of the platform APIs the adapters call, at the same paths.

Mounted by the service at `/sandbox`, so that `PlatformConfig.for_sandbox(base_url)` (every
platform at `{base_url}/sandbox/{platform}`) is the only difference from production. Answers use
each platform's own shapes and error shapes; tokens it issued are checked on every call.

Making accounts: `POST /sandbox/{platform}/accounts {username?, name?, followers?}` answers 201
`{platformAccountId, username, displayName, credentials}` (Telegram `{botToken}`, WhatsApp
`{phoneNumberId, wabaId, accessToken}`: what `connect_with_token` takes); the OAuth platforms also
connect through their auto-approving consent page (`login_hint` picks or names the account).
Like a payment provider's test mode, any well-formed credential connects: an unknown
`<digits>:AA...` bot token makes that bot, and an unknown WhatsApp token with a numeric phone
number id makes that number (its WhatsApp Business Account is the one it is first asked under).

Given a `state_path`, the emulator keeps its state in that SQLite file (`store.py`): a restart
changes nothing. Of the tokens and codes it issued or accepted it keeps only their SHA-256.

Layout: this folder holds what every platform's emulator shares: `core.py` (the API-call wrapper),
`errors.py`, `oauth.py`, `state.py`, `store.py`, `persist.py`, `controls.py` and `deliveries.py` (the
control endpoints), `catalog.py` (their list). Each platform's emulator is `platforms/<name>/emulator.py`,
the Graph ones on `platforms/graph/emulator.py` (nodes, edges) and `login_emulator.py` (Facebook Login),
Messenger's DMs and comments in `platforms/facebook/messenger.py`. This module composes them into one app.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from platforms.emulator_kit import catalog
from platforms.emulator_kit.answer import JSONResponse
from platforms.emulator_kit.core import PlatformParts
from platforms.emulator_kit.deliveries import WebhookControls
from platforms.emulator_kit.persist import Persist
from platforms.emulator_kit.state import Account
from platforms.emulator_kit.store import StateStore
from platforms.facebook.emulator import FacebookEmulator
from platforms.facebook.messenger import MessengerEmulator
from platforms.graph.emulator import GraphEmulator, edge_table
from platforms.http import build_client
from platforms.instagram.emulator import InstagramEmulator
from platforms.linkedin.emulator import LinkedInEmulator
from platforms.meta_ads.emulator import MetaAdsEmulator
from platforms.registry import PlatformConfig
from platforms.telegram.emulator import TelegramEmulator
from platforms.tiktok.emulator import TikTokEmulator
from platforms.whatsapp.emulator import WhatsAppEmulator
from platforms.x.emulator import XEmulator
from platforms.youtube.emulator import YouTubeEmulator


class Emulator(
    WebhookControls,
    GraphEmulator,
    InstagramEmulator,
    FacebookEmulator,
    MessengerEmulator,
    WhatsAppEmulator,
    MetaAdsEmulator,
    TelegramEmulator,
    TikTokEmulator,
    YouTubeEmulator,
    XEmulator,
    LinkedInEmulator,
):
    """Every platform's emulation on one state, wired here: each module's parts and Graph edges."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.parts: dict[str, PlatformParts] = {
            "instagram": self.instagram_parts(),
            "facebook": self.facebook_parts(),
            "whatsapp": self.whatsapp_parts(),
            "meta_ads": self.meta_ads_parts(),
            "telegram": self.telegram_parts(),
            "tiktok": self.tiktok_parts(),
            "youtube": self.youtube_parts(),
            "x": self.x_parts(),
            "linkedin": self.linkedin_parts(),
        }
        self.graph_edges = edge_table([
            *self.subscribed_apps_edges(),
            *self.messenger_graph_edges(),
            *self.instagram_graph_edges(),
            *self.facebook_graph_edges(),
            *self.whatsapp_graph_edges(),
            *self.meta_ads_graph_edges(),
        ])
        self.node_readers = {
            "instagram": self._ig_node,
            "facebook": self._fb_node,
            "whatsapp": self.whatsapp_node,
        }

    def new_account(self, platform: str, username: str | None = None, name: str | None = None) -> Account:
        return self.parts[platform].new_account(username, name)

    def credentials_for(self, account: Account) -> dict[str, Any]:
        return self.parts[account.platform].credentials(account)

    def adopt_account(self, platform: str, request: Request, value: str) -> Account | None:
        adopt = self.parts[platform].adopt
        return adopt(request, value) if adopt is not None else None

    async def c_index(self, request: Request) -> Response:
        """`GET /sandbox/`: every control with its body."""
        return JSONResponse({"data": catalog.listing()})

    def app(self) -> Starlette:
        routes = [Route("/", self.c_index, methods=["GET"]), *self.control_routes(), *self.webhook_control_routes()]
        # A platform's own routes (its OAuth endpoints among them) before the Graph node and edge
        # patterns, which would match `/instagram/oauth/access_token` too.
        for parts in self.parts.values():
            routes += parts.routes()
        routes += self.graph_routes()
        app = Starlette(routes=routes, middleware=[Middleware(Persist, state=self.state)])
        app.state.emulator = self
        return app


def create_emulator_app(
    *,
    config: PlatformConfig,
    resolve_account: Callable[[str, str], str | None],
    client: httpx2.Client | None = None,
    rate_limits: bool = True,
    state_path: Path | None = None,
) -> Starlette:
    """The sandbox Starlette app. `resolve_account(platform, "acc_...")` translates the service's
    account ids in control bodies into platform account ids (None: unknown, 404). `client` posts
    the webhooks (the shared client; one is built when omitted). `rate_limits=False` lifts the
    WhatsApp and Telegram pace limits (benchmarks). `state_path`: the SQLite file that keeps the
    state across restarts (None: memory only). `app.state.emulator` is the `Emulator`."""
    emulator = Emulator(
        config=config,
        resolve_account=resolve_account,
        client=client or build_client(),
        rate_limits=rate_limits,
        store=StateStore(state_path) if state_path is not None else None,
    )
    return emulator.app()
