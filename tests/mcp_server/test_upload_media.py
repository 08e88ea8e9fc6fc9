"""`upload_media`: an assistant gives the file it holds, base64-encoded; the type is read from the
bytes, the size is held to the tool's documented limits, and the answer is the media to use in a post
or a direct message."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest

from mcp_server.tools import media as media_tools
from tests.conftest import bearer
from tests.support.oauth_flow import call_tool_raw, mcp_client, structured
from tests.support.posts import JPEG, MP4, PNG

pytestmark = pytest.mark.shared_service


def _upload(server_url: str, key: str, arguments: dict[str, Any]) -> Any:
    async def scenario() -> Any:
        async with mcp_client(server_url, Authorization=f"Bearer {key}") as session:
            return await session.call_tool("upload_media", arguments)

    return asyncio.run(scenario())


def test_a_file_given_as_base64_becomes_a_media_to_post_with(server_url, client, tenant):
    result = _upload(server_url, tenant["apiKey"], {
        "filename": "launch.png", "contentType": "image/png", "dataBase64": base64.b64encode(PNG).decode()})
    assert result.is_error is False, result
    media = structured(result)
    assert (media["filename"], media["contentType"], media["size"]) == ("launch.png", "image/png", len(PNG))
    assert client.get(media["url"]).content == PNG
    listed = client.get("/v1/media", headers=bearer(tenant["apiKey"])).json()["data"]
    assert [m["id"] for m in listed] == [media["id"]]
    # A data: URL with line breaks, as assistants often hold a file, is as good.
    encoded = base64.b64encode(MP4).decode()
    video = _upload(server_url, tenant["apiKey"], {
        "filename": "clip.mp4", "contentType": "video/mp4",
        "dataBase64": "data:video/mp4;base64," + "\n".join(encoded[i:i + 76] for i in range(0, len(encoded), 76))})
    assert structured(video)["contentType"] == "video/mp4"


def test_the_bytes_decide_the_type_and_bad_input_names_the_field(server_url, client, tenant):
    lying = _upload(server_url, tenant["apiKey"], {
        "filename": "a.png", "contentType": "image/png", "dataBase64": base64.b64encode(JPEG).decode()})
    assert structured(lying)["error"]["code"] == "validation_failed"
    assert structured(lying)["error"]["details"] == [
        {"field": "contentType", "message": "image/png was declared and the bytes are image/jpeg"}]

    page = _upload(server_url, tenant["apiKey"], {
        "filename": "a.html", "contentType": "text/html", "dataBase64": base64.b64encode(b"<html></html>").decode()})
    assert structured(page)["error"]["details"][0]["field"] == "dataBase64"

    garbage = _upload(server_url, tenant["apiKey"], {
        "filename": "a.png", "contentType": "image/png", "dataBase64": "not*base64!"})
    assert structured(garbage)["error"]["details"][0]["field"] == "dataBase64"
    assert client.get("/v1/media", headers=bearer(tenant["apiKey"])).json()["data"] == []


def test_a_video_over_the_tools_limit_is_refused(client, tenant):
    _, video_limit = media_tools.limits()
    too_big = MP4 + b"\x00" * (video_limit + 1 - len(MP4))
    answer = call_tool_raw(client, tenant["apiKey"], "upload_media", {
        "filename": "long.mp4", "contentType": "video/mp4", "dataBase64": base64.b64encode(too_big).decode()})
    assert answer.status_code == 200
    error = answer.json()["result"]["structuredContent"]["error"]
    assert error["details"][0]["field"] == "dataBase64"
    assert f"{video_limit:,}-byte limit for videos" in error["details"][0]["message"]
    assert client.get("/v1/media", headers=bearer(tenant["apiKey"])).json()["data"] == []


def test_a_read_key_cannot_upload(server_url, client, tenant):
    key = client.post("/v1/api-keys", headers=bearer(tenant["apiKey"]),
                      json={"name": "reader", "permission": "read"}).json()["key"]
    refused = _upload(server_url, key, {"filename": "a.png", "contentType": "image/png",
                                         "dataBase64": base64.b64encode(PNG).decode()})
    assert structured(refused)["error"]["code"] == "forbidden"
