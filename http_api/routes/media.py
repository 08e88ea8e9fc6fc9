"""Media uploads: declare, PUT the raw bytes (streamed to disk), complete; and the public file URL."""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import time
from pathlib import Path
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from http_api.declare import op
from http_api.routing import Call, Reply, error_response, json_response
from kit.errors import NotFound, ServiceError
from kit.pagination import Page
from kit.shapes import PageQuery, page_of
from service.media import library
from service.media import ops as media
from service.media.shapes import MediaImport, MediaRecord, Upload, UploadIn, UploadProgress
from storage.db import connection, db, reading


def create(call: Call) -> Reply:
    return Reply(media.create_upload(actor=call.actor, **dict(call.body)), status=201)


def complete(call: Call) -> MediaRecord:
    return media.complete(actor=call.actor, token=call.path["token"])


def get(call: Call) -> MediaRecord:
    return media.get(actor=call.actor, media_id=call.path["id"])


def list_(call: Call) -> Page:
    return library.list_media(actor=call.actor, **dict(call.query))


def delete(call: Call) -> Response:
    library.delete(actor=call.actor, media_id=call.path["id"])
    return Response(status_code=204)


def import_(call: Call) -> Reply:
    return Reply(library.import_url(actor=call.actor, url=call.body.url), status=201)


def _claim(token: str) -> tuple[str, dt.datetime, Path]:
    with connection(), db.atomic():
        return media.claim_put(token)


def _renew(media_id: str, mark: dt.datetime) -> dt.datetime:
    with connection(), db.atomic():
        return media.renew_put(media_id, mark)


def _finish(media_id: str, mark: dt.datetime, written: Path, size: int, sha256: str) -> None:
    with connection(), db.atomic():
        media.finish_put(media_id, mark, written, size=size, sha256=sha256)


def _release(media_id: str, mark: dt.datetime) -> None:
    with connection(), db.atomic():
        media.release_put(media_id, mark)


async def put_bytes(request: Request) -> Response:
    """The bytes of an upload, streamed to a file in chunks: never all in memory, never the JSON limit.
    One PUT at a time per token (`media.claim_put`); no transaction is open while the bytes come."""
    token = request.path_params["token"]
    try:
        declared = request.headers.get("content-length")
        if declared and declared.isascii() and declared.isdigit():
            media.check_size(int(declared))
        media_id, mark, written = await run_in_threadpool(_claim, token)
    except ServiceError as error:
        return error_response(error)
    finished = False
    try:
        digest = hashlib.sha256()
        size = 0
        renewed = time.monotonic()
        with written.open("wb") as out:
            async for chunk in request.stream():
                size += len(chunk)
                media.check_size(size)
                digest.update(chunk)
                out.write(chunk)
                if time.monotonic() - renewed > media.RENEW_EVERY_SECONDS:
                    mark = await run_in_threadpool(_renew, media_id, mark)
                    renewed = time.monotonic()
        await run_in_threadpool(_finish, media_id, mark, written, size, digest.hexdigest())
        finished = True
        return json_response(200, UploadProgress(token=token, received_bytes=size))
    except ServiceError as error:
        return error_response(error)
    finally:
        if not finished:
            with contextlib.suppress(FileNotFoundError):
                written.unlink()
            await run_in_threadpool(_release, media_id, mark)


def _servable(media_id: str, signature: str) -> tuple[str, str, str] | None:
    with connection(), reading():
        found = media.servable(media_id, signature)
        return (str(media.file_path(found.id)), found.content_type, found.filename) if found is not None else None


def content_disposition(filename: str) -> str:
    """`inline` with the caller's file name, safely (RFC 6266): an ASCII stand-in in `filename` (no
    quote, backslash or control character can end the parameter or the header) and the exact name,
    percent-encoded UTF-8, in `filename*` (RFC 5987)."""
    fallback = "".join(c if " " <= c <= "~" and c not in '"\\%' else "_" for c in filename) or "file"
    exact = quote(filename.encode("utf-8", "replace"), safe="")
    return f"inline; filename=\"{fallback}\"; filename*=UTF-8''{exact}"


async def serve_file(request: Request) -> Response:
    found = await run_in_threadpool(_servable, request.path_params["id"], request.path_params["signature"])
    if found is None:
        return error_response(NotFound("No such media."))
    # Uploaded bytes are the customer's (anyone's, through a leaked key) and served from the
    # dashboard's origin: never sniffed into HTML, never run as a page with this origin's rights.
    return FileResponse(found[0], media_type=found[1], headers={
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "sandbox",
        "Content-Disposition": content_disposition(found[2]),
    })


ROUTES = [Route("/media/{id}/{signature}", serve_file, methods=["GET", "HEAD"])]

OPERATIONS = [
    op("POST", "/media/uploads", create, summary="Start a media upload", tag="Media", operation_id="createUpload",
       ok=201, body=UploadIn, answer=Upload,
       description="Declare the file (`filename`, `contentType`, `size` in bytes). The answer's `uploadUrl` takes "
                   "the raw bytes with PUT; the token in it is the credential (shown once, kept hashed) and "
                   "expires at `expiresAt`. Types: JPEG, PNG, GIF, WebP images; MP4, QuickTime, WebM videos."),
    op("PUT", "/media/uploads/{token}", lambda call: None, summary="Send an upload's bytes", tag="Media",
       operation_id="putUploadBytes", answer=UploadProgress, auth=False, errors=(404, 409, 413), stream=put_bytes,
       description="The raw bytes as the body (any `Content-Type`), streamed to storage: the 1 MiB JSON limit does "
                   "not apply, the service's media size limit does (413). No API key needed: the token is the "
                   "credential. Sending again replaces the bytes. One PUT at a time per token: while one is "
                   "receiving, another (or a completion) → 409 `upload_in_progress`. Unknown, expired or completed "
                   "token → 404."),
    op("POST", "/media/uploads/{token}/complete", complete, summary="Complete an upload", tag="Media",
       operation_id="completeUpload", answer=MediaRecord, body=None,
       description="Checks the received size against the declared one and the type read from the bytes (magic "
                   "numbers, not the file's name) against the declared `contentType` (either wrong → 422 with "
                   "`details`), records the SHA-256 and emits `media.uploaded`. Completing twice (or at once) "
                   "answers the same media. While a PUT is receiving → 409 `upload_in_progress`. Unknown or "
                   "expired token → 404."),
    op("GET", "/media/{id}", get, summary="Get a media", tag="Media", operation_id="getMedia", answer=MediaRecord),
    op("GET", "/media", list_, summary="List the media library, newest first", tag="Media", operation_id="listMedia",
       query=PageQuery, answer=page_of(MediaRecord),
       description="The workspace's completed media (uploads and imports); uploads never completed are not listed."),
    op("DELETE", "/media/{id}", delete, summary="Delete a media", tag="Media", operation_id="deleteMedia", ok=204,
       errors=(409,),
       description="Removes the media and its bytes (its URL stops working): 204 without a body. A media that a "
                   "scheduled or publishing post uses → 409 (delete or change the post first). Published posts "
                   "keep what the platforms already fetched."),
    op("POST", "/media/import", import_, summary="Import a media from an https URL", tag="Media",
       operation_id="importMedia", ok=201, body=MediaImport, answer=MediaRecord, waits=True, errors=(409,),
       description="For callers that cannot PUT bytes (MCP assistants): the service fetches the URL through its "
                   "outbound guard (public addresses only unless the operator allows private ones; redirects are "
                   "not followed; 30 s), at most the media size limit, and reads the type from the bytes (JPEG, PNG, "
                   "GIF, WebP, MP4, QuickTime, WebM). A URL that cannot be fetched, answers other than 200, is too "
                   "big or holds another type → 422 naming `url`. Emits `media.uploaded`."),
]
