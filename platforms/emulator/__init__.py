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
changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request

from platforms.emulator.controls import Controls
from platforms.emulator.meta import MetaEmulator
from platforms.emulator.others import OtherEmulators
from platforms.emulator.persist import Persist
from platforms.emulator.state import Account
from platforms.emulator.store import StateStore
from platforms.http import build_client
from platforms.registry import PlatformConfig

META = ("instagram", "facebook", "whatsapp", "meta_ads")


class Emulator(Controls, MetaEmulator, OtherEmulators):
    def platform_of(self, request: Request) -> str:
        return MetaEmulator.platform_of(self, request)

    def new_account(self, platform: str, username: str | None = None, name: str | None = None) -> Account:
        if platform in META:
            return self.new_meta_account(platform, username, name)
        return self.new_other_account(platform, username, name)

    def credentials_for(self, account: Account) -> dict[str, Any]:
        if account.platform in META:
            return self.meta_credentials(account)
        return self.other_credentials(account)

    def app(self) -> Starlette:
        app = Starlette(
            routes=[*self.control_routes(), *self.meta_routes(), *self.other_routes()],
            middleware=[Middleware(Persist, state=self.state)],
        )
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
