"""The emulator's shared machinery: the API-call wrapper (latency, token check, injected faults),
request parsing, the sent log, and what each platform's module plugs into it.

Each platform's emulation is a mixin of `EmulatorBase` in its own module (`telegram.py`,
`instagram.py`, ...); `platforms.emulator.Emulator` composes them and answers the few questions
that depend on the platform (which account to make, which credentials to hand out, which unknown
credential to adopt) from one table, `PlatformParts`.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import hmac
import ipaddress
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx2
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from platforms.emulator_kit.errors import GRAPH, auth_error, fault_response, graph_error, malformed_error
from platforms.emulator_kit.state import Account, EmulatorState, Token
from platforms.emulator_kit.store import StateStore
from platforms.registry import PlatformConfig


def iso_z(moment: float) -> str:
    return dt.datetime.fromtimestamp(moment, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(moment: float) -> str:
    """To the millisecond: the sent log is read to check a sender's pace."""
    return dt.datetime.fromtimestamp(moment, dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def graph_time(moment: float) -> str:
    return dt.datetime.fromtimestamp(moment, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S+0000")


def bad_button_url(url: Any) -> bool:
    """True when a platform would refuse this button URL: not http(s), no host, or a local address."""
    if not isinstance(url, str):
        return True
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return True
    host = parts.hostname
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@dataclass
class Call:
    """One API request as a handler sees it."""

    request: Request
    platform: str
    token: Token | None
    account: Account | None
    raw: bytes = b""
    _params: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def query(self) -> dict[str, str]:
        return dict(self.request.query_params)

    def body_json(self) -> Any:
        if not self.raw:
            return {}
        return json.loads(self.raw)

    def params(self) -> dict[str, Any]:
        """Graph style: query, then a JSON or form body, merged (values of JSON kept as sent)."""
        if self._params is None:
            merged: dict[str, Any] = dict(self.query)
            kind = self.request.headers.get("content-type", "")
            if self.raw:
                if "json" in kind:
                    body = json.loads(self.raw)
                    if isinstance(body, dict):
                        merged.update(body)
                elif "x-www-form-urlencoded" in kind:
                    merged.update(dict(parse_qsl(self.raw.decode(), keep_blank_values=True)))
            self._params = merged
        return self._params

    def payload(self) -> Any:
        """The request body exactly as received, decoded (JSON or form); query for body-less calls."""
        kind = self.request.headers.get("content-type", "")
        if self.raw and "json" in kind:
            return json.loads(self.raw)
        if self.raw and "x-www-form-urlencoded" in kind:
            return dict(parse_qsl(self.raw.decode(), keep_blank_values=True))
        return self.query


Handler = Callable[[Call], Awaitable[Response]]


@dataclass
class AuthCode:
    platform: str
    account_id: str
    redirect_uri: str
    expires_at: float
    challenge: str | None = None
    challenge_method: str | None = None
    used: bool = False
    scope: str = ""


@dataclass(frozen=True)
class PlatformParts:
    """What one platform's module contributes to the composed emulator. `adopt` makes the account
    of a well-formed credential the sandbox has not seen (see `EmulatorBase.adopt`), or None."""

    routes: Callable[[], list[Route]]
    new_account: Callable[[str | None, str | None], Account]
    credentials: Callable[[Account], dict[str, Any]]
    adopt: Callable[[Request, str], Account | None] | None = None


class EmulatorBase:
    def __init__(
        self,
        *,
        config: PlatformConfig,
        resolve_account: Callable[[str, str], str | None],
        client: httpx2.Client,
        rate_limits: bool = True,
        store: StateStore | None = None,
    ) -> None:
        self.config = config
        self.resolve_account = resolve_account
        self.client = client
        self.rate_limits = rate_limits
        self.state = EmulatorState(store)
        # Authorisation codes live in the state (so they survive a restart), as `AuthCode`s.
        self.codes: dict[str, AuthCode] = self.state.codes
        for value, code in list(self.codes.items()):
            if isinstance(code, dict):
                self.codes[value] = AuthCode(**code)
        self.started = time.time()
        # How long video media takes to process, per platform (control `processing`), and how far
        # the emulator's clock was moved on (`advanceSeconds`): a container that takes minutes is
        # tried without waiting minutes. Kept in memory only.
        self.processing_seconds: dict[str, float] = {}
        self.clock_offset = 0.0
        # Webhooks the platform sends a moment after answering (a delivery's failed status), kept
        # referenced until they ran.
        self._background: set[asyncio.Task[None]] = set()

    def now(self) -> float:
        return time.time() + self.clock_offset

    def platform_of(self, request: Request) -> str:
        """The platform a request is for: the first segment of its path under the mount."""
        path = request.scope.get("path", "")
        root = request.scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        return str(path.lstrip("/").split("/")[0])

    # -- per platform, answered by the composed emulator from its `PlatformParts` ---------------
    def new_account(self, platform: str, username: str | None = None, name: str | None = None) -> Account:
        raise NotImplementedError

    def credentials_for(self, account: Account) -> dict[str, Any]:
        raise NotImplementedError

    def adopt_account(self, platform: str, request: Request, value: str) -> Account | None:
        raise NotImplementedError

    # -- what one grant reaches (the sandbox consent's `reach`) ---------------------------------
    def reached(self, account: Account) -> list[Account]:
        """The account a grant was made for and the others the same grant reaches (its `siblings`:
        the other Pages, ad accounts, organizations or channels of the same person)."""
        others = [self.state.account(account.platform, sid) for sid in account.extra.get("siblings", [])]
        return [account, *(other for other in others if other is not None)]

    def sibling(self, account: Account, node: str) -> Account | None:
        """The account `node` names when the grant behind `account`'s token reaches it too."""
        if node != account.id and node in account.extra.get("siblings", []):
            return self.state.account(account.platform, node)
        return None

    # -- API calls ---------------------------------------------------------------------------
    def bearer(self, request: Request) -> str | None:
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            return header[7:].strip()
        return None

    async def api(
        self,
        platform: str,
        request: Request,
        handler: Handler,
        *,
        token_value: str | None = None,
        kinds: tuple[str, ...] = ("access",),
        auth: bool = True,
    ) -> Response:
        # The request is the platform's once received: a client that dies while the platform takes
        # its time does not undo the call (what makes a lost answer dangerous to repeat).
        raw = await request.body()
        delay = self.state.latency_ms.get(platform, 0)
        if delay:
            await asyncio.sleep(delay / 1000)
        token = account = None
        if auth:
            value = token_value if token_value is not None else self.bearer(request)
            if value is None and platform in GRAPH:
                value = request.query_params.get("access_token")
                if value is None and "x-www-form-urlencoded" in request.headers.get("content-type", ""):
                    value = dict(parse_qsl(raw.decode(errors="replace"))).get("access_token")
            token = self.state.token(platform, value, kinds)
            if token is None and value and not self.state.knows(value):
                token = self.adopt(platform, request, value)
            if token is None:
                return auth_error(platform)
            account = self.state.account(platform, token.account_id)
            if account is None:
                return auth_error(platform)
            if platform in GRAPH and value and not self.proof_ok(platform, request, value, token.extra.get("app_id")):
                return graph_error(400, 100, "Invalid appsecret_proof provided in the API argument",
                                   error_type="GraphMethodException")
        fault = self.state.take_fault(platform, account.id if account else None, request.url.path)
        if fault is not None:
            if fault.hold_seconds:  # no answer for that long (the caller's read timeout runs out first)
                await asyncio.sleep(fault.hold_seconds)
            return fault_response(platform, fault)
        call = Call(request, platform, token, account, raw)
        try:
            return await handler(call)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return self.malformed(platform)

    def proof_ok(self, platform: str, request: Request, token: str, app_id: str | None = None) -> bool:
        """An `appsecret_proof`, when sent, must be the token's HMAC with the secret of the app the
        token was issued to (Graph answers code 100 "Invalid appsecret_proof" otherwise)."""
        proof = request.query_params.get("appsecret_proof")
        if proof is None:
            return True
        # Instagram Login tokens belong to the Instagram app: only its secret makes their proof.
        secret = (self.config.instagram_app_secret if platform == "instagram"
                  else self.config.meta_secret_for(app_id))
        expected = hmac.new(secret.encode(), token.encode(), hashlib.sha256).hexdigest()
        return bool(secret) and hmac.compare_digest(proof, expected)

    def adopt(self, platform: str, request: Request, value: str) -> Token | None:
        """A well-formed credential the sandbox has not seen makes its account, like a test card in
        a payment sandbox: a `<digits>:AA...` bot token that bot, a WhatsApp token used on a numeric
        phone number id that number. Anything else stays unknown (401, as the platform answers)."""
        account = self.adopt_account(platform, request, value)
        if account is None:
            return None
        self.state.add_account(account)
        return self.state.issue(platform, account.id, "access", None, value=value)

    def malformed(self, platform: str) -> Response:
        return malformed_error(platform)

    def record(
        self, call: Call, kind: str, to: str | None, text: str | None, platform_id: str, payload: Any = None,
        *, at: float | None = None,
    ) -> None:
        """One call's entry in the sent log; `at`, the instant a rate limit let it through, when it has one."""
        assert call.account is not None
        self.state.record(
            call.platform,
            {
                "platformAccountId": call.account.id,
                "kind": kind,
                "to": to,
                "text": text,
                "payload": call.payload() if payload is None else payload,
                "platformId": platform_id,
                "at": iso_ms(time.time() if at is None else at),
            },
        )

    # -- control helpers ---------------------------------------------------------------------
    async def resolve(self, platform: str, account_id: Any) -> Account | None:
        if not isinstance(account_id, str) or not account_id or not account_id.isascii():
            # Account ids are ASCII: anything else names no account, and a lone surrogate
            # would fail in the resolver's database.
            return None
        platform_id = await run_in_threadpool(self.resolve_account, platform, account_id)
        if not platform_id:
            return None
        return self.state.account(platform, platform_id)

    async def deliver(
        self, url: str, body: bytes, headers: dict[str, str], times: int = 1
    ) -> tuple[int | None, str | None]:
        """POST a webhook the way the platform does; returns the last status (or the error)."""
        status: int | None = None
        for _ in range(times):
            try:
                response = await run_in_threadpool(
                    self.client.post,
                    url,
                    content=body,
                    headers={"Content-Type": "application/json", **headers},
                )
            except httpx2.HTTPError as exc:
                return None, type(exc).__name__
            status = response.status_code
        return status, None
