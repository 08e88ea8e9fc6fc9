"""LinkedIn's OAuth, OpenID userinfo and the versioned REST API (`LinkedIn-Version`, a version
retired after about a year): posts with their "little text" commentary, image and video uploads
(video in parts, then processed), comments, deletion, and the member's follower count."""

from __future__ import annotations

import datetime as dt
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any
from urllib.parse import unquote, urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from platforms.emulator_kit.answer import JSONResponse
from platforms.emulator_kit.core import Call, PlatformParts
from platforms.emulator_kit.errors import linkedin_error, oauth_error
from platforms.emulator_kit.oauth import OAuthServer
from platforms.emulator_kit.state import Account, followers_gained, random_token

# Rest.li 2.0's TimeIntervals object, as a query parameter.
INTERVALS = re.compile(r"\(timeRange:\(start:(?P<start>\d+),end:(?P<end>\d+)\),"
                       r"timeGranularityType:(?P<granularity>DAY|WEEK|MONTH)\)")

LI_VIDEO_MIN_BYTES = 75 * 1024
LI_VIDEO_MAX_BYTES = 500 * 1024 * 1024
LI_VIDEO_PART_BYTES = 4 * 1024 * 1024
# The sandbox's member LinkedIn app has "Share on LinkedIn", "Sign In with LinkedIn using OpenID
# Connect" and member analytics (so both sides of the follower count can be tried).
LINKEDIN_APP_SCOPES = ("openid", "profile", "email", "w_member_social", "r_member_profileAnalytics")
# Its organizations app has the Community Management API alone, which LinkedIn requires be the only
# product of its app: a consent mixing its scopes with the member products' is refused.
LINKEDIN_ORG_SCOPES = ("r_organization_admin", "rw_organization_admin", "w_organization_social",
                       "r_organization_social")
# LinkedIn keeps a version active for about a year after its release.
LINKEDIN_VERSION_LIFETIME_MONTHS = 12


def little_text_as_shown(commentary: str) -> str:
    """What LinkedIn shows of a post's commentary: escapes undone, and the text cut at the first
    unescaped reserved character (LinkedIn answers 201 all the same)."""
    shown: list[str] = []
    escaped = False
    for char in commentary:
        if escaped:
            shown.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in "|{}@[]()<>#*_~":
            break
        else:
            shown.append(char)
    return "".join(shown)


def linkedin_version_active(version: str, today: dt.date | None = None) -> bool:
    today = today or dt.datetime.now(dt.UTC).date()
    year, month = int(version[:4]), int(version[4:])
    age = (today.year - year) * 12 + (today.month - month)
    return 1 <= month <= 12 and 0 <= age <= LINKEDIN_VERSION_LIFETIME_MONTHS


# The fields of a post (https://learn.microsoft.com/linkedin/marketing/community-management/shares/posts-api).
POST_FIELDS = {"author", "commentary", "visibility", "distribution", "content", "contentLandingPage",
               "contentCallToActionLabel", "lifecycleState", "isReshareDisabledByAuthor", "reshareContext",
               "container", "adContext"}

class LinkedInEmulator(OAuthServer):
    def linkedin_parts(self) -> PlatformParts:
        return PlatformParts(self.linkedin_routes, self.new_linkedin_account, self.linkedin_credentials)

    def linkedin_routes(self) -> list[Route]:
        return [
            Route("/linkedin/oauth/v2/authorization", self.li_authorize, methods=["GET"]),
            Route("/linkedin/oauth/v2/accessToken", self.li_token, methods=["POST"]),
            Route("/linkedin/v2/userinfo", self.li_userinfo, methods=["GET"]),
            Route("/linkedin/rest/posts", self.li_post, methods=["POST"]),
            Route("/linkedin/rest/posts/{urn}", self.li_delete, methods=["DELETE"]),
            Route("/linkedin/rest/images", self.li_images, methods=["POST"]),
            Route("/linkedin/rest/videos", self.li_videos, methods=["POST"]),
            Route("/linkedin/rest/socialActions/{urn}/comments", self.li_comment, methods=["POST"]),
            Route("/linkedin/rest/videos/{urn}", self.li_video, methods=["GET"]),
            Route("/linkedin/videoupload/{video}/{part}", self.li_video_part, methods=["PUT"]),
            Route("/linkedin/rest/memberFollowersCount", self.li_followers, methods=["GET"]),
            Route("/linkedin/rest/organizationAcls", self.li_organization_acls, methods=["GET"]),
            Route("/linkedin/rest/organizations", self.li_organizations, methods=["GET"]),
            Route("/linkedin/rest/networkSizes/{urn}", self.li_network_size, methods=["GET"]),
            Route("/linkedin/rest/organizationalEntityFollowerStatistics", self.li_follower_statistics,
                  methods=["GET"]),
            Route("/linkedin/upload/{image}", self.li_upload, methods=["PUT"]),
        ]

    def new_linkedin_account(self, username: str | None = None, name: str | None = None) -> Account:
        n = self.state.next_number()
        account = Account(
            "linkedin", random_token(10), username or f"sandbox{n}@example.com", name or f"Sandbox Member {n}"
        )
        return self.state.add_account(account)

    def linkedin_credentials(self, account: Account) -> dict[str, Any]:
        # A test account is granted everything the sandbox app has.
        scope = " ".join(LINKEDIN_APP_SCOPES)
        pair = self.token_pair(account, 5184000, scope=scope)
        return {"accessToken": pair["accessToken"], "expiresAt": None, "scope": scope,
                "authorUrn": f"urn:li:person:{account.id}"}

    # -- LinkedIn ----------------------------------------------------------------------------
    async def li_authorize(self, request: Request) -> Response:
        """The consent of the member app (`linkedin`) or of the organizations app (`linkedin_org`, the
        Community Management API alone): a scope of the other app's products fails the whole consent."""
        client_id = request.query_params.get("client_id")
        client = "linkedin_org" if self.client_ok("linkedin_org", client_id) else "linkedin"
        granted = LINKEDIN_ORG_SCOPES if client == "linkedin_org" else LINKEDIN_APP_SCOPES
        refused = [s for s in request.query_params.get("scope", "").split() if s not in granted]
        redirect_uri = request.query_params.get("redirect_uri")
        if refused and redirect_uri and self.client_ok(client, client_id):
            # As LinkedIn does: the whole consent fails on a scope the app's products do not grant.
            params = {"error": "unauthorized_scope_error",
                      "error_description": f'Scope "{refused[0]}" is not authorized for your application',
                      "state": request.query_params.get("state", "")}
            return RedirectResponse(f"{redirect_uri}?{urlencode(params)}", status_code=302)
        return self.authorize(
            "linkedin", request, new_account=lambda hint: self.new_linkedin_account(hint),
            new_sibling=lambda hint: self.new_linkedin_organization(), client=client,
            # The organizations app's consent: a member who administers at least one organization.
            default_reach="2" if client == "linkedin_org" else None,
        )

    def new_linkedin_organization(self) -> Account:
        """An organization page (the sandbox consent's `reach`: the member administers N-1 of them)."""
        n = self.state.next_number()
        account = Account("linkedin", str(90000000 + n), f"sandbox-org-{n}", f"Sandbox Organization {n}")
        account.extra["organization"] = True
        return self.state.add_account(account)

    def _li_poster(self, account: Account, author: Any) -> Account | None:
        """Who a post's `author` is: the member, or an organization they administer."""
        if author == f"urn:li:person:{account.id}":
            return account
        if isinstance(author, str) and author.startswith("urn:li:organization:"):
            return self.sibling(account, author.rsplit(":", 1)[-1])
        return None

    async def li_organization_acls(self, request: Request) -> Response:
        """`GET /rest/organizationAcls?q=roleAssignee`: the member's roles on organizations."""
        async def handle(call: Call, account: Account) -> Response:
            if call.query.get("q") != "roleAssignee":
                return linkedin_error(400, "Invalid finder: q must be roleAssignee", "ILLEGAL_ARGUMENT")
            granted = str((call.token.extra if call.token else {}).get("scope", "")).split()
            if not {"r_organization_admin", "rw_organization_admin"} & set(granted):
                return linkedin_error(403, "Not enough permissions to access: organizationAcls", "ACCESS_DENIED", 100)
            role = call.query.get("role", "ADMINISTRATOR")
            elements = [
                {"roleAssignee": f"urn:li:person:{account.id}", "role": "ADMINISTRATOR", "state": "APPROVED",
                 "organization": f"urn:li:organization:{org.id}"}
                for org in self.reached(account)[1:]
            ] if role == "ADMINISTRATOR" else []
            return JSONResponse({"elements": elements, "paging": {"count": 10, "start": 0, "total": len(elements)}})

        return await self._li_rest(request, handle)

    async def li_network_size(self, request: Request) -> Response:
        """`GET /rest/networkSizes/{organization urn}?edgeType=COMPANY_FOLLOWED_BY_MEMBER`: its followers."""
        async def handle(call: Call, account: Account) -> Response:
            urn = unquote(call.request.path_params["urn"])
            if call.query.get("edgeType") != "COMPANY_FOLLOWED_BY_MEMBER":
                return linkedin_error(400, "edgeType must be COMPANY_FOLLOWED_BY_MEMBER", "ILLEGAL_ARGUMENT")
            organization = self._li_poster(account, urn) if urn.startswith("urn:li:organization:") else None
            if organization is None:
                return linkedin_error(403, "Not enough permissions to access: networkSizes", "ACCESS_DENIED", 100)
            return JSONResponse({"firstDegreeSize": organization.followers})

        return await self._li_rest(request, handle)

    async def li_follower_statistics(self, request: Request) -> Response:
        """`GET /rest/organizationalEntityFollowerStatistics?q=organizationalEntity&organizationalEntity=
        {urn}&timeIntervals=(timeRange:(start:{ms},end:{ms}),timeGranularityType:DAY)`: the followers the
        organization gained each day of the range (the sandbox's own history), within the last 12
        months. Without `timeIntervals` LinkedIn answers lifetime demographics, which the sandbox
        keeps none of."""
        async def handle(call: Call, account: Account) -> Response:
            if call.query.get("q") != "organizationalEntity":
                return linkedin_error(400, "q must be organizationalEntity", "ILLEGAL_ARGUMENT")
            urn = call.query.get("organizationalEntity", "")
            organization = self._li_poster(account, urn) if urn.startswith("urn:li:organization:") else None
            if organization is None:
                return linkedin_error(403, "Not enough permissions to access: organizationalEntityFollowerStatistics",
                                      "ACCESS_DENIED", 100)
            raw = call.query.get("timeIntervals")
            if raw is None:
                return JSONResponse({"paging": {"start": 0, "count": 10, "links": []}, "elements": [
                    {"organizationalEntity": urn, "followerCountsByFunction": [], "followerCountsBySeniority": [],
                     "followerCountsByIndustry": [], "followerCountsByGeoCountry": []}]})
            found = INTERVALS.fullmatch(raw)
            if found is None:
                return linkedin_error(400, "timeIntervals is not a valid TimeIntervals", "ILLEGAL_ARGUMENT")
            start, end, granularity = int(found["start"]), int(found["end"]), found["granularity"]
            earliest = (time.time() - 366 * 86400) * 1000
            if start >= end or start < earliest or granularity != "DAY":
                return linkedin_error(400, "timeIntervals must be days within the last 12 months", "ILLEGAL_ARGUMENT")
            elements = []
            for day_start in range(start, end, 86_400_000):
                day = dt.datetime.fromtimestamp(day_start / 1000, dt.UTC).date()
                elements.append({"organizationalEntity": urn, "timeRange": {"start": day_start,
                                                                            "end": day_start + 86_400_000},
                                 "followerGains": {"organicFollowerGain": followers_gained(organization, day),
                                                   "paidFollowerGain": 0}})
            return JSONResponse({"paging": {"start": 0, "count": len(elements), "links": []}, "elements": elements})

        return await self._li_rest(request, handle)

    async def li_organizations(self, request: Request) -> Response:
        """`GET /rest/organizations?ids=List(1,2)`: organizations by id."""
        async def handle(call: Call) -> Response:
            refused = self._li_version(call)
            if refused is not None:
                return refused
            raw = call.query.get("ids", "")
            if not (raw.startswith("List(") and raw.endswith(")")):
                return linkedin_error(400, "ids must be List(...)", "ILLEGAL_ARGUMENT")
            results = {}
            for org_id in raw[5:-1].split(","):
                org = self.state.account("linkedin", org_id)
                if org is not None and org.extra.get("organization"):
                    results[org_id] = {"id": int(org_id), "localizedName": org.display_name,
                                       "vanityName": org.username}
            return JSONResponse({"results": results, "statuses": {k: 200 for k in results}, "errors": {}})

        return await self.api("linkedin", request, handle)

    async def li_token(self, request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        client = next((name for name in ("linkedin", "linkedin_org")
                       if self.client_ok(name, form.get("client_id"), form.get("client_secret"))), None)
        if client is None:
            return oauth_error("invalid_client", "Client authentication failed", 401)
        grant = form.get("grant_type")
        if grant == "authorization_code":
            entry = self.redeem(client, form.get("code"), form.get("redirect_uri"))
            if entry is None:
                return oauth_error(
                    "invalid_request", "Unable to retrieve access token: authorization code not found"
                )
            # Share on LinkedIn grants no refresh token (programmatic refresh is for approved
            # partners): the answer carries the access token alone.
            refresh = None
            account_id, scope = entry.account_id, entry.scope
        elif grant == "refresh_token":
            found = self.state.token("linkedin", form.get("refresh_token"), ("refresh",))
            if found is None:
                return oauth_error(
                    "invalid_request", "The provided authorization grant or refresh token is invalid"
                )
            # The same refresh token again: the sandbox knows only its digest, the caller sent it.
            refresh = replace(found, value=str(form.get("refresh_token")))
            account_id, scope = found.account_id, found.extra.get("scope", "")
        else:
            return oauth_error("unsupported_grant_type", "Invalid grant_type.")
        # Each token is of the app that asked for it: the organizations app's cannot read /v2/userinfo.
        access = self.state.issue("linkedin", account_id, "access", 5184000, scope=scope, app=client)
        answer: dict[str, Any] = {"access_token": access.value, "expires_in": 5184000, "scope": scope}
        if refresh is not None:
            answer.update(refresh_token=refresh.value,
                          refresh_token_expires_in=int((refresh.expires_at or time.time()) - time.time()))
        return JSONResponse(answer)

    async def li_userinfo(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            if call.token is not None and call.token.extra.get("app") == "linkedin_org":
                # OpenID Connect is a product of the member app, never of the Community Management one.
                return linkedin_error(403, "Not enough permissions to access: userinfo.GET.NO_VERSION",
                                      "ACCESS_DENIED", 100)
            given, _, family = account.display_name.partition(" ")
            return JSONResponse(
                {
                    "sub": account.id,
                    "email_verified": True,
                    "name": account.display_name,
                    "given_name": given,
                    "family_name": family,
                    "email": account.username,
                    "locale": {"country": "US", "language": "en"},
                    "picture": f"https://media.licdn.example/{account.id}.jpg",
                }
            )

        return await self.api("linkedin", request, handle)

    async def _li_rest(self, request: Request, handle: Callable[[Call, Account], Awaitable[Response]]) -> Response:
        """A call of the versioned REST API (`/rest/...`) by a member's token: its `LinkedIn-Version`
        is checked before `handle` sees it, as LinkedIn refuses a missing or retired version first."""
        async def checked(call: Call) -> Response:
            account = call.account
            assert account is not None
            refused = self._li_version(call)
            return refused if refused is not None else await handle(call, account)

        return await self.api("linkedin", request, checked)

    def _li_version(self, call: Call) -> Response | None:
        version = call.request.headers.get("linkedin-version", "")
        if not re.fullmatch(r"\d{6}", version):
            return linkedin_error(
                400,
                "A version must be present. Please specify a version by adding the LinkedIn-Version header.",
                "VERSION_MISSING",
            )
        if not linkedin_version_active(version):
            return linkedin_error(426, f"Requested version {version} is not active", "NONEXISTENT_VERSION")
        return None

    async def li_post(self, request: Request) -> Response:
        async def handle(call: Call, account: Account) -> Response:
            body = call.body_json()
            unknown = sorted(set(body) - POST_FIELDS) if isinstance(body, dict) else ["(body)"]
            if unknown:
                # Rest.li validates a body against its schema and names a field it does not have.
                return linkedin_error(422, f"ERROR :: /{unknown[0]} :: unrecognized field found but not allowed",
                                      "UNPROCESSABLE_ENTITY")
            poster = self._li_poster(account, body.get("author"))
            granted = str((call.token.extra if call.token else {}).get("scope", "")).split()
            if poster is not None and poster is not account and "w_organization_social" not in granted:
                poster = None  # an organization's post takes the Community Management app's token
            if poster is None:
                return linkedin_error(
                    403, "Not enough permissions to post as this author", "ACCESS_DENIED", 100
                )
            text = body.get("commentary")
            if not isinstance(text, str) or len(text) > 3000 or body.get("lifecycleState") != "PUBLISHED":
                return linkedin_error(
                    422,
                    "commentary must be at most 3000 characters; lifecycleState PUBLISHED",
                    "UNPROCESSABLE_ENTITY",
                )
            content = body.get("content") or {}
            media = (content.get("media") or {}).get("id")
            images = [(i or {}).get("id") for i in (content.get("multiImage") or {}).get("images") or []]
            if media and images:
                return linkedin_error(422, "content takes media or multiImage, not both", "UNPROCESSABLE_ENTITY")
            if "multiImage" in content and not 2 <= len(images) <= 20:
                return linkedin_error(422, "multiImage takes 2 to 20 images", "UNPROCESSABLE_ENTITY")
            for urn in [media, *images] if media else images:
                upload = account.uploads.get(str(urn))
                if upload is None or not upload.get("uploaded"):
                    return linkedin_error(422, f"Media {urn} is not uploaded", "UNPROCESSABLE_ENTITY")
                if images and not str(urn).startswith("urn:li:image:"):
                    return linkedin_error(422, f"multiImage takes images only: {urn}", "UNPROCESSABLE_ENTITY")
                if str(urn).startswith("urn:li:video:") and upload.get("status") != "AVAILABLE":
                    # The emulator's reading of "post once the video is processed".
                    return linkedin_error(422, f"Video {urn} is not AVAILABLE", "UNPROCESSABLE_ENTITY")
            text = little_text_as_shown(text)
            urn = f"urn:li:share:{7100000000000000000 + self.state.serial()}"
            poster.posts[urn] = {"text": text}
            self.record(replace(call, account=poster), "post", urn, text, urn)
            return Response(status_code=201, headers={"x-restli-id": urn})

        return await self._li_rest(request, handle)

    async def li_delete(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            urn = unquote(call.request.path_params["urn"])
            # The member's post, or one of an organization they administer.
            owner = next((each for each in self.reached(account) if urn in each.posts), None)
            if owner is None:
                return linkedin_error(404, f"Post {urn} does not exist", "NOT_FOUND")
            owner.posts.pop(urn)
            self.record(replace(call, account=owner), "delete_post", urn, None, urn)
            return Response(status_code=204)

        return await self.api("linkedin", request, handle)

    async def li_images(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            if call.query.get("action") != "initializeUpload":
                return linkedin_error(400, "Unsupported action", "BAD_REQUEST")
            image_id = uuid.uuid4().hex[:16]
            base = str(call.request.url).split("/rest/images", 1)[0]
            account.uploads[f"urn:li:image:{image_id}"] = {"uploaded": False}
            return JSONResponse(
                {
                    "value": {
                        "uploadUrlExpiresAt": int(time.time() * 1000) + 3600_000,
                        "uploadUrl": f"{base}/upload/{image_id}",
                        "image": f"urn:li:image:{image_id}",
                    }
                }
            )

        return await self.api("linkedin", request, handle)

    async def li_upload(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            key = f"urn:li:image:{call.request.path_params['image']}"
            if key not in account.uploads:
                return linkedin_error(404, "Upload not found", "NOT_FOUND")
            account.uploads[key] = {"uploaded": True, "size": len(call.raw)}
            return Response(status_code=201)

        return await self.api("linkedin", request, handle)

    async def li_comment(self, request: Request) -> Response:
        """`POST /rest/socialActions/{urn}/comments`: the member comments under a post of theirs."""

        async def handle(call: Call, account: Account) -> Response:
            urn = unquote(call.request.path_params["urn"])
            body = call.body_json()
            text = (body.get("message") or {}).get("text")
            actor = self._li_poster(account, body.get("actor"))  # the member, or an organization of theirs
            if urn not in (actor or account).posts:
                return linkedin_error(404, f"Post {urn} does not exist", "NOT_FOUND")
            if actor is None or body.get("object") != urn:
                return linkedin_error(403, "actor must be the member and object the post", "ACCESS_DENIED")
            if not isinstance(text, str) or not text.strip() or len(text) > 1250:
                return linkedin_error(422, "message.text must be 1 to 1250 characters", "UNPROCESSABLE_ENTITY")
            comment_urn = f"urn:li:comment:({urn},{7200000000000000000 + self.state.serial()})"
            self.record(replace(call, account=actor), "comment", urn, text, comment_urn)
            return JSONResponse({"id": comment_urn, "object": urn, "message": {"text": text}}, status_code=201,
                                headers={"x-restli-id": comment_urn})

        return await self._li_rest(request, handle)

    async def li_videos(self, request: Request) -> Response:
        """`POST /rest/videos?action=initializeUpload` (75 KB to 500 MB, in parts of 4 MB) and
        `?action=finalizeUpload` (every part's ETag, in order)."""

        async def handle(call: Call, account: Account) -> Response:
            body = call.body_json()
            action = call.query.get("action")
            if action == "initializeUpload":
                request_body = body.get("initializeUploadRequest") or {}
                size = request_body.get("fileSizeBytes")
                if self._li_poster(account, request_body.get("owner")) is None:
                    return linkedin_error(403, "Not enough permissions to upload as this owner", "ACCESS_DENIED")
                if not isinstance(size, int) or not LI_VIDEO_MIN_BYTES <= size <= LI_VIDEO_MAX_BYTES:
                    return linkedin_error(400, "fileSizeBytes must be 75 KB to 500 MB", "BAD_REQUEST")
                video_id = uuid.uuid4().hex[:16]
                urn = f"urn:li:video:{video_id}"
                base = str(call.request.url).split("/rest/videos", 1)[0]
                parts = [(first, min(first + LI_VIDEO_PART_BYTES, size) - 1)
                         for first in range(0, size, LI_VIDEO_PART_BYTES)]
                token = random_token(12)
                account.uploads[urn] = {"size": size, "parts": {}, "count": len(parts), "token": token,
                                        "status": "WAITING_UPLOAD", "ranges": parts}
                self.record(call, "media_upload", None, None, urn)
                return JSONResponse({"value": {
                    "uploadUrlsExpireAt": int(time.time() * 1000) + 3600_000, "video": urn, "uploadToken": token,
                    "uploadInstructions": [{"uploadUrl": f"{base}/videoupload/{video_id}/{n}", "firstByte": first,
                                            "lastByte": last} for n, (first, last) in enumerate(parts)]}})
            if action == "finalizeUpload":
                request_body = body.get("finalizeUploadRequest") or {}
                upload = account.uploads.get(str(request_body.get("video")))
                if upload is None or "parts" not in upload:
                    return linkedin_error(404, "Video not found", "NOT_FOUND")
                expected = [upload["parts"].get(n) for n in range(upload["count"])]
                if request_body.get("uploadToken", "") != upload["token"] or request_body.get(
                        "uploadedPartIds") != expected or None in expected:
                    return linkedin_error(400, "uploadedPartIds must be every part's ETag, in order",
                                          "BAD_REQUEST")
                upload.update(uploaded=True, status="PROCESSING",
                              ready_at=self.now() + self.processing_seconds.get("linkedin", 0.0))
                self.record(call, "media_upload", None, None, str(request_body.get("video")), body)
                return Response(status_code=200)
            return linkedin_error(400, "Unsupported action", "BAD_REQUEST")

        return await self._li_rest(request, handle)

    async def li_video(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            urn = unquote(call.request.path_params["urn"])
            upload = account.uploads.get(urn)
            if upload is None or "parts" not in upload:
                return linkedin_error(404, "Video not found", "NOT_FOUND")
            if upload["status"] == "PROCESSING" and self.now() >= upload["ready_at"]:
                upload["status"] = "AVAILABLE"
            return JSONResponse({"id": urn, "owner": f"urn:li:person:{account.id}", "status": upload["status"]})

        return await self.api("linkedin", request, handle)

    async def li_video_part(self, request: Request) -> Response:
        async def handle(call: Call) -> Response:
            account = call.account
            assert account is not None
            urn = f"urn:li:video:{call.request.path_params['video']}"
            upload = account.uploads.get(urn)
            part = call.request.path_params["part"]
            if upload is None or "parts" not in upload or not part.isdigit() or int(part) >= upload["count"]:
                return linkedin_error(404, "Upload not found", "NOT_FOUND")
            first, last = upload["ranges"][int(part)]
            if len(call.raw) != last - first + 1:
                return linkedin_error(400, f"Part {part} must be bytes {first}-{last}", "BAD_REQUEST")
            etag = f"/ambry-video/signedId/{uuid.uuid4().hex[:12]}"
            upload["parts"][int(part)] = etag
            return Response(status_code=200, headers={"ETag": etag})

        return await self.api("linkedin", request, handle)

    async def li_followers(self, request: Request) -> Response:
        async def handle(call: Call, account: Account) -> Response:
            assert call.token is not None
            if "r_member_profileAnalytics" not in str(call.token.extra.get("scope", "")).split():
                return linkedin_error(403, "Not enough permissions to access: memberFollowersCount.GET.20240101",
                                      "ACCESS_DENIED")
            return JSONResponse(
                {
                    "paging": {"start": 0, "count": 10, "links": []},
                    "elements": [{"memberFollowersCount": account.followers}],
                }
            )

        return await self._li_rest(request, handle)
