"""MCP tools: the media library. An assistant gives a file either as a public https URL (`import_media`)
or as the file itself, base64-encoded (`upload_media`), up to limits a JSON-RPC body can carry."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Annotated

from pydantic import Field

from kit.errors import FieldProblem, ValidationFailed
from kit.shapes import Body, PageQuery, page_of
from mcp_server.tooling import ToolDef
from service.identity.auth import Actor
from service.media import library
from service.media import shapes as media_shapes

MiB = 1024 * 1024
# A file in a tool call travels as base64 inside one JSON body, held in memory several times over
# while it is decoded: images up to the service's media limit but at most 32 MiB, videos at most
# 16 MiB. Larger files go through `POST /v1/media/uploads` (streamed to disk) or `import_media`.
IMAGE_MAX_BYTES = 32 * MiB
VIDEO_MAX_BYTES = 16 * MiB
BASE64_MAX_CHARS = (IMAGE_MAX_BYTES + 2) // 3 * 4 + 200  # and a `data:` URL's prefix
_DATA_URL = re.compile(r"^data:[\w.+/-]*(;[\w=.+-]+)*;base64,", re.ASCII)


def limits() -> tuple[int, int]:
    """(image, video) byte limits of `upload_media`: never more than the service takes at all."""
    service_limit = library.max_bytes()
    return min(IMAGE_MAX_BYTES, service_limit), min(VIDEO_MAX_BYTES, service_limit)


class UploadMediaTool(Body):
    filename: Annotated[str, Field(min_length=1, max_length=255, examples=["launch.jpg"])]
    content_type: Annotated[str, Field(min_length=3, max_length=100, pattern=r"^[a-z]+/[a-z0-9.+-]+$",
                                       examples=["image/jpeg"], description=(
                                           "What the file is; checked against its bytes."))]
    data_base64: Annotated[str, Field(min_length=1, max_length=BASE64_MAX_CHARS, description=(
        "The file, base64-encoded (standard alphabet; a `data:...;base64,` prefix and line breaks are fine)."))]


def _refused(message: str) -> ValidationFailed:
    return ValidationFailed("The file cannot be used.", details=[FieldProblem("dataBase64", message)])


def upload_media(*, actor: Actor, filename: str, content_type: str, data_base64: str) -> media_shapes.MediaRecord:
    image_limit, video_limit = limits()
    video = content_type.startswith("video/")
    limit = video_limit if video else image_limit
    too_big = f"the file is over this tool's {limit:,}-byte limit for {'videos' if video else 'images'}"
    text = "".join(_DATA_URL.sub("", data_base64, count=1).split())
    if len(text) // 4 * 3 > limit + 2:  # refused before decoding
        raise _refused(too_big)
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise _refused("is not base64 (A-Z, a-z, 0-9, + and /, padded with =)") from None
    if not data:
        raise _refused("the file is empty")
    if len(data) > limit:
        raise _refused(too_big)
    return library.store_bytes(actor=actor, filename=filename, content_type=content_type, data=data,
                               field="dataBase64")


TOOLS: list[ToolDef] = [
    ToolDef("list_media", library.list_media, "read",
            "The workspace's media library, newest first: each media's id (for create_post's mediaIds), file name, "
            "type, size and URL; paginated.",
            model=PageQuery, output=page_of(media_shapes.MediaRecord)),
    ToolDef("import_media", library.import_url, "write",
            "Import an image or a video from an https URL into the media library (the service fetches it; the type "
            "is read from the bytes: JPEG, PNG, GIF, WebP, MP4, QuickTime, WebM). Use the answer's id in "
            "create_post's mediaIds.",
            model=media_shapes.MediaImport, output=media_shapes.MediaRecord, waits=True),
    ToolDef("upload_media", upload_media, "write",
            "Add a file you hold (not at a public URL) to the media library: filename, contentType and the bytes as "
            "dataBase64. JPEG, PNG, GIF and WebP images up to 32 MiB, MP4, QuickTime and WebM videos up to 16 MiB "
            "(never more than the service's media limit); the type is read from the bytes and must be the one "
            "declared. Use the answer's id in create_post's or send_message's mediaIds.",
            model=UploadMediaTool, output=media_shapes.MediaRecord, waits=True),
]
