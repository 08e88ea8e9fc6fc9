"""The media library: the workspace's media with previews, upload (with a progress bar: the
three steps of `/v1`'s upload, the bytes PUT straight to the upload URL by `static/upload.js`) and
delete. The composer uploads through the same two routes."""

from __future__ import annotations

from typing import Any

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from kit import shapes
from kit.errors import ServiceError
from kit.settings import Settings
from oauth.dashboard.actions import confirmed_delete
from oauth.dashboard.console import NoSeat, Seat, acting, failure, field, not_found, page, seat
from oauth.dashboard.picks import number
from oauth.dashboard.shell import data_of, in_db
from service.media import library
from service.media import ops as media
from service.posts.shapes import UploadIn

PAGE = "/dashboard/media"
LIMIT = 60


def _listing(where: Seat) -> dict[str, Any]:
    found = library.list_media(actor=where.actor(), limit=LIMIT)
    return {"media": data_of(found), "total": found.total}


def _json(body: dict[str, Any], status: int = 200) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers={"Cache-Control": "no-store"})


def routes(settings: Settings, middleware: list[Middleware]) -> list[Route]:
    async def library_page(request: Request) -> Response:
        try:
            where = await seat(request)
            listed = await in_db(_listing, where)
        except NoSeat as no:
            return no.response
        return page(request, "media.html", where, title="Media library", nav="posts", **listed)

    async def start_upload(request: Request) -> Response:
        try:
            where, form = await acting(request)
            body = shapes.parse(UploadIn, {"filename": field(form, "filename"),
                                           "contentType": field(form, "contentType"),
                                           "size": number(field(form, "size"))})
            upload = await in_db(lambda: media.create_upload(actor=where.actor(), **dict(body)))
        except NoSeat as no:
            return no.response
        except ServiceError as problem:
            return failure(request, problem, PAGE)
        return _json({"token": upload.token}, 201)

    async def complete_upload(request: Request) -> Response:
        token = request.path_params["id"]
        try:
            where, _form = await acting(request)
            made = await in_db(lambda: media.complete(actor=where.actor(), token=token))
        except NoSeat as no:
            return no.response
        except ServiceError as problem:
            if problem.status == 404:
                return not_found(request, "No upload with that token.")
            return failure(request, problem, PAGE)
        return _json({"mediaId": made.id, "filename": made.filename, "contentType": made.content_type})

    delete = confirmed_delete(base=PAGE, noun="media", cancel_to_thing=False,
                              detail="Its address stops working. Posts already published keep their copy.",
                              name_of=lambda actor, thing: media.get(actor=actor, media_id=thing).filename,
                              delete=lambda actor, thing: library.delete(actor=actor, media_id=thing))

    return [
        Route(PAGE, library_page, methods=["GET"], middleware=middleware),
        Route(f"{PAGE}/uploads", start_upload, methods=["POST"], middleware=middleware),
        Route(f"{PAGE}/uploads/{{id}}/complete", complete_upload, methods=["POST"], middleware=middleware),
        Route(f"{PAGE}/{{id}}/delete", delete, methods=["GET", "POST"], middleware=middleware),
    ]
