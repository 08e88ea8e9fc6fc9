"""The one reading of a URL that a caller sends: every front door checks URLs here.

`urlsplit` accepts what a connection cannot use, and each of those used to surface later as an
exception (a 500): a port past 65535 (`https://host:65536/`, `https://[::1]:99999/`), an unclosed
IPv6 bracket, or a host name that IDNA refuses (`https://①②⑦.0.0.1/`, which Python's own `idna`
codec would even turn into `127.0.0.1`). `parse` refuses them all with one message, and gives the
host exactly as the HTTP client will send it (IDNA 2008, as httpx2 encodes it), so the address
guard checks the host that is then connected to.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

import idna

MAX_LENGTH = 2048


class BadUrl(ValueError):
    """The text is not a URL this service can use; `message` says why, for a person."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Url:
    scheme: str
    host: str  # ASCII: an IP address without brackets, or an IDNA-encoded name
    port: int
    text: str  # the URL as sent


DEFAULT_PORTS = {"https": 443, "http": 80}


def _ascii_host(host: str) -> str:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    if host.isascii():
        name = host.lower()
    else:
        try:
            name = idna.encode(host.lower()).decode("ascii")
        except (idna.IDNAError, UnicodeError):
            raise BadUrl("the host name is not a valid internationalised domain name") from None
    labels = name.rstrip(".").split(".")
    if len(name) > 253 or any(not label or len(label) > 63 for label in labels):
        raise BadUrl("the host name is not a valid domain name")
    return name


def parse(value: str, *, schemes: tuple[str, ...] = ("https",)) -> Url:
    """Read `value` as an absolute URL of one of `schemes`, or raise `BadUrl`."""
    if not isinstance(value, str) or not value:
        raise BadUrl("must be an absolute URL")
    if len(value) > MAX_LENGTH:
        raise BadUrl(f"must be at most {MAX_LENGTH} characters")
    # A control character (a tab, a newline) is no part of a URL: urlsplit strips some of them, so
    # the URL stored would not be the URL used.
    if " " in value or not value.isprintable():
        raise BadUrl("must not contain spaces or control characters")
    try:
        parts = urlsplit(value)
        port = parts.port  # raises for a port out of 0..65535 or not a number
        host = parts.hostname
    except ValueError:
        raise BadUrl("must be an absolute URL with a valid host and a port from 1 to 65535") from None
    if parts.scheme not in schemes:
        raise BadUrl("must be an absolute " + " or ".join(schemes) + " URL")
    if not host:
        raise BadUrl("must name a host")
    if port == 0:
        raise BadUrl("the port must be from 1 to 65535")
    return Url(scheme=parts.scheme, host=_ascii_host(host), port=port or DEFAULT_PORTS.get(parts.scheme, 443),
               text=value)


def is_valid(value: str, *, schemes: tuple[str, ...] = ("https",)) -> bool:
    try:
        parse(value, schemes=schemes)
    except BadUrl:
        return False
    return True
