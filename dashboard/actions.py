"""The views several studio pages share, written once: a list page, a form that creates or edits a
thing and its save (automations, sequences), pause or resume (the same two), and a deletion after a
confirmation page (those and media). Each is a module-level view taking a `Thing` (bound in
`dashboard.routes`), which names the kind's pages and its domain's ops; another workspace's id is
a 404 page, as everywhere."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from dashboard import refusals, views
from kit import shapes
from kit.errors import ServiceError
from kit.shapes import Body
from oauth.shell import in_db
from service.identity.auth import Actor


@dataclass(frozen=True)
class Thing:
    """One kind of thing the studio lists, edits, pauses and deletes, at `base`, through its
    domain's ops module (`ops`: `get_row`, `get`, `create`, `update`, `delete`, each taking the
    thing's id as `<noun>_id`, as every domain's ops do)."""

    base: str
    noun: str
    ops: Any
    nav: str = ""
    # The list page and the editor: their templates, what they read, and what else they show.
    list_template: str = ""
    list_title: str = ""
    list_load: Callable[[views.Seat], dict[str, Any]] | None = None
    edit_template: str = ""
    edit_load: Callable[[views.Seat, str | None], dict[str, Any]] | None = None
    edit_context: dict[str, Any] = field(default_factory=dict)
    # The save: the form's fields as the `/v1` body (`fields(form, editing)`), checked by its shapes.
    fields: Callable[[FormData, bool], dict[str, Any]] | None = None
    create_shape: type[Body] | None = None
    update_shape: type[Body] | None = None
    waits: bool = False  # the save asks a platform (a WhatsApp template): no transaction around it
    # Deletion: what the question names the thing by, what it says will happen, where Cancel goes,
    # and the module whose `delete` deletes, when not `ops`.
    name_field: str = "name"
    delete_detail: str = ""
    cancel_to_thing: bool = True
    deletes: Any = None

    @property
    def missing(self) -> str:
        return f"No {self.noun} with that id."

    def _id(self, thing_id: str) -> dict[str, str]:
        return {f"{self.noun}_id": thing_id}

    def exists(self, actor: Actor, thing_id: str) -> Any:
        return self.ops.get_row(actor=actor, **self._id(thing_id))

    def create(self, actor: Actor, **body: Any) -> Any:
        return self.ops.create(actor=actor, **body)

    def update(self, actor: Actor, thing_id: str, **changes: Any) -> Any:
        return self.ops.update(actor=actor, **self._id(thing_id), **changes)

    def name_of(self, actor: Actor, thing_id: str) -> str:
        return str(getattr(self.ops.get(actor=actor, **self._id(thing_id)), self.name_field))

    def delete(self, actor: Actor, thing_id: str) -> Any:
        return (self.deletes or self.ops).delete(actor=actor, **self._id(thing_id))


def _given(value: Any) -> Any:
    """A part the route's `Thing` must name (a route without it is a wiring mistake)."""
    assert value is not None, "this view needs a part its Thing does not name"
    return value


async def list_page(request: Request, *, thing: Thing) -> Response:
    """GET a list page: what `list_load` reads for the seat's workspace."""
    where = await views.seat(request)
    listed = await in_db(_given(thing.list_load), where)
    return views.page(request, thing.list_template, where, title=thing.list_title, nav=thing.nav, **listed)


async def edit_page(request: Request, *, thing: Thing) -> Response:
    """GET the form that creates a thing (`.../new`) or edits one (`.../{id}`), with what `edit_load` reads."""
    thing_id = request.path_params.get("id")
    where = await views.seat(request)
    return await _editor(request, thing, where, thing_id)


async def _editor(request: Request, thing: Thing, where: views.Seat, thing_id: str | None) -> HTMLResponse:
    """The editor as a GET shows it (what a refused save is filled in again on)."""
    try:
        data = await in_db(_given(thing.edit_load), where, thing_id)
    except ServiceError:
        return views.not_found(request, thing.missing)
    title = f"{thing.noun.capitalize()} · {data[thing.noun]['name']}" if thing_id else f"New {thing.noun}"
    return views.page(request, thing.edit_template, where, title=title, nav=thing.nav, **thing.edit_context, **data)


async def save(request: Request, *, thing: Thing) -> Response:
    """POST the form: `create(actor, **body)` from `.../new`, `update(actor, id, **changes)` from
    `.../{id}`, each body checked by the `/v1` shape first; then the thing's page."""
    thing_id = request.path_params.get("id")
    where, form = await views.acting(request)
    run = views.in_own if thing.waits else in_db
    fields = _given(thing.fields)
    try:
        actor = await in_db(where.actor)
        if thing_id:
            # Another workspace's thing is a 404 before its fields are judged.
            await in_db(lambda: thing.exists(actor, thing_id))
            changes = shapes.parse(_given(thing.update_shape), fields(form, True))
            made = await run(lambda: thing.update(actor, thing_id, **dict(changes)))
        else:
            body = shapes.parse(_given(thing.create_shape), fields(form, False))
            made = await run(lambda: thing.create(actor, **dict(body)))
    except ServiceError as problem:
        if problem.status == 404:
            return views.not_found(request, thing.missing)
        again = await _editor(request, thing, where, thing_id)
        return refusals.again(again, problem.status, form, request.url.path,
                              refusals.problems_of(problem, thing.noun, f"{thing.noun}-form"))
    views.flash(request, f"Saved the {thing.noun} {made.name}.")
    return views.back_to(f"{thing.base}/{made.id}", where)


async def pause_or_resume(request: Request, *, thing: Thing) -> Response:
    """POST `{base}/{id}/status` with `status` `paused` or `active`: back to the thing's page."""
    thing_id = request.path_params["id"]
    where, form = await views.acting(request)
    status = "paused" if views.field(form, "status") == "paused" else "active"
    try:
        await in_db(lambda: thing.update(where.actor(), thing_id, status=status))
    except ServiceError as problem:
        return views.refused(request, problem, f"{thing.base}/{thing_id}", thing.missing)
    message = f"Paused the {thing.noun}." if status == "paused" else f"Resumed the {thing.noun}."
    return views.done(request, message, f"{thing.base}/{thing_id}", where)


async def confirmed_delete(request: Request, *, thing: Thing) -> Response:
    """GET `{base}/{id}/delete`: the question, on a page of its own; POST: the deletion, then back
    to the list with a message."""
    thing_id = request.path_params["id"]
    base = thing.base
    where = await views.seated(request)
    try:
        if request.method == "GET":
            name = await in_db(lambda: thing.name_of(where.actor(), thing_id))
            cancel = f"{base}/{thing_id}" if thing.cancel_to_thing else base
            return views.confirm(request, where, title=f"Delete {thing.noun}",
                                 question=f"Delete the {thing.noun} {name}?", detail=thing.delete_detail,
                                 action=f"{base}/{thing_id}/delete", button="Delete",
                                 cancel=f"{cancel}?workspace={where.workspace_id}")
        await in_db(lambda: thing.delete(where.actor(), thing_id))
    except ServiceError as problem:
        return views.refused(request, problem, base, thing.missing)
    return views.done(request, f"Deleted the {thing.noun}.", base, where)
