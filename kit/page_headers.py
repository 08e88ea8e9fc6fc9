"""The security headers of every page a person's browser loads from the dashboard and the consent
screen: full pages, the live partials that htmx and server-sent events swap in, redirects and
error pages alike. One middleware sets them on every answer, so that no route can forget them (the
live partials once went out with none).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAGE_HEADERS = {
    "X-Frame-Options": "DENY",  # the consent page must not be framed (clickjacking)
    "X-Content-Type-Options": "nosniff",
    # Scripts only from this site (the vendored htmx), which may call back only to this site.
    "Content-Security-Policy": "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "media-src 'self'; script-src 'self'; connect-src 'self'; "
    "form-action 'self' *; frame-ancestors 'none'; base-uri 'none'",
    "Referrer-Policy": "no-referrer",
}
_RAW = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in PAGE_HEADERS.items()]
_NAMES = {name for name, _ in _RAW}


class PageHeaders:
    """Pure ASGI middleware: `PAGE_HEADERS` on every HTTP answer (replacing any a route set)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(name, value) for name, value in message.get("headers", []) if name.lower() not in _NAMES]
                message["headers"] = kept + _RAW
            await send(message)

        await self.app(scope, receive, with_headers)
