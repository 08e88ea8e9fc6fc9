"""The one shared HTTP client, redaction, and the mapping of transport failures to the error tree.

Tokens travel in URL paths (Telegram `/bot<token>/...`), query strings (Graph `access_token=`) and
headers. None of them may reach a log line, an exception message or an error returned to a caller:

- `build_client()` installs `RedactingFilter` on the loggers of httpx2 and httpcore2 (httpx2 logs
  every request URL at INFO), so their records are rewritten before any handler sees them;
- `PlatformHTTP.request()` raises only `PlatformFailure`s whose messages went through `redact()`
  with the call's own secrets, and never chains the transport exception (its repr can carry the URL).
"""

from __future__ import annotations

import email.utils
import ipaddress
import json
import logging
import re
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import httpcore2
import httpx2
from httpx2._transports.default import map_httpcore_exceptions

from kit import metrics
from kit.net import IDLE_CONNECTION_SECONDS
from platforms.base import Indeterminate, PlatformFailure, Rejected, RetryLater

REDACTED = "[REDACTED]"

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Telegram: https://api.telegram.org/bot123456:AA.../sendMessage
    (re.compile(r"(/bot\d+:)[A-Za-z0-9_-]+"), r"\1" + REDACTED),
    # bare Telegram token anywhere
    (re.compile(r"\b(\d{5,}:)[A-Za-z0-9_-]{30,}\b"), r"\1" + REDACTED),
    # a media upload token (the upload URL's path; access logs show it)
    (re.compile(r"\bupl_[0-9a-f]{64}\b"), "upl_" + REDACTED),
    # query strings and form bodies
    (
        re.compile(
            r"(?<![A-Za-z0-9_])((?:access_token|refresh_token|client_secret|fb_exchange_token|input_token|"
            r"appsecret_proof|code_verifier|code|token|secret_token|id_token|upload_id)=)[^&\s\"'<>]+"
        ),
        r"\1" + REDACTED,
    ),
    # authorization headers
    (re.compile(r"((?:Bearer|Basic|OAuth)\s+)[A-Za-z0-9._~+/=-]+"), r"\1" + REDACTED),
    # JSON-ish "access_token": "..."
    (
        re.compile(
            r"(\"(?:access_token|refresh_token|accessToken|refreshToken|botToken|client_secret)\"\s*:\s*\")[^\"]+"
        ),
        r"\1" + REDACTED,
    ),
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every secret value and every token-shaped part replaced by `[REDACTED]`."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class RedactingFilter(logging.Filter):
    """Rewrites a record's message through `redact()`; attach it to a logger (not a handler)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: leave it to the logging module's own handling
            return True
        cleaned = redact(message)
        if cleaned != message:
            record.msg = cleaned
            record.args = None
        return True


_HTTP_LOGGERS = (
    "httpx2",
    "httpcore2",
    "httpcore2.connection",
    "httpcore2.http11",
    "httpcore2.http2",
    "httpcore2.proxy",
    "httpcore2.socks",
    "httpx",
    "httpcore",
    "httpcore.connection",
    "httpcore.http11",
)
_FILTER = RedactingFilter()


def install_log_redaction(*extra_loggers: str) -> None:
    """Install the redacting filter on the HTTP libraries' loggers and any `extra_loggers`
    (the composition root passes `uvicorn.access`: the sandbox serves Telegram's token paths)."""
    for name in (*_HTTP_LOGGERS, *extra_loggers):
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


class ThreadPoolsTransport(httpx2.HTTPTransport):
    """`httpx2.HTTPTransport` with a connection pool for each thread that sends through it.

    Why: the threads of a worker sharing one pool take its lock twice a request (to be handed a
    connection, and to give it back), and each time walk every connection under it. At 16 sending
    threads that was about a tenth of a sender's profile, and a thread that waited for the lock
    waited behind whichever thread held the GIL. A thread sends one request at a time, so its own
    pool never waits, and keeps one connection a host. Each thread's pool has the settings the
    transport was built with (TLS, limits, keep-alive); a thread's pool closes when the thread
    ends, and `close()` closes every thread's. Proxies are the client's mounts, as without it.
    """

    def __init__(self, **settings: Any) -> None:
        if settings.get("proxy") is not None:  # each thread's pool would be a plain one
            raise ValueError("give the client its proxy (a mount), not this transport")
        self._local = threading.local()
        self._pools: weakref.WeakSet[httpcore2.ConnectionPool] = weakref.WeakSet()
        self._pools_lock = threading.Lock()
        super().__init__(**settings)  # builds the pool whose settings each thread's copies

    @property
    def _pool(self) -> httpcore2.ConnectionPool:
        held = getattr(self._local, "held", None)
        return held.pool if held is not None else self._new_pool()

    @_pool.setter
    def _pool(self, model: httpcore2.ConnectionPool) -> None:
        self._model = model

    def _new_pool(self) -> httpcore2.ConnectionPool:
        model = self._model
        pool = httpcore2.ConnectionPool(
            ssl_context=model._ssl_context, max_connections=model._max_connections,
            max_keepalive_connections=model._max_keepalive_connections,
            keepalive_expiry=model._keepalive_expiry, http1=model._http1, http2=model._http2,
            retries=model._retries, local_address=model._local_address, uds=model._uds,
            socket_options=model._socket_options,
        )
        held = self._local.held = _Held(pool)
        weakref.finalize(held, pool.close)  # the thread's locals go with the thread
        with self._pools_lock:
            self._pools.add(pool)
        return pool

    def close(self) -> None:
        with self._pools_lock:
            pools = list(self._pools)
        for pool in pools:
            pool.close()
        self._model.close()


class _Held:
    """A thread's pool, in an object the thread's locals alone refer to (see `weakref.finalize`)."""

    __slots__ = ("__weakref__", "pool")

    def __init__(self, pool: httpcore2.ConnectionPool) -> None:
        self.pool = pool


def build_client(
    *,
    timeout: float = 15.0,
    connect_timeout: float = 5.0,
    max_connections: int = 200,
    max_keepalive_connections: int = 100,
) -> httpx2.Client:
    """The one `httpx2.Client` every adapter shares (thread-safe; the limits are each thread's pool's,
    see `ThreadPoolsTransport`)."""
    install_log_redaction()
    return httpx2.Client(
        timeout=httpx2.Timeout(timeout, connect=connect_timeout),
        transport=ThreadPoolsTransport(limits=httpx2.Limits(
            max_connections=max_connections,
            max_keepalive_connections=max_keepalive_connections,
            keepalive_expiry=IDLE_CONNECTION_SECONDS,  # given up before the platform's server closes it
        )),
        follow_redirects=False,
        headers={"User-Agent": "Switchboard/1.0"},
    )


def retry_after_seconds(headers: Mapping[str, str], default: float) -> float:
    """Seconds from a `Retry-After` header (delta or HTTP date), else `default`."""
    value = headers.get("retry-after")
    if not value:
        return default
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return default
    return max(0.0, when.timestamp() - time.time())


def json_body(response: httpx2.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


Classifier = Callable[[httpx2.Response, list[str]], PlatformFailure]


def generic_failure(response: httpx2.Response, secrets: list[str]) -> PlatformFailure:
    """Fallback classification by HTTP status alone."""
    from platforms.base import ReauthRequired

    status = response.status_code
    if status == 429:
        return RetryLater("rate limited by the platform", retry_after_seconds(response.headers, 30.0))
    if status >= 500:
        return RetryLater(f"the platform failed (HTTP {status})", retry_after_seconds(response.headers, 30.0))
    if status == 401:
        return ReauthRequired("the platform refused the stored credentials")
    text = redact(response.text[:300], secrets)
    return Rejected(f"the platform refused the request (HTTP {status}): {text}", str(status))


# Callables shown each request an adapter is about to send, with its platform: the test suite
# installs one that checks the request against the platform's published description. Empty in a
# running service.
RequestObserver = Callable[[str, httpx2.Request], None]
request_observers: list[RequestObserver] = []


# An absolute http(s) URL that `httpx2.URL` keeps exactly as written: a lower-case ASCII host, a
# path and query of characters it leaves unquoted (%xx escapes kept: `_ESCAPES`), no fragment, no
# user info. Such a URL's parts go straight to the connection pool (`PlatformHTTP._direct`).
_PLAIN_URL = re.compile(r"(https?)://([a-z0-9.-]+)(?::([0-9]{1,5}))?([/?][A-Za-z0-9._~!$&'()*+,;=:@/?%-]*)?")
_ESCAPES = re.compile(r"(?:[^%]|%[0-9A-Fa-f]{2})*")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_IPV4_STYLE = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+")
_BODY_METHODS = ("POST", "PUT", "PATCH", "QUERY")
# Headers the request's body and host set: a caller's own would change their order or value.
_SET_BY_REQUEST = frozenset({"host", "content-length", "content-type", "transfer-encoding"})
_DIRECT_ARGUMENTS = frozenset({"json", "content", "headers", "params"})
_CLIENT_LOG = logging.getLogger("httpx2")
# Transports whose `handle_request` is their pool's, with the exceptions mapped: `_direct` does the same.
_PLAIN_TRANSPORTS = (httpx2.HTTPTransport, ThreadPoolsTransport)
# As `httpx2` encodes a `json=` body (`_content.encode_json`), the encoder built once rather than
# by `json.dumps` on every call.
_JSON_BODY = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def _direct_url(url: str) -> tuple[bytes, bytes, int | None, bytes, bytes] | None:
    """The scheme, host, port, target and `Host` header `httpx2.URL(url)` would give (`raw_scheme`,
    `raw_host`, `port`, `raw_path`, `netloc`), for a URL it keeps as written; else None."""
    parts = _PLAIN_URL.fullmatch(url)
    if parts is None:
        return None
    scheme, host, port_text, target = parts.groups()
    target = target or "/"
    if "/." in target or ("%" in target and not _ESCAPES.fullmatch(target)):
        return None  # dot segments (httpx2 drops them), a bare % (httpx2 escapes it)
    if target[0] == "?":  # as `httpx2.URL.raw_path`: an empty path is "/"
        target = "/" + target
    if _IPV4_STYLE.fullmatch(host):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:  # httpx2 refuses it
            return None
    port: int | None = int(port_text) if port_text else None
    if port == _DEFAULT_PORTS[scheme]:
        port = None
    netloc = host if port is None else f"{host}:{port}"
    return scheme.encode(), host.encode(), port, target.encode(), netloc.encode()


_SNAKE = re.compile(r"(?<=[a-z])(?=[A-Z])")


class PlatformHTTP:
    """Adapters' door to the network: one request, failures mapped and redacted."""

    def __init__(self, client: httpx2.Client, *, platform: str) -> None:
        self.client = client
        self.platform = platform
        self._ready: tuple[Any, Any, list[tuple[bytes, bytes]], frozenset[str], dict[str, Any]] | None = None

    def request(
        self, method: str, url: str, *, classify: Classifier, secrets: Iterable[str] = (), **kwargs: Any
    ) -> httpx2.Response:
        """One call, counted in the platform-call metrics (`kit.metrics`) when those are on."""
        if not metrics.enabled():
            return self._request(method, url, classify=classify, secrets=secrets, **kwargs)
        started = time.perf_counter()
        outcome = "error"
        try:
            response = self._request(method, url, classify=classify, secrets=secrets, **kwargs)
            outcome = "ok"
            return response
        except PlatformFailure as failure:  # rejected, retry_later, reauth_required, indeterminate, ...
            outcome = _SNAKE.sub("_", type(failure).__name__).lower()
            raise
        finally:
            metrics.platform_call(self.platform, method, url, outcome, time.perf_counter() - started)

    def _request(
        self,
        method: str,
        url: str,
        *,
        classify: Classifier,
        secrets: Iterable[str] = (),
        **kwargs: Any,
    ) -> httpx2.Response:
        secret_list = [s for s in secrets if s]
        auth = kwargs.pop("auth", None)
        try:
            response = None if auth is not None else self._direct(method, url, kwargs)
            if response is None:
                request = self.client.build_request(method, url, **kwargs)
                for observe in request_observers:
                    observe(self.platform, request)
                response = self.client.send(request, auth=auth) if auth is not None else self.client.send(request)
        except (httpx2.ConnectTimeout, httpx2.PoolTimeout) as exc:  # nothing was sent: safe to try again
            raise RetryLater(f"{self.platform} could not be reached in time ({type(exc).__name__})", 15.0) from None
        except (httpx2.TimeoutException, httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError) as exc:
            raise Indeterminate(
                f"{self.platform} did not answer in time ({type(exc).__name__}); the request may have taken effect"
            ) from None
        except httpx2.TransportError as exc:
            detail = redact(str(exc), secret_list)[:200]
            raise RetryLater(
                f"{self.platform} could not be reached ({type(exc).__name__}: {detail})", 15.0
            ) from None
        if response.is_success:
            return response
        try:
            failure = classify(response, secret_list)
        except Exception:
            failure = generic_failure(response, secret_list)
        failure.message = redact(failure.message, secret_list)
        failure.args = (failure.message,)
        if isinstance(failure, Rejected):
            failure.reason = failure.message
        raise failure

    def _direct(self, method: str, url: str, kwargs: dict[str, Any]) -> httpx2.Response | None:
        """The request through the client's own connection pool, without `httpx2.Request`: the same
        bytes on the wire as `client.build_request` + `client.send`, the same timeouts and the same
        exception types (`map_httpcore_exceptions`, as the client's transport maps them). None when
        the request or the client needs a layer this skips (a URL `httpx2.URL` would rewrite, query
        params added to a URL's own query, form data, a caller's header the body sets, auth,
        cookies, hooks, proxies, redirects): then the client sends it.

        Why: parsing the URL (`httpx2.URL`, ~150,000 instructions for a Telegram path) and building
        `httpx2.Request` and `httpx2.Response` cost a message more CPU than the rest of the adapter.
        """
        client = self.client
        method = method.upper()
        if kwargs.keys() - _DIRECT_ARGUMENTS:
            return None
        ready = self._ready
        if ready is None or ready[0] is not client._headers or ready[1] is not client._timeout:
            # The client's default headers and timeout, as sent: read again when the client's are replaced.
            defaults = client.headers.raw
            ready = self._ready = (client._headers, client._timeout, defaults,
                                   frozenset(key.decode().lower() for key, _ in defaults) | _SET_BY_REQUEST,
                                   client.timeout.as_dict())
        transport = client._transport
        if (
            not isinstance(transport, httpx2.HTTPTransport)  # (for the type checker)
            or type(transport) not in _PLAIN_TRANSPORTS
            or client._mounts
            or client._auth is not None
            or client.follow_redirects
            or client._event_hooks["request"]
            or client._event_hooks["response"]
            or client._cookies.jar._cookies  # type: ignore[attr-defined]  # what `len(jar)` walks
            or client._params
            or client._base_url.raw_host
            or client.is_closed
        ):
            return None
        params = kwargs.get("params")
        if params is not None:
            if not isinstance(params, dict) or "?" in url:
                return None  # merged into the URL's own query by the client
            if params:
                url = f"{url}?{httpx2.QueryParams(params)}"  # as `URL.copy_merge_params` writes them
        parts = _direct_url(url)
        if parts is None:
            return None
        scheme, host, port, target, netloc = parts
        headers = ready[2]
        given = kwargs.get("headers")
        if given:
            if not isinstance(given, dict):
                return None
            try:
                extra = [(key.encode("ascii"), value.encode("ascii")) for key, value in given.items()]
            except (AttributeError, UnicodeEncodeError):
                return None
            if any(key.decode().lower() in ready[3] for key, _ in extra):
                return None
            headers = headers + extra
        body = kwargs.get("content") or None
        if kwargs.get("json") is not None:
            if body is not None:
                return None
            body = _JSON_BODY(kwargs["json"]).encode()
            after = [(b"Content-Length", str(len(body)).encode()), (b"Content-Type", b"application/json")]
        elif body is None or isinstance(body, bytes):
            after = [] if body is None else [(b"Content-Length", str(len(body)).encode())]
        else:
            return None
        # As `httpx2.Request` orders them: Host first (and a bodiless POST's length), then the
        # client's and the caller's headers, then the body's.
        before = [(b"Host", netloc), (b"Content-Length", b"0")] if body is None and method in _BODY_METHODS else [
            (b"Host", netloc)]
        wire = [*before, *headers, *after]
        if request_observers:
            observed = httpx2.Request(method, url, headers=wire, content=body)
            for observe in request_observers:
                observe(self.platform, observed)
        request = httpcore2.Request(
            method.encode(),
            httpcore2.URL(scheme=scheme, host=host, port=port, target=target),
            headers=wire,
            content=body or b"",
            extensions={"timeout": dict(ready[4])},
        )
        with map_httpcore_exceptions():
            answer = transport._pool.handle_request(request)
            try:
                raw = b"".join(answer.stream)  # type: ignore[arg-type]
            finally:
                answer.close()
        response = httpx2.Response(answer.status, headers=answer.headers, stream=httpx2.ByteStream(raw),
                                   extensions=answer.extensions, default_encoding=client._default_encoding)
        if "content-encoding" in response.headers:
            response.read()  # decoded as the client does
        else:  # what `read()` leaves, without its decoder chain (80,000 instructions)
            response._content = raw
            response.is_stream_consumed = response.is_closed = True
        if not response.is_success or "set-cookie" in response.headers:
            # A failure's classifier may look at its request; the client keeps a platform's
            # cookies (and the next request goes through it, to send them).
            response.request = httpx2.Request(method, url, headers=wire, content=body)
            client.cookies.extract_cookies(response)
        if _CLIENT_LOG.isEnabledFor(logging.INFO):
            _CLIENT_LOG.info('HTTP Request: %s %s "%s %d %s"', method, url, response.http_version,
                             response.status_code, response.reason_phrase)
        return response
