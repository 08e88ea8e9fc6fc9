"""The console's frame: its static files, the workspace switcher, and the HTML 404
for every other `/dashboard/...` path (listed last)."""

from __future__ import annotations

from pathlib import Path

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from kit.page_headers import PageHeaders
from kit.settings import Settings
from oauth.dashboard.console import WORKSPACE_KEY, NoSeat, acting, field, flash
from oauth.dashboard.shell import current_user, error_page, safe_next

STATIC = Path(__file__).resolve().parent.parent / "static"

def routes(settings: Settings, middleware: list[Middleware]) -> list[BaseRoute]:
    async def switch_workspace(request: Request) -> Response:
        try:
            where, form = await acting(request)
        except NoSeat as no:
            return no.response
        request.session[WORKSPACE_KEY] = where.workspace_id
        flash(request, f"Now working in {where.workspace['name']}.")
        target = safe_next(field(form, "next"))
        return RedirectResponse(f"{target}?workspace={where.workspace_id}", status_code=303)

    return [
        Mount("/dashboard/static", app=StaticFiles(directory=STATIC), name="dashboard-static",
              middleware=[Middleware(PageHeaders)]),
        Route("/dashboard/workspace", switch_workspace, methods=["POST"], middleware=middleware),
    ]


def not_found_route(middleware: list[Middleware]) -> Route:
    """Any other dashboard path: an HTML page (with the navigation when signed in), never JSON."""

    async def not_found(request: Request) -> Response:
        await current_user(request)  # clears an ended session, so the page shows no navigation then
        return error_page(request, 404, "Page not found",
                          "There is no dashboard page at this address. Use the navigation to find your way.")

    return Route("/dashboard/{rest:path}", not_found, methods=["GET", "POST", "HEAD"], middleware=middleware)
