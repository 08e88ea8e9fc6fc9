"""Publishing, deleting, followers and publish options for every platform, against the emulator."""

from __future__ import annotations

import pytest

from platforms.base import MediaItem, Rejected, RetryLater, Unsupported
from tests.support.publish import publish


def _media(sandbox, name: str, kind: str, size: int = 2048) -> MediaItem:
    sandbox.media[name] = (b"\x00" * size, kind)
    return MediaItem(f"{sandbox.base}/media/{name}", kind, size)


def test_instagram_image_post_uses_container_then_media_publish(sandbox):
    acc = sandbox.account("instagram")
    post = publish(sandbox.adapters["instagram"], acc, text="Hello IG",
                   media=[MediaItem("https://cdn.example.com/a.jpg", "image/jpeg", 10)], options={})
    assert post.url and post.url.startswith("https://www.instagram.com/p/")
    record = sandbox.sent("instagram", acc)[-1]
    assert record["kind"] == "post" and record["platformId"] == post.platform_post_id
    assert record["payload"]["container"] == {
        "image_url": "https://cdn.example.com/a.jpg",
        "caption": "Hello IG",
    }
    assert set(record["payload"]["media_publish"]) == {"creation_id"}
    # Instagram Login offers no delete: the adapter says so, and so does the platform when asked.
    assert not sandbox.adapters["instagram"].capabilities.delete_post
    with pytest.raises(Unsupported):
        sandbox.adapters["instagram"].delete_post(acc, platform_post_id=post.platform_post_id)
    with pytest.raises(Rejected):
        sandbox.adapters["instagram"]._delete_node(acc, post.platform_post_id)
    assert [r["kind"] for r in sandbox.sent("instagram", acc)] == ["post"]


def test_instagram_carousel_and_media_required(sandbox):
    acc = sandbox.account("instagram")
    items = [MediaItem(f"https://cdn.example.com/{i}.jpg", "image/jpeg", 1) for i in range(2)]
    post = publish(sandbox.adapters["instagram"], acc, text="two", media=items, options={})
    assert post.platform_post_id
    with pytest.raises(Rejected):
        publish(sandbox.adapters["instagram"], acc, text="none", media=[], options={})
    eleven = [MediaItem(f"https://cdn.example.com/{i}.jpg", "image/jpeg", 1) for i in range(11)]
    with pytest.raises(Rejected) as too_many:  # never cut to 10 silently
        publish(sandbox.adapters["instagram"], acc, text="eleven", media=eleven, options={})
    assert too_many.value.code == "too_many_items"
    assert len(sandbox.sent("instagram", acc)) == 1


def test_facebook_feed_photo_and_delete(sandbox):
    acc = sandbox.account("facebook")
    adapter = sandbox.adapters["facebook"]
    text_post = publish(adapter, acc, text="Status", media=[], options={"link": "https://example.com"})
    photo = publish(adapter, acc, text="Pic", media=[MediaItem("https://c.example/p.png", "image/png", 1)], options={})
    records = sandbox.sent("facebook", acc)
    assert records[0]["payload"] == {"message": "Status", "link": "https://example.com"}
    assert records[1]["payload"] == {"url": "https://c.example/p.png", "caption": "Pic"}
    adapter.delete_post(acc, platform_post_id=text_post.platform_post_id)
    assert sandbox.sent("facebook", acc)[-1]["kind"] == "delete_post"
    assert photo.url == f"https://www.facebook.com/{photo.platform_post_id}"


def test_a_facebook_video_post_is_known_by_its_post_id_so_reconciliation_finds_it(sandbox):
    """`POST /{page}/videos` answers the Video's id; `published_posts` lists the Page post made for it,
    whose id the Video node's `post_id` gives: that is the id kept, so a post whose answer was lost
    is matched among the recent posts."""
    acc = sandbox.account("facebook")
    adapter = sandbox.adapters["facebook"]
    video = MediaItem("https://cdn.example.com/v.mp4", "video/mp4", 10)
    post = publish(adapter, acc, text="A video", media=[video], options={})
    answered = sandbox.sent("facebook", acc)[-1]
    assert post.platform_post_id != answered["platformId"]  # the Video's id was the answer
    assert post.platform_post_id in [recent.platform_post_id for recent in adapter.recent_posts(acc)]


def test_a_facebook_video_with_images_is_refused_not_cut(sandbox):
    acc = sandbox.account("facebook")
    media = [MediaItem("https://c.example/v.mp4", "video/mp4", 10), MediaItem("https://c.example/p.png", "image/png", 1)]
    with pytest.raises(Rejected) as refused:
        publish(sandbox.adapters["facebook"], acc, text="Both", media=media, options={})
    assert refused.value.code == "media_unsupported"
    assert sandbox.sent("facebook", acc) == []


def test_tiktok_publish_options_live_and_publish(sandbox):
    acc = sandbox.account("tiktok", username="creator.one", name="Creator One")
    adapter = sandbox.adapters["tiktok"]
    options = adapter.publish_options(acc)
    assert options == {
        "platform": "tiktok",
        "nickname": "Creator One",
        "username": "creator.one",
        "avatarUrl": options["avatarUrl"],
        # The app is not audited: TikTok takes private posts only, so that is the one choice offered.
        "privacyLevels": ["SELF_ONLY"],
        "appAudited": False,
        "dailyPostingUsers": 5,
        "commentDisabled": False,
        "duetDisabled": False,
        "stitchDisabled": True,
        "maxVideoDurationSec": 600,
    }
    # Served from a domain not verified for the app: TikTok would refuse to pull it, so the bytes go up.
    video = _media(sandbox, "clip.mp4", "video/mp4", 3000)
    post = publish(adapter, acc, text="My clip", media=[video], options={"privacyLevel": "SELF_ONLY"})
    assert sandbox.sent("tiktok", acc)[-1]["payload"] == {
        "post_info": {
            "title": "My clip",
            "privacy_level": "SELF_ONLY",
            "disable_duet": False,
            "disable_comment": False,
            "disable_stitch": False,
            "video_cover_timestamp_ms": 1000,
        },
        "source_info": {"source": "FILE_UPLOAD", "video_size": 3000, "chunk_size": 3000, "total_chunk_count": 1},
    }
    assert post.platform_post_id == sandbox.sent("tiktok", acc)[-1]["platformId"]
    with pytest.raises(Rejected) as unaudited:
        publish(adapter, acc, text="x", media=[video], options={"privacyLevel": "PUBLIC_TO_EVERYONE"})
    # A private creator is not offered PUBLIC_TO_EVERYONE at all.
    assert unaudited.value.code == "privacy_level_option_mismatch"
    with pytest.raises(Rejected):
        publish(adapter, acc, text="x", media=[video], options={"privacyLevel": "EVERYONE"})
    with pytest.raises(Unsupported):
        adapter.delete_post(acc, platform_post_id=post.platform_post_id)


def test_tiktok_reconciliation_reads_videos_with_the_scope_the_connection_asked_for(sandbox):
    """`POST /v2/video/list/` needs `video.list` (scope_not_authorized otherwise, which would flag
    the account after any publish that reaches reconciliation)."""
    code, redirect_uri = sandbox.oauth("tiktok", state="scopes")
    adapter = sandbox.adapters["tiktok"]
    identity = adapter.exchange_code(code=code, redirect_uri=redirect_uri, state="scopes")
    from platforms.base import AccountContext

    acc = AccountContext(identity.platform_account_id, identity.credentials)
    assert "video.list" in identity.credentials["scope"].split(",")
    assert adapter.recent_posts(acc) == []


def test_tiktok_file_upload_chunks_follow_the_media_transfer_rules(sandbox):
    """A file of up to 64 MB goes whole; a larger one in chunks whose count is the size divided by
    the chunk size, rounded down (https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide)."""
    from platforms.tiktok.adapter import tiktok_chunks

    mb = 1024 * 1024
    assert tiktok_chunks(3 * mb, 10 * mb) == (3 * mb, 1)
    assert tiktok_chunks(7 * mb, 10 * mb) == (7 * mb, 1)
    assert tiktok_chunks(64 * mb, 10 * mb) == (64 * mb, 1)
    assert tiktok_chunks(95 * mb, 10 * mb) == (10 * mb, 9)
    acc = sandbox.account("tiktok")
    adapter = sandbox.adapters["tiktok"]
    video = _media(sandbox, "seven.mp4", "video/mp4", 7 * mb)
    post = publish(adapter, acc, text="Seven", media=[video], options={"privacyLevel": "SELF_ONLY"})
    assert sandbox.sent("tiktok", acc)[-1]["payload"]["source_info"] == {
        "source": "FILE_UPLOAD", "video_size": 7 * mb, "chunk_size": 7 * mb, "total_chunk_count": 1}
    assert post.platform_post_id
    for size, chunk, count in ((7 * mb, 10 * mb, 1), (95 * mb, 10 * mb, 10), (3 * mb, 1 * mb, 3)):
        with pytest.raises(Rejected) as refused:
            adapter._api(acc, "POST", "/v2/post/publish/video/init/", json={
                "post_info": {"title": "x", "privacy_level": "SELF_ONLY"},
                "source_info": {"source": "FILE_UPLOAD", "video_size": size, "chunk_size": chunk,
                                "total_chunk_count": count}})
        assert refused.value.code == "invalid_params"


def test_a_tiktok_video_is_read_chunk_by_chunk_never_whole(sandbox):
    """A video may be 4 GB: each chunk is read from the media with a `Range` request as it is sent."""
    mb = 1024 * 1024
    acc = sandbox.account("tiktok")
    adapter = sandbox.adapters["tiktok"]
    video = _media(sandbox, "sixtysix.mp4", "video/mp4", 66 * mb)
    post = publish(adapter, acc, text="Chunks", media=[video], options={"privacyLevel": "SELF_ONLY"})
    assert post.platform_post_id
    assert sandbox.sent("tiktok", acc)[-1]["payload"]["source_info"] == {
        "source": "FILE_UPLOAD", "video_size": 66 * mb, "chunk_size": 10 * mb, "total_chunk_count": 6}
    reads = [asked for name, asked in sandbox.media_reads if name == "sixtysix.mp4"]
    assert reads == [f"bytes={n * 10 * mb}-{n * 10 * mb + 10 * mb - 1}" for n in range(5)] + [
        f"bytes={50 * mb}-{66 * mb - 1}"]


def test_an_unaudited_tiktok_app_posts_only_from_a_private_account(sandbox):
    """Unaudited clients post SELF_ONLY from private accounts only
    (https://developers.tiktok.com/doc/content-sharing-guidelines)."""
    acc = sandbox.account("tiktok")
    adapter = sandbox.adapters["tiktok"]
    sandbox.emulator.state.account("tiktok", acc.platform_account_id).extra["private"] = False
    options = adapter.publish_options(acc)
    assert options["privacyLevels"] == [] and "private" in options["blockedReason"]
    video = _media(sandbox, "public.mp4", "video/mp4", 2000)
    with pytest.raises(Rejected) as refused:
        publish(adapter, acc, text="x", media=[video], options={"privacyLevel": "SELF_ONLY"})
    assert refused.value.code == "unaudited_client_can_only_post_to_private_accounts"
    sandbox.config.tiktok_audited = True
    try:
        assert "PUBLIC_TO_EVERYONE" in adapter.publish_options(acc)["privacyLevels"]
    finally:
        sandbox.config.tiktok_audited = False


def test_an_unaudited_tiktok_app_has_five_posting_users_a_day(sandbox):
    """https://developers.tiktok.com/doc/content-sharing-guidelines: 5 users in a 24-hour window."""
    adapter = sandbox.adapters["tiktok"]
    video = _media(sandbox, "cap.mp4", "video/mp4", 1000)
    assert sandbox.control("tiktok", "posting-users", {"dailyCap": 5}).status_code == 200
    try:
        creators = [sandbox.account("tiktok") for _ in range(6)]
        assert adapter.publish_options(creators[0])["dailyPostingUsers"] == 5
        for creator in creators[:5]:
            publish(adapter, creator, text="mine", media=[video], options={"privacyLevel": "SELF_ONLY"})
        publish(adapter, creators[0], text="again", media=[video], options={"privacyLevel": "SELF_ONLY"})
        with pytest.raises(Rejected) as capped:
            publish(adapter, creators[5], text="sixth", media=[video], options={"privacyLevel": "SELF_ONLY"})
        assert capped.value.code == "reached_active_user_cap" and "5 users" in capped.value.message
    finally:
        sandbox.control("tiktok", "posting-users", {"dailyCap": None})


def test_tiktok_pulls_only_from_a_verified_domain(sandbox):
    acc = sandbox.account("tiktok")
    adapter = sandbox.adapters["tiktok"]
    video = MediaItem("https://cdn.example.com/v.mp4", "video/mp4", 100)
    sandbox.emulator.state.account("tiktok", acc.platform_account_id).extra["private"] = False
    sandbox.config.tiktok_verified_domains = ("cdn.example.com",)
    sandbox.config.tiktok_audited = True
    try:
        assert "PUBLIC_TO_EVERYONE" in adapter.publish_options(acc)["privacyLevels"]
        post = publish(adapter, acc, text="Pulled", media=[video], options={"privacyLevel": "PUBLIC_TO_EVERYONE"})
        assert sandbox.sent("tiktok", acc)[-1]["payload"]["source_info"] == {
            "source": "PULL_FROM_URL", "video_url": "https://cdn.example.com/v.mp4"}
        assert post.platform_post_id == sandbox.sent("tiktok", acc)[-1]["platformId"]
        sandbox.config.tiktok_verified_domains = ()
        with pytest.raises(Rejected) as unverified:
            adapter._api(acc, "POST", "/v2/post/publish/video/init/", json={
                "post_info": {"title": "x", "privacy_level": "SELF_ONLY"},
                "source_info": {"source": "PULL_FROM_URL", "video_url": video.url}})
        assert unverified.value.code == "url_ownership_unverified"
    finally:
        sandbox.config.tiktok_verified_domains = ()
        sandbox.config.tiktok_audited = False


def test_youtube_resumable_upload_reply_and_delete(sandbox):
    acc = sandbox.account("youtube")
    adapter = sandbox.adapters["youtube"]
    video = _media(sandbox, "clip.mp4", "video/mp4", 4096)
    sandbox.config.youtube_audited = True
    try:
        post = publish(adapter, acc, text="Title line\nMore words", media=[video], options={"privacyStatus": "unlisted"})
    finally:
        sandbox.config.youtube_audited = False
    record = sandbox.sent("youtube", acc)[-1]
    assert record["payload"] == {
        "snippet": {"title": "Title line", "description": "Title line\nMore words", "categoryId": "22"},
        "status": {"privacyStatus": "unlisted", "selfDeclaredMadeForKids": False},
        "uploadedBytes": 4096,
    }
    assert post.url == f"https://www.youtube.com/watch?v={post.platform_post_id}"
    reply = adapter.public_reply(acc, comment_id="Ugz123", text="Thanks!")
    assert sandbox.sent("youtube", acc)[-1]["payload"] == {
        "snippet": {"parentId": "Ugz123", "textOriginal": "Thanks!"}
    }
    assert reply.startswith("Ugz123.")
    adapter.delete_post(acc, platform_post_id=post.platform_post_id)
    adapter.delete_post(acc, platform_post_id=post.platform_post_id)
    assert [r["kind"] for r in sandbox.sent("youtube", acc)] == ["post", "public_reply", "delete_post"]


def test_an_unaudited_youtube_project_uploads_private(sandbox):
    """Uploads from an API project Google has not audited are locked private
    (https://developers.google.com/youtube/v3/docs/videos/insert): the upload asks for private, and a
    public one is refused before any byte is sent."""
    acc = sandbox.account("youtube")
    adapter = sandbox.adapters["youtube"]
    assert adapter.publish_options(acc)["privacyStatuses"] == ["private"]
    video = _media(sandbox, "locked.mp4", "video/mp4", 2048)
    publish(adapter, acc, text="Mine", media=[video], options={})
    assert sandbox.sent("youtube", acc)[-1]["payload"]["status"]["privacyStatus"] == "private"
    with pytest.raises(Rejected) as refused:
        publish(adapter, acc, text="Public", media=[video], options={"privacyStatus": "public"})
    assert refused.value.code == "youtube_unaudited"
    assert len(sandbox.sent("youtube", acc)) == 1


def test_a_youtube_upload_resumes_from_where_the_session_stands(sandbox):
    """After a 308 with `Range: bytes=0-N`, only the bytes from N+1 are sent, with their
    Content-Range (https://developers.google.com/youtube/v3/guides/using_resumable_upload_protocol)."""
    acc = sandbox.account("youtube")
    adapter = sandbox.adapters["youtube"]
    video = _media(sandbox, "resumed.mp4", "video/mp4", 3000)
    opened = adapter.publish_step(acc, text="Resumed", media=[video], options={}, progress=None)
    location = opened.progress["location"]
    headers = {"Authorization": f"Bearer {acc.credentials['accessToken']}"}
    first = sandbox.client.put(location, content=sandbox.media["resumed.mp4"][0][:1000],
                               headers={**headers, "Content-Range": "bytes 0-999/3000"})
    assert first.status_code == 308 and first.headers["range"] == "bytes=0-999"
    post = adapter.publish_step(acc, text="Resumed", media=[video], options={}, progress=opened.progress)
    assert post.platform_post_id == sandbox.sent("youtube", acc)[-1]["platformId"]
    assert sandbox.sent("youtube", acc)[-1]["payload"]["uploadedBytes"] == 3000


def test_youtube_uploads_spend_their_own_daily_bucket_until_midnight_pacific(sandbox):
    """videos.insert has its own quota bucket, 100 calls a day by default and 1 a call, apart from
    the 10,000 units the other calls share (https://developers.google.com/youtube/v3/determine_quota_cost):
    past it, the upload waits for the reset instead of an hour's guess; units spent up to their limit
    do not stop an upload."""
    import datetime as dt

    from platforms.youtube.adapter import seconds_to_quota_reset

    acc = sandbox.account("youtube")
    adapter = sandbox.adapters["youtube"]
    assert adapter.publish_options(acc)["quota"]["defaultDailyUploads"] == 100
    video = _media(sandbox, "quota.mp4", "video/mp4", 1024)
    assert sandbox.control("youtube", "quota", {"dailyUnits": 0, "dailyUploads": 2}).status_code == 200
    try:
        publish(adapter, acc, text="One", media=[video], options={})
        publish(adapter, acc, text="Two", media=[video], options={})
        with pytest.raises(RetryLater) as waiting:
            publish(adapter, acc, text="Three", media=[video], options={})
        assert abs(waiting.value.delay_seconds - seconds_to_quota_reset()) < 120
    finally:
        sandbox.control("youtube", "quota", {"dailyUnits": None, "dailyUploads": None})
    assert len([r for r in sandbox.sent("youtube", acc) if r["kind"] == "post"]) == 2
    # 23:30 in Los Angeles (07:30 UTC in winter) is half an hour from the reset.
    assert seconds_to_quota_reset(dt.datetime(2026, 1, 15, 7, 30, tzinfo=dt.UTC)) == 1800


def test_x_tweet_with_image_reply_and_delete(sandbox):
    acc = sandbox.account("x")
    adapter = sandbox.adapters["x"]
    image = _media(sandbox, "pic.png", "image/png", 64)
    post = publish(adapter, acc, text="Hello X", media=[image], options={})
    payload = sandbox.sent("x", acc)[-1]["payload"]
    assert payload["text"] == "Hello X" and len(payload["media"]["media_ids"]) == 1
    reply = adapter.public_reply(acc, comment_id=post.platform_post_id, text="and more")
    assert sandbox.sent("x", acc)[-1]["payload"] == {
        "text": "and more",
        "reply": {"in_reply_to_tweet_id": post.platform_post_id},
    }
    assert reply != post.platform_post_id
    adapter.delete_post(acc, platform_post_id=post.platform_post_id)
    adapter.delete_post(acc, platform_post_id=post.platform_post_id)
    with pytest.raises(Rejected):
        publish(adapter, acc, text="x" * 281, media=[], options={})


def test_x_counts_text_its_own_way_and_never_sends_reply_settings_everyone(sandbox):
    acc = sandbox.account("x")
    adapter = sandbox.adapters["x"]
    link = "https://example.com/" + "a" * 200  # weighs 23
    assert publish(adapter, acc, text=f"{'w' * 250} {link}", media=[], options={"replySettings": "everyone"})
    assert sandbox.sent("x", acc)[-1]["payload"] == {"text": f"{'w' * 250} {link}"}  # no reply_settings
    assert publish(adapter, acc, text="中" * 140, media=[], options={"replySettings": "following"})
    assert sandbox.sent("x", acc)[-1]["payload"]["reply_settings"] == "following"
    with pytest.raises(Rejected) as caught:
        publish(adapter, acc, text="中" * 141, media=[], options={})
    assert caught.value.code == "text_too_long"
    assert len(sandbox.sent("x", acc)) == 2
    # The emulator holds X's rules whoever calls it.
    post = sandbox.client.post(f"{sandbox.base}/sandbox/x/2/tweets", headers={"Authorization": f"Bearer {acc.credentials['accessToken']}"},
                               json={"text": "hi", "reply_settings": "everyone"})
    assert post.status_code == 400
    too_long = sandbox.client.post(f"{sandbox.base}/sandbox/x/2/tweets", headers={"Authorization": f"Bearer {acc.credentials['accessToken']}"},
                                   json={"text": "👍" * 141})
    assert too_long.status_code == 403


def test_x_waits_for_the_24_hour_limit_not_the_15_minute_window(sandbox):
    acc = sandbox.account("x")
    sandbox.control("x", "faults", {"accountId": acc.platform_account_id, "failNext": 1, "status": 429,
                                    "retryAfter": 7200})
    with pytest.raises(RetryLater) as caught:
        publish(sandbox.adapters["x"], acc, text="one too many", media=[], options={})
    assert caught.value.delay_seconds == pytest.approx(7200, abs=5)


def test_linkedin_commentary_is_escaped_little_text_so_nothing_is_cut(sandbox):
    acc = sandbox.account("linkedin")
    adapter = sandbox.adapters["linkedin"]
    text = "Launch (beta) #1 with @team: a_b ~ {x} [y] <z> * | \\ done"
    publish(adapter, acc, text=text, media=[], options={})
    (record,) = sandbox.sent("linkedin", acc)
    assert record["text"] == text  # what LinkedIn shows: all of it
    assert record["payload"]["commentary"].startswith("Launch \\(beta\\) \\#1 with \\@team")
    # Unescaped, LinkedIn answers 201 and keeps only what precedes the first reserved character.
    raw = sandbox.client.post(
        f"{sandbox.base}/sandbox/linkedin/rest/posts",
        headers={"Authorization": f"Bearer {acc.credentials['accessToken']}", "LinkedIn-Version": sandbox.config.linkedin_version},
        json={**record["payload"], "commentary": text},
    )
    assert raw.status_code == 201
    assert sandbox.sent("linkedin", acc)[-1]["text"] == "Launch "


def test_linkedin_post_shape_and_delete(sandbox):
    acc = sandbox.account("linkedin")
    adapter = sandbox.adapters["linkedin"]
    post = publish(adapter, acc, text="Hello LinkedIn", media=[], options={})
    assert sandbox.sent("linkedin", acc)[-1]["payload"] == {
        "author": f"urn:li:person:{acc.platform_account_id}",
        "commentary": "Hello LinkedIn",
        "visibility": "PUBLIC",
        "distribution": {
            "feedDistribution": "MAIN_FEED",
            "targetEntities": [],
            "thirdPartyDistributionChannels": [],
        },
        "lifecycleState": "PUBLISHED",
        "isReshareDisabledByAuthor": False,
    }
    assert post.platform_post_id.startswith("urn:li:share:")
    image = _media(sandbox, "li.png", "image/png", 32)
    with_image = publish(adapter, acc, text="pic", media=[image], options={})
    assert sandbox.sent("linkedin", acc)[-1]["payload"]["content"]["media"]["id"].startswith("urn:li:image:")
    adapter.delete_post(acc, platform_post_id=post.platform_post_id)
    adapter.delete_post(acc, platform_post_id=post.platform_post_id)
    assert with_image.platform_post_id != post.platform_post_id


def test_telegram_captions_are_1024_characters_with_media_and_4096_without(sandbox):
    acc = sandbox.connected("telegram")
    adapter = sandbox.adapters["telegram"]
    photo = [MediaItem("https://cdn.example.com/p.jpg", "image/jpeg", 1000)]
    assert publish(adapter, acc, text="c" * 1024, media=photo, options={"chatId": "@sandboxnews"})
    assert publish(adapter, acc, text="t" * 4096, media=[], options={"chatId": "@sandboxnews"})
    with pytest.raises(Rejected) as caught:
        publish(adapter, acc, text="c" * 1025, media=photo, options={"chatId": "@sandboxnews"})
    assert caught.value.code == "caption_too_long"
    assert len(sandbox.sent("telegram", acc)) == 2  # refused before the call
    assert adapter.capabilities.as_dict()["postCaptionLimit"] == 1024
    # The emulator refuses a longer caption as Telegram does, whoever sends it.
    token = acc.credentials["botToken"]
    answer = sandbox.client.post(f"{sandbox.base}/sandbox/telegram/bot{token}/sendPhoto",
                                 json={"chat_id": "@sandboxnews", "photo": photo[0].url, "caption": "c" * 1025})
    assert answer.status_code == 400
    assert answer.json()["description"] == "Bad Request: message caption is too long"


def test_telegram_channel_post_and_delete(sandbox):
    acc = sandbox.connected("telegram")
    adapter = sandbox.adapters["telegram"]
    post = publish(adapter, acc, text="News", media=[], options={"chatId": "@sandboxnews"})
    assert post.url and post.url.startswith("https://t.me/sandboxnews/")
    assert sandbox.sent("telegram", acc)[-1]["payload"] == {"chat_id": "@sandboxnews", "text": "News"}
    adapter.delete_post(acc, platform_post_id=post.platform_post_id)
    adapter.delete_post(acc, platform_post_id=post.platform_post_id)
    assert [r["kind"] for r in sandbox.sent("telegram", acc)] == ["post", "delete_post"]


def test_a_telegram_post_with_several_media_is_one_album_of_all_of_them(sandbox):
    """`sendMediaGroup` takes 2-10 items (https://core.telegram.org/bots/api#sendmediagroup): every
    item reaches the channel, and deleting the post deletes the whole album."""
    acc = sandbox.connected("telegram")
    adapter = sandbox.adapters["telegram"]
    media = [MediaItem("https://cdn.example.com/a.jpg", "image/jpeg", 10),
             MediaItem("https://cdn.example.com/b.mp4", "video/mp4", 10),
             MediaItem("https://cdn.example.com/c.jpg", "image/jpeg", 10)]
    post = publish(adapter, acc, text="Three", media=media, options={"chatId": "@sandboxnews"})
    sent = sandbox.sent("telegram", acc)[-1]
    assert [(m["type"], m["media"]) for m in sent["payload"]["media"]] == [
        ("photo", "https://cdn.example.com/a.jpg"), ("video", "https://cdn.example.com/b.mp4"),
        ("photo", "https://cdn.example.com/c.jpg")]
    assert sent["payload"]["media"][0]["caption"] == "Three"
    assert post.platform_post_id == sent["platformId"] and post.platform_post_id.count(",") == 2
    adapter.delete_post(acc, platform_post_id=post.platform_post_id)
    assert sandbox.sent("telegram", acc)[-1]["kind"] == "delete_post"
    with pytest.raises(Rejected):
        publish(adapter, acc, text="Too many", media=media * 4, options={"chatId": "@sandboxnews"})
    token = acc.credentials["botToken"]
    single = sandbox.client.post(f"{sandbox.base}/sandbox/telegram/bot{token}/sendMediaGroup",
                                 json={"chat_id": "@sandboxnews", "media": [{"type": "photo", "media": "https://e.com/a"}]})
    assert single.status_code == 400


def test_meta_ads_creative(sandbox):
    acc = sandbox.account("meta_ads")
    adapter = sandbox.adapters["meta_ads"]
    post = publish(adapter, acc, text="Buy", media=[], options={"pageId": "100", "link": "https://e.com"})
    assert sandbox.sent("meta_ads", acc)[-1]["payload"] == {
        "name": "Buy",
        "object_story_spec": {"page_id": "100", "link_data": {"message": "Buy", "link": "https://e.com"}},
    }
    adapter.delete_post(acc, platform_post_id=post.platform_post_id)
    with pytest.raises(Rejected):
        publish(adapter, acc, text="x", media=[], options={})


@pytest.mark.parametrize("platform", ["instagram", "facebook", "tiktok", "youtube", "x", "linkedin"])
def test_follower_count_follows_the_control(sandbox, platform):
    acc = sandbox.account(platform)
    answer = sandbox.control(platform, "followers", {"accountId": acc.platform_account_id, "followers": 1234})
    assert answer.status_code == 200
    assert sandbox.adapters[platform].follower_count(acc) == 1234


def test_static_publish_options_and_capabilities(sandbox):
    for platform, adapter in sandbox.adapters.items():
        caps = adapter.capabilities.as_dict()
        assert {
            "dm",
            "dmTextLimit",
            "postTextLimit",
            "postMedia",
            "button",
            "buttonLabelLimit",
            "messagingWindowHours",
            "messagesPerSecond",
            "oauth",
        } <= set(caps)
        if platform != "tiktok":
            assert adapter.publish_options(sandbox.account(platform))["platform"] == platform
    assert sandbox.adapters["whatsapp"].capabilities.messages_per_second == 80
    assert sandbox.adapters["telegram"].capabilities.messages_per_second == 30
    assert sandbox.adapters["x"].capabilities.post_text_limit == 280


def test_youtube_upload_step_resumes_instead_of_uploading_twice(sandbox):
    acc = sandbox.account("youtube")
    adapter = sandbox.adapters["youtube"]
    video = _media(sandbox, "resume.mp4", "video/mp4", 2048)
    opened = adapter.publish_step(acc, text="Resumed", media=[video], options={}, progress=None)
    assert opened.progress["phase"] == "upload" and opened.repeatable
    assert sandbox.sent("youtube", acc) == []  # a session is nothing public yet
    first = adapter.publish_step(acc, text="Resumed", media=[video], options={}, progress=opened.progress)
    # The worker died before storing the answer: the step runs again and asks the session first.
    again = adapter.publish_step(acc, text="Resumed", media=[video], options={}, progress=opened.progress)
    assert first.platform_post_id == again.platform_post_id
    assert [r["platformId"] for r in sandbox.sent("youtube", acc)] == [first.platform_post_id]


def test_instagram_video_container_is_polled_step_by_step(sandbox):
    acc = sandbox.account("instagram")
    adapter = sandbox.adapters["instagram"]
    sandbox.emulator.processing_seconds["instagram"] = 90
    try:
        video = MediaItem("https://cdn.example.com/reel.mp4", "video/mp4", 10)
        step = adapter.publish_step(acc, text="Reel", media=[video], options={}, progress=None)
        polled = adapter.publish_step(acc, text="Reel", media=[video], options={}, progress=step.progress)
        assert polled.poll_after > 0  # no sleep: the next poll is the engine's, later
        assert polled.progress["container"] == step.progress["container"]  # still processing, same container
        later = adapter.publish_step(acc, text="Reel", media=[video], options={}, progress=polled.progress)
        assert later.poll_after > polled.poll_after  # backing off, up to video_poll_seconds
        sandbox.emulator.clock_offset += 90
        done = adapter.publish_step(acc, text="Reel", media=[video], options={}, progress=step.progress)
        assert sandbox.sent("instagram", acc)[-1]["payload"]["media_publish"] == {
            "creation_id": step.progress["container"]}
        # Run again (a lost answer): the container says PUBLISHED and the media is found, not published twice.
        again = adapter.publish_step(acc, text="Reel", media=[video], options={}, progress=step.progress)
        assert again.platform_post_id == done.platform_post_id
        assert len(sandbox.sent("instagram", acc)) == 1
    finally:
        sandbox.emulator.processing_seconds.pop("instagram", None)
        sandbox.emulator.clock_offset = 0.0
