"""Publishing formats at the adapter level: each step against the emulator, which holds the platform's rules."""

from __future__ import annotations

import pytest

from platforms.base import MediaItem, PartlyPublished, PublishedPost, PublishPending


def _media(sandbox, name: str, kind: str, size: int) -> MediaItem:
    sandbox.media[name] = (bytes(range(256)) * (size // 256) + b"\x00" * (size % 256), kind)
    return MediaItem(f"{sandbox.base}/media/{name}", kind, size)


def _steps(adapter, acc, text, media, options, progress=None, limit=20):
    """Run steps while each is due at once; returns the first that waits or the published post."""
    for _ in range(limit):
        step = adapter.publish_step(acc, text=text, media=media, options=options, progress=progress)
        if isinstance(step, PublishedPost) or step.poll_after > 0:
            return step
        progress = step.progress
    raise AssertionError("too many steps")


def test_x_video_chunks_wait_for_processing_then_post(sandbox, monkeypatch):
    acc = sandbox.account("x")
    adapter = sandbox.adapters["x"]
    monkeypatch.setattr(adapter, "chunk_bytes", 1000)
    video = _media(sandbox, "clip.mp4", "video/mp4", 2500)
    sandbox.emulator.processing_seconds["x"] = 60
    try:
        waiting = _steps(adapter, acc, "Clip", [video], {})
        assert isinstance(waiting, PublishPending) and waiting.progress["phase"] == "status"
        appends = [r["payload"] for r in sandbox.sent("x", acc) if "segment_index" in r["payload"]]
        assert [(a["segment_index"], a["bytes"]) for a in appends] == [(0, 1000), (1, 1000), (2, 500)]
        # Posting before STATUS says succeeded is refused by X's rule.
        early = sandbox.client.post(f"{sandbox.base}/sandbox/x/2/tweets", json={
            "text": "too soon", "media": {"media_ids": [waiting.progress["media"]]}},
            headers={"Authorization": f"Bearer {acc.credentials['accessToken']}"})
        assert early.status_code == 400
        sandbox.emulator.clock_offset += 60
        ready = adapter.publish_step(acc, text="Clip", media=[video], options={}, progress=waiting.progress)
        assert ready.progress["phase"] == "tweet" and not ready.repeatable  # the post must not run twice
        posted = adapter.publish_step(acc, text="Clip", media=[video], options={}, progress=ready.progress)
        assert [r["kind"] for r in sandbox.sent("x", acc)][-1] == "post"
        assert sandbox.sent("x", acc)[-1]["payload"]["media"] == {"media_ids": [waiting.progress["media"]]}
        assert posted.platform_post_id == sandbox.sent("x", acc)[-1]["platformId"]
    finally:
        sandbox.emulator.processing_seconds.pop("x", None)
        sandbox.emulator.clock_offset = 0.0


def test_x_refuses_a_finalize_short_of_the_declared_bytes(sandbox):
    acc = sandbox.account("x")
    headers = {"Authorization": f"Bearer {acc.credentials['accessToken']}"}
    url = f"{sandbox.base}/sandbox/x/2/media/upload"
    init = sandbox.client.post(f"{url}/initialize", headers=headers, json={
        "media_type": "video/mp4", "total_bytes": 2000, "media_category": "tweet_video"})
    media_id = init.json()["data"]["id"]
    sandbox.client.post(f"{url}/{media_id}/append", headers=headers, data={"segment_index": "0"},
                        files={"media": ("chunk", b"\x00" * 1500, "application/octet-stream")})
    skipped = sandbox.client.post(f"{url}/{media_id}/append", headers=headers, data={"segment_index": "5"},
                                  files={"media": ("c", b"\x00", "application/octet-stream")})
    assert skipped.status_code == 400
    short = sandbox.client.post(f"{url}/{media_id}/finalize", headers=headers)
    assert short.status_code == 400 and "mismatch" in short.json()["detail"]


def test_x_refuses_the_deprecated_command_form_of_a_chunked_upload(sandbox):
    """X's v2 reference replaced `command=INIT/APPEND/FINALIZE` with `/initialize`, `/{id}/append`
    and `/{id}/finalize` (https://docs.x.com/x-api/media/quickstart/media-upload-chunked)."""
    acc = sandbox.account("x")
    headers = {"Authorization": f"Bearer {acc.credentials['accessToken']}"}
    old = sandbox.client.post(f"{sandbox.base}/sandbox/x/2/media/upload", headers=headers,
                              data={"command": "INIT", "media_type": "video/mp4", "total_bytes": "2000"})
    assert old.status_code == 400 and "deprecated" in old.json()["detail"]


def test_an_x_thread_refused_halfway_stays_published_once(sandbox):
    acc = sandbox.account("x")
    adapter = sandbox.adapters["x"]
    options = {"thread": ["two", "three"]}
    head = adapter.publish_step(acc, text="one", media=[], options=options, progress=None)
    assert isinstance(head, PublishPending) and not head.repeatable
    second = adapter.publish_step(acc, text="one", media=[], options=options, progress=head.progress)
    sandbox.control("x", "faults", {"accountId": acc.platform_account_id, "failNext": 1, "status": 400})
    with pytest.raises(PartlyPublished) as caught:
        adapter.publish_step(acc, text="one", media=[], options=options, progress=second.progress)
    assert caught.value.platform_post_id == head.progress["ids"][0]
    assert "2 of 3" in caught.value.message
    assert [r["text"] for r in sandbox.sent("x", acc)] == ["one", "two"]


def test_linkedin_video_parts_finalize_and_wait_until_available(sandbox):
    acc = sandbox.account("linkedin")
    adapter = sandbox.adapters["linkedin"]
    video = _media(sandbox, "talk.mp4", "video/mp4", 100 * 1024)
    sandbox.emulator.processing_seconds["linkedin"] = 30
    try:
        waiting = _steps(adapter, acc, "Talk", [video], {})
        assert waiting.progress["phase"] == "status" and len(waiting.progress["etags"]) == 1
        headers = {"Authorization": f"Bearer {acc.credentials['accessToken']}",
                   "LinkedIn-Version": sandbox.config.linkedin_version}
        early = sandbox.client.post(f"{sandbox.base}/sandbox/linkedin/rest/posts", headers=headers, json={
            "author": f"urn:li:person:{acc.platform_account_id}", "commentary": "soon", "lifecycleState": "PUBLISHED",
            "content": {"media": {"id": waiting.progress["video"]}}})
        assert early.status_code == 422  # not AVAILABLE yet
        sandbox.emulator.clock_offset += 30
        post = _steps(adapter, acc, "Talk", [video], {}, progress=waiting.progress)
        assert isinstance(post, PublishedPost)
        assert sandbox.sent("linkedin", acc)[-1]["payload"]["content"]["media"]["id"] == waiting.progress["video"]
    finally:
        sandbox.emulator.processing_seconds.pop("linkedin", None)
        sandbox.emulator.clock_offset = 0.0
