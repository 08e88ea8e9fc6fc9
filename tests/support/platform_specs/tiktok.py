"""TikTok requests against JSON Schemas written field by field from TikTok's reference pages (TikTok
publishes no machine-readable description): Login Kit's token endpoint, the Display API's user info,
the Content Posting API (creator info, direct post and inbox init, status, the upload of a file's
chunks), the video list, and the Business Messaging API of TikTok API for Business with that API's
own authorization (`tt_user/oauth2/token/` and `refresh_token/`). Each property
cites its page (`$comment`); the headers each page requires are checked, and answers against the
envelope the pages show (`data` + `error` on open.tiktokapis.com, `code` + `message` + `request_id`
+ `data` on the Business API)."""

from __future__ import annotations

from tests.support.platform_specs import Seen
from tests.support.platform_specs.written import Endpoint, obj, text
from tests.support.platform_specs.written import check as check_written

DOCS = "https://developers.tiktok.com/doc"
TOKEN_PAGE = f"{DOCS}/oauth-user-access-token-management"
USER_INFO = f"{DOCS}/tiktok-api-v2-get-user-info"
CREATOR_INFO = f"{DOCS}/content-posting-api-reference-query-creator-info"
DIRECT_POST = f"{DOCS}/content-posting-api-reference-direct-post"
UPLOAD = f"{DOCS}/content-posting-api-reference-upload-video"
STATUS = f"{DOCS}/content-posting-api-reference-get-video-status"
TRANSFER = f"{DOCS}/content-posting-api-media-transfer-guide"
VIDEO_LIST = f"{DOCS}/tiktok-api-v2-video-list"
# TikTok API for Business (Business Messaging API): https://business-api.tiktok.com/portal/docs,
# "Business Messaging API" > "Send a message" and "Get profile information of a Business Account";
# its calls authorize with the `Access-Token` header carrying a token of the Business API's own
# authorization (`/tt_user/oauth2/token/`), not a Login Kit token (`act.`...).
BUSINESS = "https://business-api.tiktok.com/portal/docs (Business Messaging API)"
# The business grant: TikTok API for Business's authorization of a TikTok account holder, with the
# app of the business developer portal ("My Apps" > the app's Basic Information: app id, secret,
# Authorization URL `https://business-api.tiktok.com/portal/auth?app_id=...&state=...&redirect_uri=...`).
# "Obtain a short-term access token": POST /open_api/v1.3/tt_user/oauth2/token/, a JSON body of
# `client_id` (the app id), `client_secret`, `grant_type` authorization_code, `auth_code`,
# `redirect_uri`; the answer in the Business API's envelope, `data` holding `access_token` (24 hours),
# `token_type`, `scope`, `expires_in`, `refresh_token` (a year), `refresh_token_expires_in` and
# `open_id` (the `business_id` of the Business Messaging calls).
BUSINESS_TOKEN_PAGE = "https://business-api.tiktok.com/portal/docs/obtain-a-short-term-access-token/v1.3"
# "Refresh a short-term access token": POST /open_api/v1.3/tt_user/oauth2/refresh_token/ with
# `client_id`, `client_secret`, `grant_type` refresh_token and `refresh_token`; the same answer.
BUSINESS_REFRESH_PAGE = ("https://business-api.tiktok.com/portal/docs (Authentication > TikTok account holder "
                         "authorization > Refresh a short-term access token, v1.3)")

BEARER = {"authorization": r"Bearer \S+"}
JSON_UTF8 = {**BEARER, "content-type": r"application/json; charset=UTF-8"}
# A Business API token is not a Login Kit one: Login Kit's begin `act.` (TOKEN_PAGE's examples).
BUSINESS_TOKEN = {"access-token": r"(?!act\.)\S+"}

USER_FIELDS = ["open_id", "union_id", "avatar_url", "avatar_url_100", "avatar_large_url", "display_name",
               "bio_description", "profile_deep_link", "is_verified", "username", "follower_count",
               "following_count", "likes_count", "video_count"]
VIDEO_FIELDS = ["id", "create_time", "cover_image_url", "share_url", "video_description", "duration", "height",
                "width", "title", "embed_html", "embed_link", "like_count", "comment_count", "share_count",
                "view_count"]
PRIVACY = ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"]


def _fields(page: str, names: list[str]) -> dict[str, object]:
    """A `fields` query parameter: comma-separated names among the page's."""
    return text(page, pattern=f"^({'|'.join(names)})(,({'|'.join(names)}))*$")


def _open_answer(page: str, data: dict[str, object] | None = None) -> dict[str, object]:
    """open.tiktokapis.com's envelope: `data`, and `error` with `code` "ok" on success."""
    return obj(page, {
        "data": data or {"type": "object", "$comment": page},
        "error": obj(page, {"code": text(page), "message": text(page), "log_id": text(page)},
                     ("code", "message", "log_id")),
    }, ("data", "error"))


def _business_answer(page: str, data: dict[str, object]) -> dict[str, object]:
    """The Business API's envelope: `code` (0 on success), `message`, `request_id`, `data`; an
    error answers HTTP 200 with its own code and no data to speak of."""
    return {"type": "object", "$comment": page, "required": ["code", "message", "request_id"],
            "properties": {"code": {"type": "integer"}, "message": text(page), "request_id": text(page),
                           "data": {"type": "object"}},
            "if": {"properties": {"code": {"const": 0}}}, "then": {"properties": {"data": data},
                                                                     "required": ["data"]}}


BUSINESS_GRANT = obj(BUSINESS_TOKEN_PAGE, {
    "access_token": text(BUSINESS_TOKEN_PAGE, minLength=1), "token_type": text(BUSINESS_TOKEN_PAGE),
    "scope": text(BUSINESS_TOKEN_PAGE), "expires_in": {"type": "integer", "$comment": BUSINESS_TOKEN_PAGE},
    "refresh_token": text(BUSINESS_TOKEN_PAGE, minLength=1),
    "refresh_token_expires_in": {"type": "integer", "$comment": BUSINESS_TOKEN_PAGE},
    "open_id": text(BUSINESS_TOKEN_PAGE, minLength=1),
}, ("access_token", "scope", "expires_in", "refresh_token", "refresh_token_expires_in", "open_id"))


SOURCE_INFO = {
    "type": "object", "$comment": DIRECT_POST, "additionalProperties": False, "required": ["source"],
    "properties": {
        "source": text(DIRECT_POST, enum=["FILE_UPLOAD", "PULL_FROM_URL"]),
        "video_size": {"type": "integer", "minimum": 1, "$comment": DIRECT_POST},
        "chunk_size": {"type": "integer", "minimum": 1, "$comment": TRANSFER},
        # "There must be a minimum of 1 chunk and a maximum of 1000 chunks." (TRANSFER)
        "total_chunk_count": {"type": "integer", "minimum": 1, "maximum": 1000, "$comment": TRANSFER},
        "video_url": text(DIRECT_POST, pattern="^https?://"),
    },
    # FILE_UPLOAD takes the size and chunking; PULL_FROM_URL the URL (DIRECT_POST's "Required" column).
    "oneOf": [
        {"properties": {"source": {"const": "FILE_UPLOAD"}},
         "required": ["video_size", "chunk_size", "total_chunk_count"], "not": {"required": ["video_url"]}},
        {"properties": {"source": {"const": "PULL_FROM_URL"}}, "required": ["video_url"],
         "not": {"anyOf": [{"required": ["video_size"]}, {"required": ["chunk_size"]},
                           {"required": ["total_chunk_count"]}]}},
    ],
}

ENDPOINTS = [
    Endpoint("oauth.token", "POST", r"/v2/oauth/token/", TOKEN_PAGE, form=True,
             headers={"content-type": r"application/x-www-form-urlencoded.*"},
             body={"type": "object", "additionalProperties": False, "$comment": TOKEN_PAGE,
                   "required": ["client_key", "client_secret", "grant_type"],
                   "properties": {"client_key": text(TOKEN_PAGE), "client_secret": text(TOKEN_PAGE),
                                  "grant_type": text(TOKEN_PAGE, enum=["authorization_code", "refresh_token"]),
                                  "code": text(TOKEN_PAGE), "redirect_uri": text(TOKEN_PAGE),
                                  "code_verifier": text(TOKEN_PAGE), "refresh_token": text(TOKEN_PAGE)},
                   "oneOf": [{"properties": {"grant_type": {"const": "authorization_code"}},
                              "required": ["code", "redirect_uri"]},
                             {"properties": {"grant_type": {"const": "refresh_token"}},
                              "required": ["refresh_token"]}]}),
    Endpoint("user.info", "GET", r"/v2/user/info/", USER_INFO, headers=BEARER,
             query=obj(USER_INFO, {"fields": _fields(USER_INFO, USER_FIELDS)}, ("fields",)),
             answer=_open_answer(USER_INFO, obj(USER_INFO, {"user": {
                 "type": "object", "$comment": USER_INFO, "additionalProperties": False,
                 "properties": {name: {"$comment": USER_INFO} for name in USER_FIELDS}}}))),
    Endpoint("creator_info.query", "POST", r"/v2/post/publish/creator_info/query/", CREATOR_INFO,
             headers=JSON_UTF8, body={"type": "object", "maxProperties": 0, "$comment": CREATOR_INFO},
             answer=_open_answer(CREATOR_INFO, obj(CREATOR_INFO, {
                 "creator_avatar_url": text(CREATOR_INFO), "creator_username": text(CREATOR_INFO),
                 "creator_nickname": text(CREATOR_INFO),
                 "privacy_level_options": {"type": "array", "items": text(CREATOR_INFO, enum=PRIVACY)},
                 "comment_disabled": {"type": "boolean"}, "duet_disabled": {"type": "boolean"},
                 "stitch_disabled": {"type": "boolean"},
                 "max_video_post_duration_sec": {"type": "integer"}}))),
    Endpoint("video.init (direct post)", "POST", r"/v2/post/publish/video/init/", DIRECT_POST, headers=JSON_UTF8,
             body=obj(DIRECT_POST, {
                 "post_info": obj(DIRECT_POST, {
                     # "title: The video caption ... maximum length is 2200 in UTF-16 runes."
                     "title": text(DIRECT_POST, maxLength=2200),
                     "privacy_level": text(DIRECT_POST, enum=PRIVACY),
                     "disable_duet": {"type": "boolean", "$comment": DIRECT_POST},
                     "disable_comment": {"type": "boolean", "$comment": DIRECT_POST},
                     "disable_stitch": {"type": "boolean", "$comment": DIRECT_POST},
                     "video_cover_timestamp_ms": {"type": "integer", "minimum": 0, "$comment": DIRECT_POST},
                     "brand_content_toggle": {"type": "boolean", "$comment": DIRECT_POST},
                     "brand_organic_toggle": {"type": "boolean", "$comment": DIRECT_POST},
                     "is_aigc": {"type": "boolean", "$comment": DIRECT_POST},
                 }, ("privacy_level",)),
                 "source_info": SOURCE_INFO,
             }, ("post_info", "source_info")),
             answer=_open_answer(DIRECT_POST, obj(DIRECT_POST, {"publish_id": text(DIRECT_POST),
                                                               "upload_url": text(DIRECT_POST)}, ("publish_id",)))),
    Endpoint("inbox.video.init (upload)", "POST", r"/v2/post/publish/inbox/video/init/", UPLOAD, headers=JSON_UTF8,
             body=obj(UPLOAD, {"source_info": SOURCE_INFO}, ("source_info",)),
             answer=_open_answer(UPLOAD, obj(UPLOAD, {"publish_id": text(UPLOAD), "upload_url": text(UPLOAD)},
                                             ("publish_id",)))),
    Endpoint("status.fetch", "POST", r"/v2/post/publish/status/fetch/", STATUS, headers=JSON_UTF8,
             body=obj(STATUS, {"publish_id": text(STATUS, minLength=1)}, ("publish_id",)),
             answer=_open_answer(STATUS, obj(STATUS, {
                 "status": text(STATUS, enum=["PROCESSING_UPLOAD", "PROCESSING_DOWNLOAD", "SEND_TO_USER_INBOX",
                                              "PUBLISH_COMPLETE", "FAILED"]),
                 "fail_reason": text(STATUS),
                 "publicaly_available_post_id": {"type": "array", "items": {"type": "integer"}, "$comment": STATUS},
                 "uploaded_bytes": {"type": "integer"}, "downloaded_bytes": {"type": "integer"}}, ("status",)))),
    # The chunks of a FILE_UPLOAD, to the `upload_url` the init answered: each with its Content-Type
    # and `Content-Range: bytes {first}-{last}/{total}` (TRANSFER).
    Endpoint("upload chunk", "PUT", r"/upload/[^/]+|/video/", TRANSFER,
             query={"type": "object", "$comment": TRANSFER},
             headers={"content-type": r"video/(mp4|quicktime|webm)", "content-range": r"bytes \d+-\d+/\d+"},
             body={"$comment": TRANSFER}, binary=True),
    Endpoint("video.list", "POST", r"/v2/video/list/", VIDEO_LIST, headers=JSON_UTF8,
             query=obj(VIDEO_LIST, {"fields": _fields(VIDEO_LIST, VIDEO_FIELDS)}, ("fields",)),
             body=obj(VIDEO_LIST, {"cursor": {"type": "integer", "minimum": 0, "$comment": VIDEO_LIST},
                                   # "max_count: The maximum number of videos that will be returned ... max 20"
                                   "max_count": {"type": "integer", "minimum": 1, "maximum": 20,
                                                 "$comment": VIDEO_LIST}}),
             answer=_open_answer(VIDEO_LIST, obj(VIDEO_LIST, {
                 "videos": {"type": "array", "items": {"type": "object", "additionalProperties": False,
                                                       "properties": {n: {} for n in VIDEO_FIELDS}}},
                 "cursor": {"type": "integer"}, "has_more": {"type": "boolean"}}))),
    Endpoint("tt_user.oauth2.token", "POST", r"/open_api/v1\.3/tt_user/oauth2/token/", BUSINESS_TOKEN_PAGE,
             headers={"content-type": r"application/json.*"},
             body=obj(BUSINESS_TOKEN_PAGE, {
                 "client_id": text(BUSINESS_TOKEN_PAGE, minLength=1),
                 "client_secret": text(BUSINESS_TOKEN_PAGE, minLength=1),
                 "grant_type": text(BUSINESS_TOKEN_PAGE, const="authorization_code"),
                 "auth_code": text(BUSINESS_TOKEN_PAGE, minLength=1),
                 "redirect_uri": text(BUSINESS_TOKEN_PAGE, pattern="^https?://"),
             }, ("client_id", "client_secret", "grant_type", "auth_code", "redirect_uri")),
             answer=_business_answer(BUSINESS_TOKEN_PAGE, BUSINESS_GRANT)),
    Endpoint("tt_user.oauth2.refresh_token", "POST", r"/open_api/v1\.3/tt_user/oauth2/refresh_token/",
             BUSINESS_REFRESH_PAGE, headers={"content-type": r"application/json.*"},
             body=obj(BUSINESS_REFRESH_PAGE, {
                 "client_id": text(BUSINESS_REFRESH_PAGE, minLength=1),
                 "client_secret": text(BUSINESS_REFRESH_PAGE, minLength=1),
                 "grant_type": text(BUSINESS_REFRESH_PAGE, const="refresh_token"),
                 "refresh_token": text(BUSINESS_REFRESH_PAGE, minLength=1),
             }, ("client_id", "client_secret", "grant_type", "refresh_token")),
             answer=_business_answer(BUSINESS_REFRESH_PAGE, BUSINESS_GRANT)),
    Endpoint("business.get", "GET", r"/open_api/v1\.3/business/get/", BUSINESS, headers=BUSINESS_TOKEN,
             query=obj(BUSINESS, {"business_id": text(BUSINESS, minLength=1),
                                  "fields": text(BUSINESS, pattern=r"^\[.*\]$"),
                                  "start_date": text(BUSINESS), "end_date": text(BUSINESS)}, ("business_id",)),
             answer=_business_answer(BUSINESS, {"type": "object", "$comment": BUSINESS})),
    Endpoint("business.message.send", "POST", r"/open_api/v1\.3/business/message/send/", BUSINESS,
             headers={**BUSINESS_TOKEN, "content-type": r"application/json.*"},
             body=obj(BUSINESS, {
                 "business_id": text(BUSINESS, minLength=1),
                 "recipient_type": text(BUSINESS, enum=["CONVERSATION"]),
                 "recipient": text(BUSINESS, minLength=1),
                 "message_type": text(BUSINESS, enum=["TEXT", "IMAGE", "SHARE_POST"]),
                 # Text messages carry up to 6,000 characters.
                 "text": obj(BUSINESS, {"body": text(BUSINESS, minLength=1, maxLength=6000)}, ("body",)),
                 "image": obj(BUSINESS, {"media_id": text(BUSINESS)}, ("media_id",)),
                 "share_post": obj(BUSINESS, {"item_id": text(BUSINESS)}, ("item_id",)),
             }, ("business_id", "recipient_type", "recipient", "message_type"),
                 oneOf=[{"properties": {"message_type": {"const": "TEXT"}}, "required": ["text"]},
                        {"properties": {"message_type": {"const": "IMAGE"}}, "required": ["image"]},
                        {"properties": {"message_type": {"const": "SHARE_POST"}}, "required": ["share_post"]}]),
             answer=obj(BUSINESS, {"code": {"type": "integer"}, "message": text(BUSINESS),
                                   "request_id": text(BUSINESS), "data": {"type": "object"}},
                        ("code", "message", "request_id"))),
]


def check(seen: Seen) -> list[str]:
    return check_written(seen, ENDPOINTS, "TikTok")
