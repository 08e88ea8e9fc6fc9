"""The dashboard: server-rendered pages for people, working without JavaScript, one module per domain.

`shell` holds what every page shares (sessions, CSRF, rendering, running storage work), `console`
what the console's pages add (the workspace acted in, flash messages, confirmations); each page
module answers its own paths with `routes(settings, middleware)`. Any other `/dashboard/...` path is
an HTML 404 (`frame.not_found_route`, listed last).
"""

from __future__ import annotations

from starlette.routing import BaseRoute

from kit.settings import Settings
from oauth.dashboard import (
    accounts,
    analytics,
    api_keys,
    automations,
    broadcasts,
    calendar,
    connected_apps,
    frame,
    home,
    inbox,
    media,
    posts,
    sequences,
    shell,
    signin,
    webhooks,
)

PAGES = [signin, home, frame, accounts, inbox, posts, calendar, media, broadcasts, automations, sequences, analytics,
         api_keys, connected_apps, webhooks]


def build_routes(settings: Settings) -> list[BaseRoute]:
    middleware = shell.session_middleware(settings)
    routes: list[BaseRoute] = [route for page in PAGES for route in page.routes(settings, middleware)]
    if settings.oidc_issuer and settings.oidc_client_id and settings.oidc_client_secret:
        from oauth import oidc

        routes += oidc.routes(settings, middleware)
    routes.append(frame.not_found_route(middleware))
    return routes
