"""The YouTube Data API with Google's OAuth: the channel, resumable video uploads (a repeated or
resumed upload gives the same video), scheduled publishing, thumbnails, deletion, and replies to
comments."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from zoneinfo import ZoneInfo

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from platforms.emulator_kit.answer import JSONResponse
from platforms.emulator_kit.core import Call, PlatformParts, iso_z
from platforms.emulator_kit.errors import google_error, oauth_error
from platforms.emulator_kit.oauth import OAuthServer
from platforms.emulator_kit.state import Account, random_token

PACIFIC = ZoneInfo("America/Los_Angeles")  # YouTube quotas reset at midnight Pacific time


class YouTubeEmulator(OAuthServer):
    def youtube_parts(self) -> PlatformParts:
        return PlatformParts(self.youtube_routes, self.new_youtube_account, self.youtube_credentials)

    def youtube_routes(self) -> list[Route]:
        return [
            Route("/youtube/o/oauth2/v2/auth", self.yt_authorize, methods=["GET"]),
            Route("/youtube/token", self.yt_token, methods=["POST"]),
            Route("/youtube/youtube/v3/channels", self.yt_channels, methods=["GET"]),
            Route("/youtube/upload/youtube/v3/videos", self.yt_upload, methods=["POST", "PUT"]),
            Route("/youtube/youtube/v3/videos", self.yt_delete, methods=["DELETE"]),
            Route("/youtube/upload/youtube/v3/thumbnails/set", self.yt_thumbnail, methods=["POST"]),
            Route("/youtube/youtube/v3/comments", self.yt_comment, methods=["POST"]),
            Route("/youtube/youtube/v3/commentThreads", self.yt_threads, methods=["GET"]),
            Route("/youtube/quota", self.yt_quota_control, methods=["POST"]),
        ]

    def new_youtube_account(self, username: str | None = None, name: str | None = None) -> Account:
        n = self.state.next_number()
        account = Account(
            "youtube",
            f"UC{random_token(22)}",
            username or f"@sandboxchannel{n}",
            name or f"Sandbox Channel {n}",
        )
        return self.state.add_account(account)

    def youtube_credentials(self, account: Account) -> dict[str, Any]:
        return self.token_pair(account, 3599, access_prefix="ya29.", refresh_prefix="1//")

    # -- quota -------------------------------------------------------------------------------
    def _yt_spend(self, cost: int, bucket: str = "units") -> Response | None:
        """The project's daily quotas (https://developers.google.com/youtube/v3/determine_quota_cost):
        `units` (thumbnails.set, comments.insert and videos.delete 50, a list 1: 10,000 by default) and
        videos.insert's own bucket, `uploads` (1 a call: 100 by default), reset at midnight Pacific time.
        Over one → 403 `quotaExceeded`. The sandbox's project has no limit until control `quota` gives
        it one."""
        limit = self.__dict__.get(f"yt_daily_{bucket}")
        if limit is None:
            return None
        day = dt.datetime.now(PACIFIC).date().isoformat()
        spent = self.__dict__.setdefault(f"yt_spent_{bucket}", {})
        if spent.get(day, 0) + cost > limit:
            return google_error(403, "quotaExceeded", "The request cannot be completed because you have exceeded "
                                "your quota.", domain="youtube.quota")
        spent[day] = spent.get(day, 0) + cost
        return None

    async def yt_quota_control(self, request: Request) -> Response:
        """Control `POST /sandbox/youtube/quota {dailyUnits?, dailyUploads?}`: the project's daily quotas
        from now on (null: none; a field left out keeps its quota), and what today has spent."""
        try:
            body = await request.json()
        except ValueError:
            body = None
        if not isinstance(body, dict) or not {"dailyUnits", "dailyUploads"} & set(body):
            body = {"dailyUnits": "missing"}
        problem = "an integer >= 0 or null"
        for field in ("dailyUnits", "dailyUploads"):
            value = body.get(field)
            if field in body and value is not None and (
                    not isinstance(value, int) or isinstance(value, bool) or value < 0):
                return JSONResponse({"error": {"code": "validation_failed", "message": f"{field}: {problem}",
                                               "details": [{"field": field, "message": problem}]}}, status_code=422)
        for field, bucket in (("dailyUnits", "units"), ("dailyUploads", "uploads")):
            if field in body:
                self.__dict__[f"yt_daily_{bucket}"] = body[field]
        day = dt.datetime.now(PACIFIC).date().isoformat()
        return JSONResponse({
            "dailyUnits": self.__dict__.get("yt_daily_units"), "dailyUploads": self.__dict__.get("yt_daily_uploads"),
            "spentToday": self.__dict__.get("yt_spent_units", {}).get(day, 0),
            "uploadsToday": self.__dict__.get("yt_spent_uploads", {}).get(day, 0)})

    # -- YouTube -----------------------------------------------------------------------------
    async def yt_authorize(self, request: Request) -> Response:
        return self.authorize(
            "youtube", request, new_account=lambda hint: self.new_youtube_account(hint)
        )

    async def yt_token(self, request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        if not self.client_ok("youtube", form.get("client_id"), form.get("client_secret")):
            return oauth_error("invalid_client", "The OAuth client was not found.", 401)
        grant = form.get("grant_type")
        access_ttl = 3599
        if grant == "authorization_code":
            entry = self.redeem("youtube", form.get("code"), form.get("redirect_uri"))
            if entry is None:
                return oauth_error("invalid_grant", "Bad Request")
            access = self.state.issue("youtube", entry.account_id, "access", access_ttl, prefix="ya29.")
            refresh = self.state.issue(
                "youtube", entry.account_id, "refresh", None, prefix="1//", scope=entry.scope
            )
            return JSONResponse(
                {
                    "access_token": access.value,
                    "expires_in": access_ttl,
                    "refresh_token": refresh.value,
                    "scope": entry.scope,
                    "token_type": "Bearer",
                }
            )
        if grant == "refresh_token":
            old = self.state.token("youtube", form.get("refresh_token"), ("refresh",))
            if old is None:
                return oauth_error("invalid_grant", "Token has been expired or revoked.")
            access = self.state.issue("youtube", old.account_id, "access", access_ttl, prefix="ya29.")
            return JSONResponse(
                {
                    "access_token": access.value,
                    "expires_in": access_ttl,
                    "scope": old.extra.get("scope", ""),
                    "token_type": "Bearer",
                }
            )
        return oauth_error("unsupported_grant_type", "Invalid grant_type.")

    async def yt_channels(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            refused = self._yt_spend(1)
            if refused is not None:
                return refused
            if call.query.get("mine") != "true" or not call.query.get("part"):
                return google_error(
                    400, "missingRequiredParameter", "No filter selected. Expected one of: mine, id."
                )
            # The channel the grant was made for first, then the others it reaches (the consent's `reach`).
            items = [
                {
                    "kind": "youtube#channel",
                    "etag": random_token(12),
                    "id": channel.id,
                    "snippet": {"title": channel.display_name, "description": "", "customUrl": channel.username},
                    "statistics": {
                        "viewCount": "0",
                        "subscriberCount": str(channel.followers),
                        "hiddenSubscriberCount": False,
                        "videoCount": str(len(channel.posts)),
                    },
                }
                for channel in self.reached(account)
            ]
            return JSONResponse(
                {
                    "kind": "youtube#channelListResponse",
                    "pageInfo": {"totalResults": len(items), "resultsPerPage": 5},
                    "items": items,
                }
            )

        return await self.api("youtube", request, handle)

    async def yt_upload(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            if call.request.method == "POST":
                refused = self._yt_spend(1, "uploads")
                if refused is not None:
                    return refused
                if call.query.get("uploadType") != "resumable":
                    return google_error(400, "invalidValue", "Only resumable uploads are supported here.")
                metadata = call.body_json()
                title = (metadata.get("snippet") or {}).get("title")
                if not isinstance(title, str) or not 1 <= len(title) <= 100:
                    return google_error(
                        400,
                        "invalidTitle",
                        "The request metadata specifies an invalid video title.",
                        domain="youtube.video",
                    )
                refused = self._yt_publish_at(metadata.get("status") or {})
                if refused is not None:
                    return refused
                if len(str((metadata.get("snippet") or {}).get("description", ""))) > 5000:
                    return google_error(
                        400,
                        "invalidDescription",
                        "The request metadata specifies an invalid video description.",
                        domain="youtube.video",
                    )
                upload_id = random_token(30)
                account.uploads[upload_id] = {
                    "metadata": metadata,
                    "length": call.request.headers.get("x-upload-content-length"),
                }
                location = str(
                    call.request.url.replace_query_params(
                        uploadType="resumable", upload_id=upload_id, part=call.query.get("part", "snippet")
                    )
                )
                return Response(
                    status_code=200, headers={"Location": location, "X-GUploader-UploadID": upload_id}
                )
            upload = account.uploads.get(call.query.get("upload_id", ""))
            if upload is None:
                return google_error(404, "notFound", "The upload session does not exist.")
            content_range = call.request.headers.get("content-range", "")
            received = int(upload.get("received", 0))
            if content_range.startswith("bytes */"):
                # A status query of the session (how an interrupted upload resumes): done → the video;
                # else 308 with the bytes it holds (`Range: bytes=0-N`, none when it holds nothing).
                if upload.get("video_id"):
                    return self._yt_video(upload)
                return Response(status_code=308, headers={"Range": f"bytes=0-{received - 1}"} if received else {})
            if upload.get("video_id"):
                return self._yt_video(upload)  # sent again after it completed: the same video, not another
            refused = self._yt_resume(upload, content_range, call.raw)
            if refused is not None:
                return refused
            if int(upload.get("received", 0)) < int(upload["length"] or 0):
                return Response(status_code=308, headers={"Range": f"bytes=0-{int(upload['received']) - 1}"})
            video_id = random_token(11)
            upload["video_id"] = video_id
            metadata = upload["metadata"]
            if not self.config.youtube_audited:
                # An unaudited project's uploads are locked private, whatever the request asked.
                metadata = {**metadata, "status": {**(metadata.get("status") or {}), "privacyStatus": "private"}}
                upload["metadata"] = metadata
            account.posts[video_id] = {"text": (metadata.get("snippet") or {}).get("description")}
            self.record(
                call,
                "post",
                video_id,
                (metadata.get("snippet") or {}).get("description"),
                video_id,
                {**metadata, "uploadedBytes": int(upload.get("received", len(call.raw)))},
            )
            return self._yt_video(upload)

        return await self.api("youtube", request, handle)

    @staticmethod
    def _yt_resume(upload: dict[str, Any], content_range: str, raw: bytes) -> Response | None:
        """Bytes of a resumable session: the whole file, or (with `Content-Range: bytes a-b/total`) the
        part from where the session stands. Bytes that do not start there are refused."""
        received = int(upload.get("received", 0))
        total = int(upload["length"]) if upload["length"] is not None else None
        if not content_range:
            if received or (total is not None and len(raw) != total):
                return google_error(400, "badContent", "The uploaded bytes do not continue the session "
                                    f"(it holds {received} bytes; resume with Content-Range).")
            upload["received"] = len(raw)
            return None
        match = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+)", content_range)
        if (match is None or int(match[1]) != received or int(match[2]) - int(match[1]) + 1 != len(raw)
                or (total is not None and int(match[3]) != total)):
            return google_error(400, "badContent", f"Content-Range must continue the session at byte {received}.")
        upload["received"] = int(match[2]) + 1
        return None

    def _yt_publish_at(self, status: dict[str, Any]) -> Response | None:
        """`status.publishAt`: only on a private video, an ISO 8601 time in the future."""
        if "publishAt" not in status:
            return None
        try:
            moment = dt.datetime.fromisoformat(str(status["publishAt"]).replace("Z", "+00:00"))
        except ValueError:
            moment = None
        if (status.get("privacyStatus") != "private" or moment is None or moment.tzinfo is None
                or moment.timestamp() <= self.now()):
            return google_error(400, "invalidPublishAt",
                                "The request metadata specifies an invalid scheduled publishing time.",
                                domain="youtube.video")
        return None

    async def yt_thumbnail(self, request: Request) -> Response:
        """`POST /upload/youtube/v3/thumbnails/set?videoId=`: a JPEG or PNG of at most 2 MB for a video
        of the channel; setting it again replaces it."""

        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            video_id = call.query.get("videoId", "")
            if call.query.get("uploadType") not in ("media", "multipart", "resumable"):
                # Google's upload endpoints say how the bytes come (a simple upload: `media`).
                return google_error(400, "badRequest", "Upload requests must include an uploadType URL parameter "
                                    "and a URL path beginning with /upload/")
            refused = self._yt_spend(50)
            if refused is not None:
                return refused
            if video_id not in account.posts:
                return google_error(404, "videoNotFound", "The video that you are trying to update cannot be found.",
                                    domain="youtube.thumbnail")
            kind = call.request.headers.get("content-type", "").split(";")[0].strip()
            if kind not in ("image/jpeg", "image/png") or not call.raw:
                return google_error(400, "invalidImage", "The provided image content is invalid.",
                                    domain="youtube.thumbnail")
            if len(call.raw) > 2 * 1024 * 1024:
                return google_error(400, "mediaBodyTooBig", "The thumbnail image file is too large (2 MB at most).")
            account.posts[video_id]["thumbnail"] = len(call.raw)
            self.record(call, "thumbnail", video_id, None, video_id, {"videoId": video_id, "contentType": kind,
                                                                      "bytes": len(call.raw)})
            return JSONResponse({"kind": "youtube#thumbnailSetResponse", "items": [
                {"default": {"url": f"https://i.ytimg.example/vi/{video_id}/default.jpg", "width": 120,
                             "height": 90}}]})

        return await self.api("youtube", request, handle)

    @staticmethod
    def _yt_video(upload: dict[str, Any]) -> JSONResponse:
        metadata = upload["metadata"]
        return JSONResponse(
            {
                "kind": "youtube#video",
                "id": upload["video_id"],
                "snippet": metadata.get("snippet"),
                "status": {**(metadata.get("status") or {}), "uploadStatus": "uploaded"},
            }
        )

    async def yt_delete(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            video_id = call.query.get("id", "")
            refused = self._yt_spend(50)
            if refused is not None:
                return refused
            if account.posts.pop(video_id, None) is None:
                return google_error(
                    404,
                    "videoNotFound",
                    "The video that you are trying to delete cannot be found.",
                    domain="youtube.video",
                )
            self.record(call, "delete_post", video_id, None, video_id)
            return Response(status_code=204)

        return await self.api("youtube", request, handle)

    async def yt_comment(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            if "snippet" not in call.query.get("part", "").split(","):
                return google_error(400, "missingRequiredParameter", "No part parameter given: expected snippet.")
            refused = self._yt_spend(50)
            if refused is not None:
                return refused
            snippet = call.body_json().get("snippet") or {}
            parent, text = snippet.get("parentId"), snippet.get("textOriginal")
            if not parent or not isinstance(text, str) or not text:
                return google_error(
                    400,
                    "invalidCommentMetadata",
                    "The request metadata is invalid.",
                    domain="youtube.comment",
                )
            if len(text) > 10000:
                return google_error(400, "commentTextTooLong", "The comment is longer than 10,000 characters.",
                                    domain="youtube.comment")
            comment_id = f"{parent}.{random_token(22)}"
            thread = self.yt_thread(account, str(parent))
            if thread is not None:
                # A reply in a thread on the channel's videos: a conversation's message.
                thread["replies"].append(self.yt_comment_resource(
                    comment_id, account.id, account.username, account.id, text, thread["videoId"], str(parent)))
                self.state.touch(account)
                self.record(call, "comment_reply", parent, text, comment_id)
            else:
                self.record(call, "public_reply", parent, text, comment_id)
            return JSONResponse(
                {"kind": "youtube#comment", "id": comment_id, "snippet": {**snippet, "textDisplay": text}}
            )

        return await self.api("youtube", request, handle)

    # -- comment threads: conversations ------------------------------------------------------------
    def yt_thread(self, account: Account, thread_id: str) -> dict[str, Any] | None:
        return next((t for t in account.extra.get("threads", []) if t["id"] == thread_id), None)

    def yt_comment_resource(self, comment_id: str, author_channel: str, author_name: str | None, channel: str,
                            text: str, video_id: str, parent_id: str | None) -> dict[str, Any]:
        at = iso_z(self.now())
        snippet: dict[str, Any] = {
            "channelId": channel, "videoId": video_id, "textDisplay": text, "textOriginal": text,
            "authorDisplayName": author_name or author_channel, "authorChannelId": {"value": author_channel},
            "canRate": True, "viewerRating": "none", "likeCount": 0, "publishedAt": at, "updatedAt": at,
        }
        if parent_id:
            snippet["parentId"] = parent_id
        return {"kind": "youtube#comment", "etag": random_token(12), "id": comment_id, "snippet": snippet}

    def yt_add_comment(self, account: Account, *, video_id: str, author: str, handle: str | None, text: str,
                       parent_id: str | None, comment_id: str | None) -> dict[str, Any] | None:
        """A viewer's comment: a new thread on the video, or (`parent_id`) a reply in a thread; None
        when that thread is not on the channel's videos."""
        threads = account.extra.setdefault("threads", [])
        if parent_id:
            thread = self.yt_thread(account, parent_id)
            if thread is None:
                return None
            reply = self.yt_comment_resource(comment_id or f"{parent_id}.{random_token(22)}", author, handle,
                                             account.id, text, thread["videoId"], parent_id)
            thread["replies"].append(reply)
            self.state.touch(account)
            return reply
        thread_id = comment_id or "Ug" + random_token(24)
        top = self.yt_comment_resource(thread_id, author, handle, account.id, text, video_id, None)
        threads.append({"id": thread_id, "videoId": video_id, "top": top, "replies": []})
        self.state.touch(account)
        return top

    async def yt_threads(self, request: Request) -> Response:
        """`commentThreads.list`: `part` (id, snippet, replies) and exactly one filter
        (`allThreadsRelatedToChannelId` of the caller's own channel here, `videoId` or `id`);
        newest thread first (`order=time`, by the top-level comment); `maxResults` 1..100 (default
        20); `nextPageToken` leads on, given back as `pageToken` (any other token is refused)."""

        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            refused = self._yt_spend(1)  # 1 unit a page, whatever its parts
            if refused is not None:
                return refused
            query = call.query
            parts = set(query.get("part", "").split(",")) - {""}
            if not parts or not parts <= {"id", "snippet", "replies"}:
                return google_error(400, "invalidPart", "The part parameter is missing or names an unknown part.")
            filters = [name for name in ("allThreadsRelatedToChannelId", "videoId", "id") if query.get(name)]
            if len(filters) != 1:
                return google_error(400, "incompatibleParameters",
                                    "Specify exactly one of allThreadsRelatedToChannelId, videoId and id.")
            if query.get("allThreadsRelatedToChannelId") not in (None, account.id):
                return google_error(403, "forbidden", "The comment threads of that channel cannot be listed.",
                                    domain="youtube.commentThread")
            if query.get("order", "time") not in ("time", "relevance"):
                return google_error(400, "invalidValue", "The order parameter value is not supported.")
            size = query.get("maxResults", "20")
            if not size.isdigit() or not 1 <= int(size) <= 100:
                return google_error(400, "invalidValue", "maxResults must be between 1 and 100.")
            threads = list(reversed(account.extra.get("threads", [])))
            if query.get("videoId"):
                threads = [t for t in threads if t["videoId"] == query["videoId"]]
            if query.get("id"):
                wanted = set(query["id"].split(","))
                threads = [t for t in threads if t["id"] in wanted]
            start = 0
            if query.get("pageToken"):
                offset = account.extra.get("thread_tokens", {}).get(query["pageToken"])
                if offset is None:
                    return google_error(400, "invalidPageToken", "The pageToken parameter value is invalid.")
                start = int(offset)
            page = threads[start:start + int(size)]
            items = []
            for thread in page:
                item: dict[str, Any] = {"kind": "youtube#commentThread", "etag": random_token(12), "id": thread["id"]}
                if "snippet" in parts:
                    item["snippet"] = {"channelId": account.id, "videoId": thread["videoId"],
                                       "topLevelComment": thread["top"], "canReply": True,
                                       "totalReplyCount": len(thread["replies"]), "isPublic": True}
                if "replies" in parts and thread["replies"]:
                    item["replies"] = {"comments": list(reversed(thread["replies"]))}
                items.append(item)
            body: dict[str, Any] = {"kind": "youtube#commentThreadListResponse", "etag": random_token(12),
                                    "pageInfo": {"totalResults": len(items), "resultsPerPage": int(size)},
                                    "items": items}
            if start + int(size) < len(threads):
                token = random_token(20)
                account.extra.setdefault("thread_tokens", {})[token] = start + int(size)
                body["nextPageToken"] = token
            return JSONResponse(body)

        return await self.api("youtube", request, handle)
