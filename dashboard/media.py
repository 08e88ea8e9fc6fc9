"""The media library: the workspace's media with previews, upload (with a progress bar: the
three steps of `/v1`'s upload, the bytes PUT straight to the upload URL by `static/upload.js`) and
delete. The composer uploads through the same two routes."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from dashboard import refusals, views
from dashboard.actions import Thing
from dashboard.forms import number
from dashboard.views import Seat, data_of, field
from kit import shapes
from kit.errors import ServiceError
from oauth.shell import in_db
from service.media import library
from service.media import ops as media
from service.media.shapes import UploadIn

PAGE = "/dashboard/media"
LIMIT = 60


def _listing(where: Seat) -> dict[str, Any]:
    found = library.list_media(actor=where.actor(), limit=LIMIT)
    return {"media": data_of(found), "total": found.total}


def _json(body: dict[str, Any], status: int = 200) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers={"Cache-Control": "no-store"})


async def library_page(request: Request) -> Response:
    where = await views.seat(request)
    listed = await in_db(_listing, where)
    return views.page(request, "media.html", where, title="Media library", nav="posts", **listed)


async def start_upload(request: Request) -> Response:
    where, form = await views.acting(request)
    try:
        body = shapes.parse(UploadIn, {"filename": field(form, "filename"),
                                       "contentType": field(form, "contentType"),
                                       "size": number(field(form, "size"))})
        upload = await in_db(lambda: media.create_upload(actor=where.actor(), **dict(body)))
    except ServiceError as problem:
        return _refused(problem, field(form, "filename"))
    return _json({"token": upload.token}, 201)


def _refused(problem: ServiceError, filename: str) -> JSONResponse:
    """A refused upload as the words the page shows: a type not taken names the types that are."""
    fields = {detail.field for detail in problem.details}
    if "contentType" in fields:
        words = f"{filename or 'This file'} is not a type that can be posted: upload {media.ACCEPTED}."
    elif "size" in fields:
        words = f"{filename or 'This file'} is too large, or arrived incomplete: " + "; ".join(
            detail.message for detail in problem.details if detail.field == "size") + "."
    else:
        words = " ".join(p.message for p in refusals.problems_of(problem, "upload", "upload-file"))
    return _json({"error": {"message": words}}, problem.status)


async def complete_upload(request: Request) -> Response:
    token = request.path_params["id"]
    where, _form = await views.acting(request)
    try:
        made = await in_db(lambda: media.complete(actor=where.actor(), token=token))
    except ServiceError as problem:
        return _refused(problem, "")
    return _json({"mediaId": made.id, "filename": made.filename, "contentType": made.content_type})


MEDIA = Thing(base=PAGE, noun="media", ops=media, deletes=library, name_field="filename", cancel_to_thing=False,
              delete_detail="Its address stops working. Posts already published keep their copy.")
