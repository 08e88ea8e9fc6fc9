"""Per-platform rules checked before anything is saved, and the media upload flow."""

from __future__ import annotations

import hashlib

import pytest

from storage.db import connection
from storage.models import Event, Post
from tests.conftest import bearer
from tests.support.posts import JPEG, MP4, PNG, upload


def _fields(answer) -> dict[str, str]:
    assert answer.status_code == 422, answer.text
    return {d["field"]: d["message"] for d in answer.json()["error"]["details"]}


@pytest.fixture
def world(live):
    from tests.support.sandbox import connect_account

    tenant = live.tenant()
    accounts = {p: connect_account(live.client, tenant, p)
                for p in ("x", "telegram", "instagram", "tiktok", "youtube", "linkedin")}
    return live.client, tenant, accounts


def test_each_target_is_checked_by_its_platform_before_anything_is_saved(world):
    client, tenant, accounts = world
    headers = bearer(tenant["apiKey"])
    image = upload(client, tenant, JPEG, "image/jpeg")
    # X counts as X does: 140 CJK characters weigh 280 and pass; one more does not. A link is 23.
    assert len("漢" * 141) == 141
    answer = client.post("/v1/posts", headers=headers, json={
        "content": "short", "publishNow": True, "mediaIds": [image["id"]],
        "targets": [
            {"accountId": accounts["x"]["id"], "content": "漢" * 140},
            {"accountId": accounts["linkedin"]["id"], "content": "a" * 3001},
            {"accountId": accounts["telegram"]["id"], "content": "b" * 1025, "options": {"chatId": "@news"}},
            {"accountId": accounts["tiktok"]["id"], "options": {"privacyLevel": "PUBLIC_TO_EVERYONE"}},
            {"accountId": accounts["youtube"]["id"]},
        ]})
    fields = _fields(answer)
    assert "targets[0].content" not in fields
    assert "3000" in fields["targets[1].content"]
    assert "1024" in fields["targets[2].content"]  # a caption with media
    assert "SELF_ONLY" in fields["targets[3].options.privacyLevel"]  # an unaudited app posts privately only
    assert "video" in fields["mediaIds"]
    with connection():
        assert Post.select().where(Post.workspace == tenant["workspaceId"]).count() == 0

    over = client.post("/v1/posts", headers=headers, json={
        "content": "漢" * 141, "publishNow": True, "targets": [{"accountId": accounts["x"]["id"]}]})
    assert "282" in _fields(over)["targets[0].content"]
    link = "https://example.com/" + "a" * 200
    fits = client.post("/v1/posts", headers=headers, json={
        "content": "x" * 250 + " " + link, "targets": [{"accountId": accounts["x"]["id"]}]})
    assert fits.status_code == 201, fits.text  # 250 + 1 + 23

    # Telegram without media takes 4,096.
    text_only = client.post("/v1/posts", headers=headers, json={
        "content": "b" * 1025, "targets": [{"accountId": accounts["telegram"]["id"], "options": {"chatId": "@n"}}]})
    assert text_only.status_code == 201

    no_media = client.post("/v1/posts", headers=headers, json={
        "content": "hi", "targets": [{"accountId": accounts["instagram"]["id"]}]})
    assert "image or a video" in _fields(no_media)["mediaIds"]
    images = [upload(client, tenant, PNG, "image/png")["id"] for _ in range(11)]
    carousel = client.post("/v1/posts", headers=headers, json={
        "content": "hi", "mediaIds": images, "targets": [{"accountId": accounts["instagram"]["id"]}]})
    assert "10" in _fields(carousel)["mediaIds"]
    ten = client.post("/v1/posts", headers=headers, json={
        "content": "hi", "mediaIds": images[:10], "targets": [{"accountId": accounts["instagram"]["id"]}]})
    assert ten.status_code == 201

    unknown = client.post("/v1/posts", headers=headers, json={
        "content": "hi", "mediaIds": ["med_nope"], "targets": [{"accountId": "acc_nope"}], "typo": 1})
    assert set(_fields(unknown)) == {"typo"}
    unknown = client.post("/v1/posts", headers=headers, json={
        "content": "hi", "mediaIds": ["med_nope"], "targets": [{"accountId": "acc_nope"}]})
    assert set(_fields(unknown)) == {"mediaIds[0]", "targets[0].accountId"}


def test_an_upload_is_checked_by_its_size_and_its_bytes(live):
    client, tenant = live.client, live.tenant()
    headers = bearer(tenant["apiKey"])

    started = client.post("/v1/media/uploads", headers=headers,
                          json={"filename": "photo.jpg", "contentType": "image/jpeg", "size": len(JPEG) + 1})
    assert started.status_code == 201, started.text
    assert started.json()["token"] not in str(client.get("/v1/openapi.json").text)
    client.put(started.json()["uploadUrl"], content=JPEG)
    wrong_size = client.post(f"/v1/media/uploads/{started.json()['token']}/complete", headers=headers)
    assert "size" in _fields(wrong_size)

    # A PNG named .jpg and declared as JPEG: the bytes decide.
    started = client.post("/v1/media/uploads", headers=headers,
                          json={"filename": "photo.jpg", "contentType": "image/jpeg", "size": len(PNG)})
    put = client.put(started.json()["uploadUrl"], content=PNG)
    assert put.json() == {"token": started.json()["token"], "receivedBytes": len(PNG)}
    wrong_type = client.post(f"/v1/media/uploads/{started.json()['token']}/complete", headers=headers)
    assert "image/png" in _fields(wrong_type)["contentType"]

    assert client.post("/v1/media/uploads/upl_" + "0" * 64 + "/complete", headers=headers).status_code == 404
    assert client.put("/v1/media/uploads/upl_" + "0" * 64, content=b"x").status_code == 404

    # Over 1 MiB: not the JSON limit.
    big = MP4 + b"\x00" * (3 * 1024 * 1024)
    media = upload(client, tenant, big, "video/mp4", "launch.mp4")
    assert media["size"] == len(big) and media["contentType"] == "video/mp4"
    assert media["sha256"] == hashlib.sha256(big).hexdigest()
    assert client.get(f"/v1/media/{media['id']}", headers=headers).json()["sha256"] == media["sha256"]
    served = client.get(media["url"].removeprefix(live.url))
    assert served.status_code == 200 and served.content == big
    assert client.get(media["url"].removeprefix(live.url)[:-4] + "0000").status_code == 404
    with connection():
        uploaded = [e.data for e in Event.select().where(Event.workspace == tenant["workspaceId"],
                                                           Event.type == "media.uploaded")]
    assert [e["id"] for e in uploaded] == [media["id"]]


def test_completing_twice_gives_the_same_media_and_expired_uploads_are_gone(live):
    from kit import clock
    from service.media import ops as media

    client, tenant = live.client, live.tenant()
    headers = bearer(tenant["apiKey"])
    started = client.post("/v1/media/uploads", headers=headers,
                          json={"filename": "a.png", "contentType": "image/png", "size": len(PNG)}).json()
    client.put(started["uploadUrl"], content=PNG)
    first = client.post(f"/v1/media/uploads/{started['token']}/complete", headers=headers)
    second = client.post(f"/v1/media/uploads/{started['token']}/complete", headers=headers)
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()

    late = client.post("/v1/media/uploads", headers=headers,
                       json={"filename": "b.png", "contentType": "image/png", "size": len(PNG)}).json()
    client.put(late["uploadUrl"], content=PNG)
    clock.advance(live.settings.upload_ttl_seconds + 1)
    assert client.post(f"/v1/media/uploads/{late['token']}/complete", headers=headers).status_code == 404
    with connection():
        assert media.forget_expired() >= 1
    assert not list((live.settings.data_dir / "media").glob("*.part"))


def test_posts_keep_to_the_keys_workspace_profiles_and_permission(live):
    from tests.support.factories import add_key, add_profile
    from tests.support.sandbox import connect_account

    tenant, other = live.tenant(), live.tenant()
    mine = connect_account(live.client, tenant, "telegram")
    second_profile = add_profile(tenant["workspaceId"])
    theirs = connect_account(live.client, {**tenant, "profileId": second_profile}, "telegram")
    read = add_key(tenant["workspaceId"], permission="read")
    scoped = add_key(tenant["workspaceId"], scope="profiles", profile_ids=[tenant["profileId"]])
    body = {"content": "Hi", "targets": [{"accountId": mine["id"], "options": {"chatId": "@n"}}]}
    both = {"content": "Hi", "targets": [{"accountId": mine["id"], "options": {"chatId": "@n"}},
                                         {"accountId": theirs["id"], "options": {"chatId": "@n"}}]}

    assert live.client.post("/v1/posts", headers=bearer(read), json=body).status_code == 403
    assert live.client.post("/v1/posts", headers=bearer(scoped), json=both).status_code == 403
    wide = live.client.post("/v1/posts", headers=bearer(tenant["apiKey"]), json=both).json()
    narrow = live.client.post("/v1/posts", headers=bearer(scoped), json=body).json()
    assert live.client.get(f"/v1/posts/{wide['id']}", headers=bearer(scoped)).status_code == 403
    assert [p["id"] for p in live.client.get("/v1/posts", headers=bearer(scoped)).json()["data"]] == [narrow["id"]]
    assert live.client.get(f"/v1/posts/{narrow['id']}", headers=bearer(read)).status_code == 200
    assert live.client.get(f"/v1/posts/{narrow['id']}", headers=bearer(other["apiKey"])).status_code == 404
    assert live.client.delete(f"/v1/posts/{narrow['id']}", headers=bearer(other["apiKey"])).status_code == 404
    assert live.client.get("/v1/posts", headers=bearer(other["apiKey"])).json()["data"] == []
    foreign = live.client.post("/v1/posts", headers=bearer(other["apiKey"]), json=body)
    assert _fields(foreign) == {"targets[0].accountId": "is not an account of this workspace"}


def test_a_batch_of_tiktok_posts_is_checked_within_tiktoks_creator_info_limit(live):
    from tests.support.sandbox import connect_account

    tenant = live.tenant()
    tiktok = connect_account(live.client, tenant, "tiktok")
    video = upload(live.client, tenant, MP4, "video/mp4")
    # TikTok answers 20 creator_info queries a minute; the privacy level is checked for every post.
    answers = [live.client.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={
        "content": f"clip {n}", "mediaIds": [video["id"]],
        "targets": [{"accountId": tiktok["id"], "options": {"privacyLevel": "SELF_ONLY"}}]}).status_code
        for n in range(25)]
    assert answers == [201] * 25


def test_upload_tokens_never_reach_the_logs():
    from platforms.http import redact

    token = "upl_" + "ab" * 32
    assert token not in redact(f'127.0.0.1:5000 - "PUT /v1/media/uploads/{token} HTTP/1.1" 200')
    assert "s3cr3t" not in redact("PUT https://upload.example/videos?uploadType=resumable&upload_id=s3cr3t")
