"""The console's frame: its static files, the workspace switcher, and the HTML 404 for every other
`/dashboard/...` path (listed last)."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response

from dashboard import views
from oauth.shell import current_user, error_page, safe_next

STATIC = Path(__file__).resolve().parent / "static"


async def switch_workspace(request: Request) -> Response:
    where, form = await views.acting(request)
    request.session[views.WORKSPACE_KEY] = where.workspace_id
    return views.done(request, f"Now working in {where.workspace['name']}.", safe_next(views.field(form, "next")),
                      where)


async def not_found(request: Request) -> Response:
    """Any other dashboard path: an HTML page (with the navigation when signed in), never JSON."""
    await current_user(request)  # clears an ended session, so the page shows no navigation then
    return error_page(request, 404, "Page not found",
                      "There is no dashboard page at this address. Use the navigation to find your way.")
