"""MCP tools: the media library (an assistant cannot send bytes, so it imports from a URL)."""

from __future__ import annotations

from kit.shapes import PageQuery, page_of
from mcp_server.tooling import ToolDef
from service.media import library
from service.media import shapes as media_shapes

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
]
