"""The front door a newcomer finds: `/` sends a person to the dashboard, and `/docs` is an
interactive reference of `/v1/openapi.json` (Swagger UI).

Swagger UI's files come from a Python package (`swagger-ui-bundle-v2`) and are served from here,
so the reference works offline and loads nothing from a CDN. The page's script is a file of its
own, so a strict Content-Security-Policy (no inline script, nothing from elsewhere) holds.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Switchboard API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
<div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/start.js"></script>
</body>
</html>
"""

# Try-it-out calls go to this same origin; `Authorize` takes an API key (`sk_...`) as the bearer
# token and keeps it in this browser tab only. No validator badge: it would call a remote service.
START = """window.ui = SwaggerUIBundle({
  url: "/v1/openapi.json",
  dom_id: "#reference",
  deepLinking: true,
  persistAuthorization: false,
  displayRequestDuration: true,
  tryItOutEnabled: false,
  validatorUrl: null,
  docExpansion: "list",
  defaultModelsExpandDepth: 0
});
"""

HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'",
    "Referrer-Policy": "no-referrer",
}


async def front_door(request: Request) -> Response:
    return RedirectResponse("/dashboard", status_code=302)


async def reference(request: Request) -> Response:
    return HTMLResponse(PAGE, headers=HEADERS)


async def start(request: Request) -> Response:
    return Response(START, media_type="text/javascript", headers=HEADERS)


def routes() -> list[BaseRoute]:
    return [
        Route("/", front_door, methods=["GET", "HEAD"]),
        Route("/docs", reference, methods=["GET", "HEAD"]),
        Route("/docs/start.js", start, methods=["GET", "HEAD"]),
        Mount("/docs/assets", app=StaticFiles(directory=Path(str(swagger_ui_path))), name="docs-assets"),
    ]
