"""The shapes of media: what `/v1` and the MCP tools take and answer about uploads and the library."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from kit.shapes import Body, HttpsUrl, Instant, Record

# -- requests ----------------------------------------------------------------------------------


class MediaImport(Body):
    url: Annotated[HttpsUrl, Field(max_length=2048, examples=["https://cdn.example.com/launch.jpg"], description=(
        "Absolute https URL the service fetches (public addresses only, redirects not followed); the type and "
        "size are read from the bytes."))]


class UploadIn(Body):
    filename: Annotated[str, Field(min_length=1, max_length=255, examples=["launch.mp4"])]
    content_type: Annotated[str, Field(min_length=3, max_length=100, pattern=r"^[a-z]+/[a-z0-9.+-]+$",
                                       examples=["video/mp4"])]
    size: Annotated[int, Field(ge=1, description="Bytes; at most the service's media size limit.")]


# -- records -----------------------------------------------------------------------------------


class Upload(Record):
    token: str = Field(description="Shown once; the upload URL carries it.")
    upload_url: str = Field(description="PUT the raw bytes here (any content type), then POST `.../complete`.")
    expires_at: Instant


class UploadProgress(Record):
    token: str
    received_bytes: int


class MediaRecord(Record):
    id: str
    media_id: str = Field(description="The same as `id`.")
    filename: str
    content_type: str = Field(description="Read from the bytes, not from the name.")
    size: int
    sha256: str
    url: str = Field(description="Where platforms fetch it: served by this service under its base URL.")
    created_at: Instant
