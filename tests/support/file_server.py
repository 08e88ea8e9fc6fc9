"""A real HTTPS file server on loopback (certificates from a throwaway CA) for media imports: a
JPEG, an MP4 served with a lying content type, an HTML page named .jpg, a redirect."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from tests.support.live_server import live_server
from tests.support.posts import JPEG, MP4
from tests.support.webhook_receiver import Tls

FILES = {"/photo.jpg": (JPEG, "image/jpeg"), "/clip": (MP4, "application/octet-stream"),
         "/clip.mp4": (MP4, "video/mp4"), "/page.html": (b"<html><body>not an image</body></html>", "image/jpeg")}


@contextlib.contextmanager
def file_server(tls: Tls) -> Iterator[str]:
    """Serve FILES; yield the https base URL (host `localhost`, which the certificate names)."""
    async def serve(request: Request) -> Response:
        if request.url.path == "/moved":
            return RedirectResponse("/photo.jpg")
        body, kind = FILES.get(request.url.path, (b"", ""))
        return Response(body, media_type=kind) if body else Response(b"gone", status_code=404)

    with live_server(Starlette(routes=[Route("/{path:path}", serve)]), ssl_certfile=tls.cert_path) as base:
        yield base.replace("http://127.0.0.1", "https://localhost")
