"""What several studio pages share, written once: a list page, a form that creates or edits a thing
and its save (automations, sequences), pause or resume (the same two), and a deletion after a
confirmation page (those and media). Each takes the service's own functions; another workspace's id
is a 404 page, as everywhere."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from kit import shapes
from kit.errors import ServiceError
from kit.shapes import Body
from oauth.dashboard.console import (
    NoSeat,
    Seat,
    acting,
    back_to,
    confirm,
    failure,
    field,
    flash,
    in_own,
    not_found,
    page,
    seat,
)
from oauth.dashboard.shell import in_db
from service.identity.auth import Actor

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


def listing(*, template: str, title: str, nav: str, load: Callable[[Seat], dict[str, Any]]) -> Handler:
    """GET a list page: what `load` reads for the seat's workspace, in `template`."""

    async def list_page(request: Request) -> Response:
        try:
            where = await seat(request)
            listed = await in_db(load, where)
        except NoSeat as no:
            return no.response
        return page(request, template, where, title=title, nav=nav, **listed)

    return list_page


def editor(*, template: str, noun: str, nav: str, load: Callable[[Seat, str | None], dict[str, Any]],
           **context: Any) -> Handler:
    """GET the form that creates a thing (`.../new`) or edits one (`.../{id}`), with what `load` reads."""

    async def edit_page(request: Request) -> Response:
        thing_id = request.path_params.get("id")
        try:
            where = await seat(request)
            data = await in_db(load, where, thing_id)
        except NoSeat as no:
            return no.response
        except ServiceError:
            return not_found(request, f"No {noun} with that id.")
        title = f"{noun.capitalize()} · {data[noun]['name']}" if thing_id else f"New {noun}"
        return page(request, template, where, title=title, nav=nav, **context, **data)

    return edit_page


def saver(*, base: str, noun: str, fields: Callable[[FormData, bool], dict[str, Any]],
          create_shape: type[Body], update_shape: type[Body], exists: Callable[[Actor, str], Any],
          create: Callable[..., Any], update: Callable[..., Any], waits: bool = False) -> Handler:
    """POST the form: `create(actor, **body)` from `.../new`, `update(actor, id, **changes)` from
    `.../{id}`, each body checked by the `/v1` shape first; then the thing's page. `waits`: the
    service asks a platform (a WhatsApp template), so it runs outside any transaction."""

    async def save(request: Request) -> Response:
        thing_id = request.path_params.get("id")
        back = f"{base}/{thing_id}" if thing_id else f"{base}/new"
        try:
            where, form = await acting(request)
        except NoSeat as no:
            return no.response
        run = in_own if waits else in_db
        try:
            actor = await in_db(where.actor)
            if thing_id:
                # Another workspace's thing is a 404 before its fields are judged.
                await in_db(lambda: exists(actor, thing_id))
                changes = shapes.parse(update_shape, fields(form, True))
                made = await run(lambda: update(actor, thing_id, **dict(changes)))
            else:
                body = shapes.parse(create_shape, fields(form, False))
                made = await run(lambda: create(actor, **dict(body)))
        except ServiceError as problem:
            if problem.status == 404:
                return not_found(request, f"No {noun} with that id.")
            return failure(request, problem, f"{back}?workspace={where.workspace_id}")
        flash(request, f"Saved the {noun} {made.name}.")
        return RedirectResponse(f"{base}/{made.id}?workspace={where.workspace_id}", status_code=303)

    return save
