"""Outbound HTTP to addresses that customers choose (webhook endpoints, later OAuth client metadata).

A URL typed by a customer must not become a way into the operator's network (SSRF). The guard:

- the host name is resolved once per new connection, every address it gives must be global
  (`is_global`, which also rules out 100.64.0.0/10; multicast, NAT64 and IPv4 addresses embedded in
  IPv6 are judged like the IPv4 address they carry), unless the operator allows private addresses
  (`SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE=1`);
- the socket is opened to an address that was just checked, inside the connection pool's network
  backend, so a DNS answer that changes between the check and the connection (rebinding) cannot
  slip a private address in. The URL keeps its host name, so TLS verifies the certificate for that
  name, SNI and `Host` carry it, and keep-alive connections are pooled per name;
- redirects are never followed and environment proxies are ignored (a proxy would connect for us,
  to an address we did not check).

`check_url` runs the same check when a URL is saved, so a refused address is a 422 at once rather
than a delivery that fails later.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import ssl
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as ResolveTimeout
from typing import Any

import httpcore2
import httpx2

from kit import urls

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# How long a kept-alive connection may sit idle and still carry the next request (here and in the
# platforms' client). A server closes an idle connection after a time of its own (2 s by default in
# gunicorn, 5 s in uvicorn, Node and Apache), and a request sent on it just as it closes is met by
# the close, unanswered and never read: a platform call with no answer leaves a message or a post
# `unknown` (never sent again), a webhook delivery waits for its retry. Idle longer than this, a
# connection is given up before any of those servers gives it up, so a request never meets the close.
IDLE_CONNECTION_SECONDS = 1.0

_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
# IPv4 addresses written inside IPv6 that `is_global` judges as IPv6: IPv4-compatible (`::a.b.c.d`,
# deprecated but still routed to the IPv4 address by some stacks) and IPv4-translated
# (`::ffff:0:a.b.c.d`, RFC 2765). IPv4-mapped (`::ffff:a.b.c.d`) is `ipv4_mapped`.
_EMBEDDING_IPV4 = (ipaddress.ip_network("::/96"), ipaddress.ip_network("::ffff:0:0:0/96"))


class AddressRefused(Exception):
    """The host resolves to an address that outbound requests may not reach (or does not resolve)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def is_public_address(ip: IPAddress) -> bool:
    """True for an address on the public internet: not loopback, private, link-local, multicast, reserved."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return is_public_address(ip.ipv4_mapped)
        if any(ip in network for network in (*_NAT64, *_EMBEDDING_IPV4)):
            # NAT64 and the embedding forms reach the IPv4 address in the last 32 bits: judge that one.
            return is_public_address(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        if ip.sixtofour is not None:
            return is_public_address(ip.sixtofour)
        if ip.teredo is not None:
            return False
    # `is_global` alone lets multicast through (224.0.0.0/4 is neither private nor shared).
    return ip.is_global and not ip.is_multicast


def _getaddrinfo(host: str, port: int) -> list[Any]:
    # A seam for tests that need a name to resolve to a chosen address.
    return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)


# The system's resolver has no deadline of its own: a name server that does not answer held a request
# (a media import, a webhook endpoint's save) for its retries, 10 s and more, before any timeout of
# ours applied. A lookup runs on one of these threads and is waited for this long; one that never
# ends holds only its thread.
RESOLVE_TIMEOUT_SECONDS = 5.0
_resolver = ThreadPoolExecutor(max_workers=8, thread_name_prefix="resolve")


def resolve(host: str, port: int, *, allow_private: bool) -> list[str]:
    """Resolve `host` once and return its addresses; refuse them all if any one is not public.

    Refusing when any address is private (rather than picking the public ones) keeps a name that
    mixes both from reaching the private one through another resolver's ordering.
    """
    host = host.strip("[]")
    try:
        literal: IPAddress | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        addresses = [literal]
    else:
        try:
            infos = _resolver.submit(_getaddrinfo, host, port).result(timeout=RESOLVE_TIMEOUT_SECONDS)
        except ResolveTimeout:
            raise AddressRefused(
                f"The host name {host!r} did not resolve within {RESOLVE_TIMEOUT_SECONDS:g} s.") from None
        except (socket.gaierror, UnicodeError, OSError):
            raise AddressRefused(f"The host name {host!r} does not resolve.") from None
        addresses = []
        for info in infos:
            address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
            if address not in addresses:
                addresses.append(address)
        if not addresses:
            raise AddressRefused(f"The host name {host!r} does not resolve.")
    if not allow_private:
        for address in addresses:
            if not is_public_address(address):
                raise AddressRefused(
                    "The URL points to a loopback, private, link-local, multicast or reserved address."
                )
    return [str(address) for address in addresses]


def check_url(url: str, *, allow_private: bool) -> None:
    """Raise `AddressRefused` when `url`'s host may not be reached (it was already checked to be https)."""
    try:
        parsed = urls.parse(url)
    except urls.BadUrl as bad:
        raise AddressRefused(bad.message) from None
    resolve(parsed.host, parsed.port, allow_private=allow_private)


class GuardedBackend(httpcore2.SyncBackend):
    """The pool's network backend: each new connection resolves once, checks, and connects to a checked address."""

    def __init__(self, *, allow_private: bool) -> None:
        self.allow_private = allow_private

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        addresses = resolve(host, port, allow_private=self.allow_private)
        last_error: Exception | None = None
        for address in addresses:
            try:
                return super().connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as error:
                last_error = error
        assert last_error is not None
        raise last_error


class GuardedTransport(httpx2.HTTPTransport):
    """httpx2's transport with the guarded network backend underneath its connection pool."""

    def __init__(self, *, ssl_context: ssl.SSLContext, allow_private: bool, limits: httpx2.Limits) -> None:
        super().__init__(verify=ssl_context, trust_env=False, limits=limits)
        # HTTPTransport has no network_backend argument; its pool is rebuilt with the same limits.
        self._pool = httpcore2.ConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=GuardedBackend(allow_private=allow_private),
        )


def ssl_context(extra_ca_bundle: str | None = None, *more_ca_bundles: str) -> ssl.SSLContext:
    """The system's trust store, plus an operator's extra CA (a private CA, or the tests' own), plus
    any further bundles (the data dir's local CA, see `local_ca`)."""
    context = ssl.create_default_context()
    for bundle in (extra_ca_bundle, *more_ca_bundles):
        if bundle:
            context.load_verify_locations(cafile=bundle)
    return context


def guarded_transport(
    *,
    allow_private: bool,
    extra_ca_bundle: str | None = None,
    local_ca_bundle: str | None = None,
    max_connections: int = 100,
) -> GuardedTransport:
    """The transport under `guarded_client`, for a caller that builds its requests itself: it
    follows no redirect, reads no proxy from the environment and keeps connections alive."""
    limits = httpx2.Limits(max_connections=max_connections, max_keepalive_connections=max_connections,
                           keepalive_expiry=IDLE_CONNECTION_SECONDS)
    return GuardedTransport(ssl_context=ssl_context(extra_ca_bundle, *filter(None, [local_ca_bundle])),
                            allow_private=allow_private, limits=limits)


def guarded_client(
    *,
    timeout: float,
    allow_private: bool,
    extra_ca_bundle: str | None = None,
    local_ca_bundle: str | None = None,
    user_agent: str,
    max_connections: int = 100,
) -> httpx2.Client:
    """An httpx2 client for customer-chosen URLs: SSRF guard, no redirects, no proxies from the environment."""
    return httpx2.Client(
        transport=guarded_transport(allow_private=allow_private, extra_ca_bundle=extra_ca_bundle,
                                    local_ca_bundle=local_ca_bundle, max_connections=max_connections),
        timeout=httpx2.Timeout(timeout),
        follow_redirects=False,
        trust_env=False,
        headers={"user-agent": user_agent},
    )


# -- an overall deadline ---------------------------------------------------------------------------
# httpx's timeouts bound each read, not a request: a peer that sends one byte every 8 s kept a media
# import open for two minutes under a 30 s "timeout". `stream_within` bounds the whole exchange
# (connect, TLS, headers, body): when the deadline passes, a timer shuts the connection's socket
# down, which ends the read that waits on it at once, whatever it was waiting for.


class DeadlinePassed(Exception):
    """The exchange with the other host took longer than its overall deadline."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no complete answer within {seconds:g} s")
        self.seconds = seconds


class _Watchdog:
    def __init__(self, seconds: float) -> None:
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def start(self) -> None:
        self._timer.start()

    def cancel(self) -> None:
        self._timer.cancel()

    def watch(self, stream: object) -> None:
        sock = getattr(stream, "get_extra_info", lambda _name: None)("socket")
        if not isinstance(sock, socket.socket):
            return
        with self._lock:
            self._sockets.append(sock)
            fired = self.fired
        if fired:
            _shut(sock)

    def trace(self, name: str, info: dict[str, object]) -> None:
        # httpcore's trace events: each new connection's stream, plain and then TLS.
        if name in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            self.watch(info.get("return_value"))

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    # Through a duplicate of the descriptor: shutting down the TLS wrapper itself would drop its
    # state under the thread that is reading from it.
    with contextlib.suppress(OSError, ValueError):
        fd = sock.fileno()
        if fd >= 0:
            duplicate = socket.socket(fileno=socket.dup(fd))
            try:
                duplicate.shutdown(socket.SHUT_RDWR)
            finally:
                duplicate.close()


@contextlib.contextmanager
def stream_within(client: httpx2.Client, method: str, url: str, *, seconds: float,
                  headers: dict[str, str] | None = None) -> Iterator[httpx2.Response]:
    """`client.stream(method, url)`, all of it (the body the caller reads included) within `seconds`;
    past them `DeadlinePassed`, whatever the read that was cut off raised."""
    watchdog = _Watchdog(seconds)
    watchdog.start()
    try:
        with client.stream(method, url, headers=headers, extensions={"trace": watchdog.trace}) as response:
            watchdog.watch(response.extensions.get("network_stream"))
            yield response
    except Exception:
        if watchdog.fired:
            raise DeadlinePassed(seconds) from None
        raise
    finally:
        watchdog.cancel()
