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
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import httpx2

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


def build_client(
    *,
    timeout: float = 15.0,
    connect_timeout: float = 5.0,
    max_connections: int = 200,
    max_keepalive_connections: int = 100,
) -> httpx2.Client:
    """The one `httpx2.Client` every adapter shares (thread-safe; pooled for concurrent sends)."""
    install_log_redaction()
    return httpx2.Client(
        timeout=httpx2.Timeout(timeout, connect=connect_timeout),
        limits=httpx2.Limits(
            max_connections=max_connections,
            max_keepalive_connections=max_keepalive_connections,
            keepalive_expiry=30.0,
        ),
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


class PlatformHTTP:
    """Adapters' door to the network: one request, failures mapped and redacted."""

    def __init__(self, client: httpx2.Client, *, platform: str) -> None:
        self.client = client
        self.platform = platform

    def request(
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
