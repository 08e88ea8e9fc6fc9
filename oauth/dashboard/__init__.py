"""The dashboard: server-rendered pages for people, working without JavaScript, one module per domain.

`shell` holds what every page shares (sessions, CSRF, rendering, running storage work); each page
module answers its own paths with `routes(settings, middleware)`.
"""

from __future__ import annotations

from starlette.routing import Route

from oauth.dashboard import api_keys, connected_apps, home, shell, signin, webhooks
from service.kit.settings import Settings

PAGES = [signin, home, api_keys, connected_apps, webhooks]


def build_routes(settings: Settings) -> list[Route]:
    middleware = shell.session_middleware(settings)
    routes = [route for page in PAGES for route in page.routes(settings, middleware)]
    if settings.oidc_issuer and settings.oidc_client_id and settings.oidc_client_secret:
        from oauth import oidc

        routes += oidc.routes(settings, middleware)
    return routes
