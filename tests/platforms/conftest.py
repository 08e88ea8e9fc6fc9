from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route

from platforms import inbound
from platforms.base import AccountContext, Adapter
from platforms.emulator_kit.app import create_emulator_app
from platforms.http import build_client
from platforms.registry import PlatformConfig, build_adapters
from tests.support.live_server import free_port, live_server


@dataclass
class Hook:
    platform: str
    headers: dict[str, str]
    body: bytes
    query: dict[str, str]
    verified: bool
    events: list[inbound.InboundEvent]


@dataclass
class Sandbox:
    base: str
    config: PlatformConfig
    client: httpx2.Client
    adapters: dict[str, Adapter]
    emulator: Any
    hooks: list[Hook] = field(default_factory=list)
    aliases: dict[tuple[str, str], str] = field(default_factory=dict)
    media: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    media_reads: list[tuple[str, str | None]] = field(default_factory=list)
    """Each read of a media: its name and the `Range` it asked for (None: the whole file)."""

    def url(self, platform: str, path: str) -> str:
        return f"{self.base}/sandbox/{platform}/{path.lstrip('/')}"

    def control(self, platform: str, path: str, body: Any = None, method: str = "POST") -> httpx2.Response:
        return self.client.request(method, self.url(platform, path), json=body)

    def account(self, platform: str, **fields: Any) -> AccountContext:
        answer = self.control(platform, "accounts", fields)
        assert answer.status_code == 201, answer.text
        data = answer.json()
        return AccountContext(data["platformAccountId"], data["credentials"])

    def connected(self, platform: str, **fields: Any) -> AccountContext:
        """A sandbox account connected the way the service does it (webhooks subscribed)."""
        account = self.account(platform, **fields)
        adapter = self.adapters[platform]
        if platform == "telegram":
            identity = adapter.connect_with_token(botToken=account.credentials["botToken"])
            return AccountContext(identity.platform_account_id, identity.credentials)
        if platform == "whatsapp":
            identity = adapter.connect_with_token(**account.credentials)
            return AccountContext(identity.platform_account_id, identity.credentials)
        if platform in ("instagram", "facebook"):
            adapter.subscribe_webhooks(account)
        return account

    def sent(self, platform: str, account: AccountContext) -> list[dict[str, Any]]:
        answer = self.client.get(
            self.url(platform, "sent"), params={"accountId": account.platform_account_id}
        )
        assert answer.status_code == 200, answer.text
        return answer.json()["data"]

    def inbound(
        self, platform: str, account: AccountContext, contact: dict[str, Any], text: str, **extra: Any
    ) -> Any:
        answer = self.control(
            platform,
            "inbound-message",
            {"accountId": account.platform_account_id, "from": contact, "text": text, **extra},
        )
        assert answer.status_code == 200, answer.text
        return answer.json()

    def oauth(self, platform: str, state: str = "st-1", hint: str | None = None) -> tuple[str, str]:
        """Drive the auto-approving consent page; returns (code, redirect_uri)."""
        redirect_uri = f"{self.base}/callback/{platform}"
        url = self.adapters[platform].authorize_url(state=state, redirect_uri=redirect_uri)
        if hint:
            url += f"&login_hint={hint}"
        answer = self.client.get(url)
        assert answer.status_code == 302, answer.text
        location = answer.headers["location"]
        assert location.startswith(redirect_uri)
        query = parse_qs(urlsplit(location).query)
        assert query["state"] == [state]
        return query["code"][0], redirect_uri


def _test_app(holder: dict[str, Any]) -> Starlette:
    lock = threading.Lock()

    async def hooks(request: Request) -> Response:
        sandbox: Sandbox = holder["sandbox"]
        platform = request.path_params["platform"]
        query = dict(request.query_params)
        adapter = sandbox.adapters[platform]
        if request.method == "GET":
            challenge = adapter.webhook_check(query)
            return PlainTextResponse(challenge if isinstance(challenge, str) else "",
                                     status_code=200 if challenge else 403)
        raw = await request.body()
        verified = adapter.verify_webhook(request.headers, raw, query)
        payload = json.loads(raw)
        events = adapter.parse_webhook(payload, query) if verified and isinstance(payload, dict) else []
        with lock:
            sandbox.hooks.append(Hook(platform, dict(request.headers), raw, query, verified, events))
        return JSONResponse({"ok": verified}, status_code=200 if verified else 403)

    async def media(request: Request) -> Response:
        sandbox: Sandbox = holder["sandbox"]
        content, kind = sandbox.media[request.path_params["name"]]
        asked = request.headers.get("range")
        sandbox.media_reads.append((request.path_params["name"], asked))
        if asked and asked.startswith("bytes="):
            first, _, last = asked[6:].partition("-")
            end = min(int(last) + 1 if last else len(content), len(content))
            return Response(content[int(first):end], status_code=206, media_type=kind, headers={
                "Content-Range": f"bytes {first}-{end - 1}/{len(content)}"})
        return Response(content, media_type=kind)

    return Starlette(
        routes=[
            Route("/hooks/{platform}", hooks, methods=["GET", "POST"]),
            Route("/media/{name}", media, methods=["GET"]),
            Mount("/sandbox", app=holder["emulator_app"]),
        ]
    )


def adapters_with(**config: Any) -> dict[str, Adapter]:
    """Every adapter, built from a configuration of the given secrets (no platform is called)."""
    return build_adapters(PlatformConfig(hooks_base_url="http://hooks.test", **config), httpx2.Client())


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    config = PlatformConfig.for_sandbox(base, secret_key=b"test-secret")
    client = build_client()
    holder: dict[str, Any] = {}
    aliases: dict[tuple[str, str], str] = {}
    emulator_app = create_emulator_app(
        config=config, resolve_account=lambda p, a: aliases.get((p, a), a), client=client
    )
    holder["emulator_app"] = emulator_app
    with live_server(_test_app(holder), port=port):
        box = Sandbox(
            base, config, client, build_adapters(config, client), emulator_app.state.emulator, aliases=aliases
        )
        holder["sandbox"] = box
        yield box
    client.close()
