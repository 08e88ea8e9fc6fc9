"""Media uploads: declare, PUT the raw bytes (streamed to disk), complete; and the public file URL."""

from __future__ import annotations

import contextlib
import hashlib

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from http_api.declare import op
from http_api.routing import Call, Reply, error_response, json_response
from service.kit.errors import NotFound, PayloadTooLarge, ServiceError
from service.kit.pagination import Page
from service.kit.shapes import PageQuery, page_of
from service.media import library
from service.media import ops as media
from service.posts.shapes import MediaImport, MediaRecord, Upload, UploadIn, UploadProgress
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


def _open(token: str) -> str:
    with connection(), reading():
        return media.open_upload(token).id


def _received(media_id: str, size: int, sha256: str) -> None:
    with connection(), db.atomic():
        media.received(media_id, size=size, sha256=sha256)


async def put_bytes(request: Request) -> Response:
    """The bytes of an upload, streamed to a file in chunks: never all in memory, never the JSON limit."""
    token = request.path_params["token"]
    try:
        media_id = await run_in_threadpool(_open, token)
        declared = request.headers.get("content-length")
        if declared and declared.isdigit():
            media.check_size(int(declared))
        path = media.part_path(media_id)
        digest = hashlib.sha256()
        size = 0
        try:
            with path.open("wb") as out:
                async for chunk in request.stream():
                    size += len(chunk)
                    media.check_size(size)
                    digest.update(chunk)
                    out.write(chunk)
        except PayloadTooLarge:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            raise
        await run_in_threadpool(_received, media_id, size, digest.hexdigest())
        return json_response(200, UploadProgress(token=token, received_bytes=size))
    except ServiceError as error:
        return error_response(error)


def _servable(media_id: str, signature: str) -> tuple[str, str] | None:
    with connection(), reading():
        found = media.servable(media_id, signature)
        return (str(media.file_path(found.id)), found.content_type) if found is not None else None


async def serve_file(request: Request) -> Response:
    found = await run_in_threadpool(_servable, request.path_params["id"], request.path_params["signature"])
    if found is None:
        return error_response(NotFound("No such media."))
    return FileResponse(found[0], media_type=found[1])


ROUTES = [Route("/media/{id}/{signature}", serve_file, methods=["GET", "HEAD"])]

OPERATIONS = [
    op("POST", "/media/uploads", create, summary="Start a media upload", tag="Media", operation_id="createUpload",
       ok=201, body=UploadIn, answer=Upload,
       description="Declare the file (`filename`, `contentType`, `size` in bytes). The answer's `uploadUrl` takes "
                   "the raw bytes with PUT; the token in it is the credential (shown once, kept hashed) and "
                   "expires at `expiresAt`. Types: JPEG, PNG, GIF, WebP images; MP4, QuickTime, WebM videos."),
    op("PUT", "/media/uploads/{token}", lambda call: None, summary="Send an upload's bytes", tag="Media",
       operation_id="putUploadBytes", answer=UploadProgress, auth=False, errors=(404, 413), stream=put_bytes,
       description="The raw bytes as the body (any `Content-Type`), streamed to storage: the 1 MiB JSON limit does "
                   "not apply, the service's media size limit does (413). No API key needed: the token is the "
                   "credential. Sending again replaces the bytes. Unknown, expired or completed token → 404."),
    op("POST", "/media/uploads/{token}/complete", complete, summary="Complete an upload", tag="Media",
       operation_id="completeUpload", answer=MediaRecord, body=None,
       description="Checks the received size against the declared one and the type read from the bytes (magic "
                   "numbers, not the file's name) against the declared `contentType` (either wrong → 422 with "
                   "`details`), records the SHA-256 and emits `media.uploaded`. Completing twice answers the same "
                   "media. Unknown or expired token → 404."),
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
