"""Helpers for tests of posts and media: uploads with real magic bytes, polling a post."""

from __future__ import annotations

from typing import Any

import httpx2

from tests.conftest import bearer
from tests.support.webhook_receiver import wait_for

JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x01" * 2000
PNG = b"\x89PNG\r\n\x1a\n" + b"\x02" * 1500
MP4 = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + b"\x03" * 5000


def upload(client: httpx2.Client, tenant: dict[str, str], data: bytes, content_type: str,
           filename: str = "file") -> dict[str, Any]:
    started = client.post("/v1/media/uploads", headers=bearer(tenant["apiKey"]),
                          json={"filename": filename, "contentType": content_type, "size": len(data)})
    assert started.status_code == 201, started.text
    put = client.put(started.json()["uploadUrl"], content=data, headers={"Content-Type": "application/octet-stream"})
    assert put.status_code == 200, put.text
    done = client.post(f"/v1/media/uploads/{started.json()['token']}/complete", headers=bearer(tenant["apiKey"]))
    assert done.status_code == 200, done.text
    return done.json()


def get_post(client: httpx2.Client, tenant: dict[str, str], post_id: str) -> dict[str, Any]:
    answer = client.get(f"/v1/posts/{post_id}", headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 200, answer.text
    return answer.json()


def wait_settled(client: httpx2.Client, tenant: dict[str, str], post_id: str, timeout: float = 15) -> dict[str, Any]:
    """The post once it is published, partial or failed."""
    return wait_for(lambda: (p := get_post(client, tenant, post_id))["status"] in ("published", "partial", "failed")
                    and p, timeout=timeout)


def sent_posts(client: httpx2.Client, platform: str, account_id: str) -> list[dict[str, Any]]:
    rows = client.get(f"/sandbox/{platform}/sent", params={"accountId": account_id}).json()["data"]
    return [row for row in rows if row["kind"] == "post"]
