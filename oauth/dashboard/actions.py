"""Two actions several studio pages share, written once: pause or resume a thing (automations,
sequences), and delete one after a confirmation page (automations, sequences, media). Each takes
the service's own functions; another workspace's id is a 404 page, as everywhere."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from oauth.dashboard.console import NoSeat, acting, back_to, confirm, failure, field, flash, not_found, seat
from oauth.dashboard.shell import in_db
from service.identity.auth import Actor
from service.kit.errors import ServiceError

Handler = Callable[[Request], Awaitable[Response]]


def pause_or_resume(*, base: str, noun: str, update: Callable[[Actor, str, str], Any]) -> Handler:
    """POST `{base}/{id}/status` with `status` `paused` or `active`: back to the thing's page."""

    async def set_status(request: Request) -> Response:
        thing_id = request.path_params["id"]
        try:
            where, form = await acting(request)
            status = "paused" if field(form, "status") == "paused" else "active"
            await in_db(lambda: update(where.actor(), thing_id, status))
        except NoSeat as no:
            return no.response
        except ServiceError as problem:
            if problem.status == 404:
                return not_found(request, f"No {noun} with that id.")
            return failure(request, problem, f"{base}/{thing_id}")
        flash(request, f"Paused the {noun}." if status == "paused" else f"Resumed the {noun}.")
        return back_to(f"{base}/{thing_id}", where)

    return set_status


def confirmed_delete(*, base: str, noun: str, detail: str, name_of: Callable[[Actor, str], str],
                     delete: Callable[[Actor, str], Any], cancel_to_thing: bool = True) -> Handler:
    """GET `{base}/{id}/delete`: the question, on a page of its own; POST: the deletion, then back
    to the list with a message."""

    async def delete_thing(request: Request) -> Response:
        thing_id = request.path_params["id"]
        try:
            if request.method == "GET":
                where = await seat(request)
                name = await in_db(lambda: name_of(where.actor(), thing_id))
                cancel = f"{base}/{thing_id}" if cancel_to_thing else base
                return confirm(request, where, title=f"Delete {noun}", question=f"Delete the {noun} {name}?",
                               detail=detail, action=f"{base}/{thing_id}/delete", button="Delete",
                               cancel=f"{cancel}?workspace={where.workspace_id}")
            where, _form = await acting(request)
            await in_db(lambda: delete(where.actor(), thing_id))
        except NoSeat as no:
            return no.response
        except ServiceError as problem:
            if problem.status == 404:
                return not_found(request, f"No {noun} with that id.")
            return failure(request, problem, base)
        flash(request, f"Deleted the {noun}.")
        return back_to(base, where)

    return delete_thing
