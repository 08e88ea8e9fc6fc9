"""The emulator's shared machinery: platform error shapes, the API-call wrapper (latency, token
check, injected faults), OAuth authorisation codes, and request parsing."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import hashlib
import hmac
import ipaddress
import json
import math
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx2
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response

from platforms.emulator.state import Account, EmulatorState, Fault, Token, random_token
from platforms.emulator.store import StateStore
from platforms.registry import PlatformConfig

GRAPH = ("instagram", "facebook", "whatsapp", "meta_ads")
# The throttling code and usage type of each Graph platform's business use case.
BUSINESS_USE_CASE = {"instagram": (80002, "instagram"), "facebook": (80006, "messenger"),
                     "meta_ads": (80004, "ads_management")}
TELEGRAM_TOKEN = re.compile(r"^(\d{1,19}):AA[A-Za-z0-9_-]{30,40}$")


def iso_z(moment: float) -> str:
    return dt.datetime.fromtimestamp(moment, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(moment: float) -> str:
    """To the millisecond: the sent log is read to check a sender's pace."""
    return dt.datetime.fromtimestamp(moment, dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def graph_time(moment: float) -> str:
    return dt.datetime.fromtimestamp(moment, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S+0000")


def trace_id() -> str:
    return random_token(11)


# -- error shapes, each platform's own ------------------------------------------------------------
def graph_error(
    status: int,
    code: int,
    message: str,
    subcode: int | None = None,
    *,
    whatsapp: bool = False,
    details: str | None = None,
    error_type: str = "OAuthException",
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    error: dict[str, Any] = {"message": message, "type": error_type, "code": code}
    if subcode is not None:
        error["error_subcode"] = subcode
    if whatsapp:
        error["error_data"] = {"messaging_product": "whatsapp", "details": details or message}
    elif details:
        error["error_user_msg"] = details
    error["fbtrace_id"] = trace_id()
    return JSONResponse({"error": error}, status_code=status, headers=headers)


def graph_page(request: Request, items: list[Any], default_limit: int = 25) -> JSONResponse:
    """One page of a Graph list, as Graph pages: `limit`, `after`/`before` cursors, and `paging.next`
    (with the cursor) while more remain."""
    try:
        limit = max(1, min(int(request.query_params.get("limit", default_limit)), 100))
    except ValueError:
        limit = default_limit
    after = request.query_params.get("after")
    try:
        start = int(base64.b64decode(after).decode()) + 1 if after else 0
    except ValueError:
        return graph_error(400, 100, "(#100) Invalid after cursor")
    page = items[start : start + limit]

    def cursor(index: int) -> str:
        return base64.b64encode(str(index).encode()).decode()

    paging: dict[str, Any] = {}
    if page:
        paging["cursors"] = {"before": cursor(start), "after": cursor(start + len(page) - 1)}
    if start + limit < len(items):
        query = dict(request.query_params)
        query.pop("access_token", None)
        query.update(limit=str(limit), after=cursor(start + len(page) - 1))
        paging["next"] = f"{str(request.url).split('?')[0]}?{urlencode(query)}"
    return JSONResponse({"data": page, "paging": paging})


def telegram_error(code: int, description: str, retry_after: int | None = None) -> JSONResponse:
    body: dict[str, Any] = {"ok": False, "error_code": code, "description": description}
    if retry_after is not None:
        body["parameters"] = {"retry_after": retry_after}
    return JSONResponse(body, status_code=code)


def tiktok_error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    body = {"data": {}, "error": {"code": code, "message": message, "log_id": random_token(24)}}
    return JSONResponse(body, status_code=status, headers=headers)


def google_error(
    status: int, reason: str, message: str, *, domain: str = "global", headers: dict[str, str] | None = None
) -> JSONResponse:
    statuses = {
        400: "INVALID_ARGUMENT",
        401: "UNAUTHENTICATED",
        403: "PERMISSION_DENIED",
        404: "NOT_FOUND",
        429: "RESOURCE_EXHAUSTED",
        500: "INTERNAL",
    }
    body = {
        "error": {
            "code": status,
            "message": message,
            "errors": [{"message": message, "domain": domain, "reason": reason}],
            "status": statuses.get(status, "UNKNOWN"),
        }
    }
    return JSONResponse(body, status_code=status, headers=headers)


def x_error(
    status: int, title: str, detail: str, *, kind: str = "about:blank", headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"title": title, "detail": detail, "type": kind, "status": status},
        status_code=status,
        headers=headers,
    )


def linkedin_error(
    status: int,
    message: str,
    code: str | None = None,
    service_code: int | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {"status": status, "message": message}
    if code:
        body["code"] = code
    if service_code:
        body["serviceErrorCode"] = service_code
    return JSONResponse(body, status_code=status, headers=headers)


def oauth_error(error: str, description: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": error, "error_description": description}, status_code=status)


def auth_error(platform: str) -> JSONResponse:
    """The platform's own answer to a missing, unknown, expired or revoked token."""
    if platform in GRAPH:
        return graph_error(
            401,
            190,
            "Error validating access token: Session has expired or the token is invalid.",
            463,
            whatsapp=platform == "whatsapp",
        )
    if platform == "telegram":
        return telegram_error(401, "Unauthorized")
    if platform == "tiktok":
        return tiktok_error(
            401, "access_token_invalid", "The access token is invalid or not found in the request."
        )
    if platform == "youtube":
        return google_error(
            401, "authError", "Request had invalid authentication credentials. Expected OAuth 2 access token."
        )
    if platform == "x":
        return x_error(401, "Unauthorized", "Unauthorized")
    return linkedin_error(401, "The token used in the request has expired", "EXPIRED_ACCESS_TOKEN", 65601)


def rate_error(platform: str, retry_after: float) -> JSONResponse:
    seconds = max(1, round(retry_after))
    header = {"Retry-After": str(seconds)}
    if platform == "whatsapp":
        return graph_error(
            429,
            130429,
            "(#130429) Rate limit hit",
            whatsapp=True,
            details="Cloud API message throughput has been reached.",
            headers=header,
        )
    if platform in GRAPH:
        # Business-use-case throttling, as Graph does it: no Retry-After, the wait in minutes in
        # `X-Business-Use-Case-Usage`.
        code, kind = BUSINESS_USE_CASE[platform]
        usage = {"sandbox": [{"type": kind, "call_count": 100, "total_cputime": 100, "total_time": 100,
                              "estimated_time_to_regain_access": math.ceil(retry_after / 60)}]}
        return graph_error(
            400, code, f"(#{code}) There have been too many calls from this account. Wait a bit and try again.",
            error_type="OAuthException", headers={"X-Business-Use-Case-Usage": json.dumps(usage)},
        )
    if platform == "telegram":
        return telegram_error(429, f"Too Many Requests: retry after {seconds}", seconds)
    if platform == "tiktok":
        return tiktok_error(429, "rate_limit_exceeded", "API rate limit exceeded.", header)
    if platform == "youtube":
        return google_error(
            429,
            "rateLimitExceeded",
            "The request cannot be completed: rate limit exceeded.",
            domain="youtube.quota",
            headers=header,
        )
    if platform == "x":
        now = int(time.time())
        reset = {"x-rate-limit-reset": str(now + seconds), "x-rate-limit-remaining": "0"}
        if seconds > 15 * 60:
            # Past a 15-minute window: the 24-hour post limit is spent, and only its reset says when.
            reset = {"x-rate-limit-reset": str(now + 15 * 60), "x-rate-limit-remaining": "1",
                     "x-user-limit-24hour-limit": "100", "x-user-limit-24hour-remaining": "0",
                     "x-user-limit-24hour-reset": str(now + seconds)}
        return x_error(429, "Too Many Requests", "Too Many Requests", headers=reset)
    return linkedin_error(429, "Resource level throttle limit exceeded", "TOO_MANY_REQUESTS", headers=header)


def fault_response(platform: str, fault: Fault) -> JSONResponse:
    if fault.status == 429:
        return rate_error(platform, fault.retry_after)
    if fault.status >= 500:
        if platform in GRAPH:
            return graph_error(500, 1, "An unknown error has occurred.", whatsapp=platform == "whatsapp")
        if platform == "telegram":
            return telegram_error(500, "Internal Server Error")
        if platform == "tiktok":
            return tiktok_error(500, "internal_error", "Something went wrong. Please try again later.")
        if platform == "youtube":
            return google_error(500, "backendError", "Backend Error")
        if platform == "x":
            return x_error(500, "Internal Server Error", "Something went wrong.")
        return linkedin_error(500, "Internal Server Error")
    if platform in GRAPH:
        return graph_error(400, 100, "(#100) Invalid parameter", 2018001, whatsapp=platform == "whatsapp")
    if platform == "telegram":
        return telegram_error(400, "Bad Request: chat not found")
    if platform == "tiktok":
        return tiktok_error(400, "invalid_params", "The request parameters are invalid.")
    if platform == "youtube":
        return google_error(400, "invalidValue", "Invalid value.")
    if platform == "x":
        return x_error(
            400,
            "Invalid Request",
            "One or more parameters to your request was invalid.",
            kind="https://api.twitter.com/2/problems/invalid-request",
        )
    return linkedin_error(400, "Invalid request", "BAD_REQUEST")


def control_error(
    status: int, code: str, message: str, details: list[dict[str, str]] | None = None
) -> JSONResponse:
    error: dict[str, Any] = {"code": code, "message": message}
    if details:
        error["details"] = details
    return JSONResponse({"error": error}, status_code=status)


class ControlInvalid(Exception):
    def __init__(self, details: list[dict[str, str]]) -> None:
        super().__init__("validation failed")
        self.details = details


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
            if token is None and value and value not in self.state.tokens:
                token = self.adopt(platform, request, value)
            if token is None:
                return auth_error(platform)
            account = self.state.account(platform, token.account_id)
            if account is None:
                return auth_error(platform)
            if platform in GRAPH and value and not self.proof_ok(platform, request, value):
                return graph_error(400, 100, "Invalid appsecret_proof provided in the API argument",
                                   error_type="GraphMethodException")
        fault = self.state.take_fault(platform, account.id if account else None, request.url.path)
        if fault is not None:
            return fault_response(platform, fault)
        call = Call(request, platform, token, account, raw)
        try:
            return await handler(call)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return self.malformed(platform)

    def proof_ok(self, platform: str, request: Request, token: str) -> bool:
        """An `appsecret_proof`, when sent, must be the token's HMAC with the app's secret."""
        proof = request.query_params.get("appsecret_proof")
        if proof is None:
            return True
        secret = (self.config.instagram_app_secret if platform == "instagram" else "") or self.config.meta_app_secret
        expected = hmac.new(secret.encode(), token.encode(), hashlib.sha256).hexdigest()
        return bool(secret) and hmac.compare_digest(proof, expected)

    def adopt(self, platform: str, request: Request, value: str) -> Token | None:
        """A well-formed credential the sandbox has not seen makes its account, like a test card in
        a payment sandbox: a `<digits>:AA...` bot token that bot, a WhatsApp token used on a numeric
        phone number id that number. Anything else stays unknown (401, as the platform answers)."""
        if platform == "telegram":
            match = TELEGRAM_TOKEN.match(value)
            if match is None or self.state.account("telegram", match[1]) is not None:
                return None
            bot_id = match[1]
            account = Account("telegram", bot_id, f"sandbox_{bot_id}_bot", f"Sandbox Bot {bot_id}")
            account.extra["bot_token"] = value
        elif platform == "whatsapp":
            node = str(request.path_params.get("node", ""))
            if not node.isdigit() or self.state.account("whatsapp", node) is not None:
                return None
            account = Account("whatsapp", node, f"+1 555-{node[-4:]:0>4}", f"Sandbox Co {node[-4:]}")
            account.extra["waba_id"] = None  # set by the first WABA it is asked under
        else:
            return None
        self.state.add_account(account)
        return self.state.issue(platform, account.id, "access", None, value=value)

    def malformed(self, platform: str) -> Response:
        if platform in GRAPH:
            return graph_error(400, 100, "(#100) The parameter could not be parsed", 2018001)
        if platform == "telegram":
            return telegram_error(400, "Bad Request: can't parse JSON object")
        if platform == "tiktok":
            return tiktok_error(400, "invalid_params", "The request body could not be parsed.")
        if platform == "youtube":
            return google_error(400, "parseError", "Parse Error")
        if platform == "x":
            return x_error(400, "Invalid Request", "The request body could not be parsed.")
        return linkedin_error(400, "Request body could not be parsed", "BAD_REQUEST")

    def record(
        self, call: Call, kind: str, to: str | None, text: str | None, platform_id: str, payload: Any = None
    ) -> None:
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
                "at": iso_ms(time.time()),
            },
        )

    # -- OAuth -------------------------------------------------------------------------------
    def client_ok(self, platform: str, client_id: str | None, client_secret: str | None = None) -> bool:
        client = self.config.oauth_clients.get(platform)
        if client is None or not client_id or not secrets.compare_digest(client_id, client.client_id):
            return False
        return client_secret is None or secrets.compare_digest(client_secret, client.client_secret)

    def authorize(
        self,
        platform: str,
        request: Request,
        *,
        client_param: str = "client_id",
        new_account: Callable[[str | None], Account],
        challenge: bool = False,
    ) -> Response:
        """Auto-approving consent page: the account named by `login_hint` (made on first use) or a
        new one; redirects back with `code` and `state`."""
        query = request.query_params
        redirect_uri = query.get("redirect_uri")
        if not self.client_ok(platform, query.get(client_param)) or not redirect_uri:
            return PlainTextResponse("Invalid client_id or redirect_uri.", status_code=400)
        if urlsplit(redirect_uri).scheme not in ("http", "https"):
            return PlainTextResponse("Invalid redirect_uri.", status_code=400)
        if challenge and query.get("code_challenge_method", "plain") not in ("S256", "plain"):
            return PlainTextResponse("Invalid code_challenge_method.", status_code=400)
        if challenge and not query.get("code_challenge"):
            return PlainTextResponse("Missing code_challenge.", status_code=400)
        hint = query.get("login_hint")
        account = None
        if hint:
            account = self.state.find_account(platform, lambda a: a.extra.get("login_hint") == hint)
        if account is None:
            account = new_account(hint)
            if hint:
                account.extra["login_hint"] = hint
        code = random_token(32)
        self.codes[code] = AuthCode(
            platform,
            account.id,
            redirect_uri,
            time.time() + 600,
            query.get("code_challenge"),
            query.get("code_challenge_method", "plain"),
            scope=query.get("scope", ""),
        )
        self.state.touch_code(code)
        separator = "&" if urlsplit(redirect_uri).query else "?"
        params = {"code": code}
        if query.get("state") is not None:
            params["state"] = query["state"]
        return RedirectResponse(f"{redirect_uri}{separator}{urlencode(params)}", status_code=302)

    def redeem(
        self, platform: str, code: str | None, redirect_uri: str | None, verifier: str | None = None
    ) -> AuthCode | None:
        """Single use, within 10 minutes, same redirect URI, PKCE checked when a challenge was sent."""
        import base64
        import hashlib

        entry = self.codes.get(code or "")
        if entry is None or entry.platform != platform or entry.used or entry.expires_at < time.time():
            return None
        if redirect_uri != entry.redirect_uri:
            return None
        if entry.challenge:
            if not verifier:
                return None
            if entry.challenge_method == "S256":
                digest = (
                    base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
                )
            else:
                digest = verifier
            if not secrets.compare_digest(digest, entry.challenge):
                return None
        entry.used = True
        self.state.touch_code(code or "")
        return entry

    # -- control helpers ---------------------------------------------------------------------
    async def resolve(self, platform: str, account_id: Any) -> Account | None:
        if not isinstance(account_id, str) or not account_id:
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
