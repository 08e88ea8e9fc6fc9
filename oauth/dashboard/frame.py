"""The console's frame: its static files, the workspace switcher, the studio's pages still to come,
and the HTML 404 for every other `/dashboard/...` path (listed last)."""

from __future__ import annotations

from pathlib import Path

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from oauth.dashboard.console import WORKSPACE_KEY, NoSeat, acting, field, flash, page, seat
from oauth.dashboard.shell import current_user, error_page, safe_next
from service.kit.settings import Settings

STATIC = Path(__file__).resolve().parent.parent / "static"

# The studio's pages (the navigation names them all); each says what the API already does there.
STUDIO = {
    "posts": ("Posts", "Publishing and scheduling posts", "Posts"),
    "calendar": ("Calendar", "Scheduled and published posts by month and week", "Posts"),
    "broadcasts": ("Broadcasts", "One message to many contacts", "Broadcasts"),
    "automations": ("Automations", "Replies to comments that match keywords", "Comment automations"),
    "sequences": ("Sequences", "Timed series of messages", "Sequences"),
    "analytics": ("Analytics", "Follower counts over time", "Follower analytics"),
}


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

    def studio(key: str) -> Route:
        title, summary, tag = STUDIO[key]

        async def studio_page(request: Request) -> Response:
            try:
                where = await seat(request)
            except NoSeat as no:
                return no.response
            return page(request, "studio.html", where, title=title, nav=key, summary=summary, tag=tag)

        return Route(f"/dashboard/{key}", studio_page, methods=["GET"], middleware=middleware)

    return [
        Mount("/dashboard/static", app=StaticFiles(directory=STATIC), name="dashboard-static"),
        Route("/dashboard/workspace", switch_workspace, methods=["POST"], middleware=middleware),
        *(studio(key) for key in STUDIO),
    ]


def not_found_route(middleware: list[Middleware]) -> Route:
    """Any other dashboard path: an HTML page (with the navigation when signed in), never JSON."""

    async def not_found(request: Request) -> Response:
        await current_user(request)  # clears an ended session, so the page shows no navigation then
        return error_page(request, 404, "Page not found",
                          "There is no dashboard page at this address. Use the navigation to find your way.")

    return Route("/dashboard/{rest:path}", not_found, methods=["GET", "POST", "HEAD"], middleware=middleware)
