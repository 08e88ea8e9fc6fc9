"""LinkedIn requests against JSON Schemas written field by field from LinkedIn's reference pages
(LinkedIn publishes no machine-readable description): the OAuth token endpoint, OpenID `userinfo`,
and the versioned REST API the Community Management pages describe (posts, images, videos, comments,
organization access and lookups, follower counts). Each property cites its page (`$comment`).

Every `/rest/` call carries `LinkedIn-Version: YYYYMM` (https://learn.microsoft.com/en-us/linkedin/marketing/versioning)
and `X-Restli-Protocol-Version: 2.0.0`
(https://learn.microsoft.com/en-us/linkedin/shared/api-guide/concepts/protocol-version), and a member's
`Authorization: Bearer` token."""

from __future__ import annotations

from tests.support.platform_specs import Seen
from tests.support.platform_specs.written import Endpoint, obj, text
from tests.support.platform_specs.written import check as check_written

LEARN = "https://learn.microsoft.com/en-us/linkedin"
TOKEN_PAGE = f"{LEARN}/shared/authentication/authorization-code-flow"
USERINFO = f"{LEARN}/consumer/integrations/self-serve/sign-in-with-linkedin-v2"
POSTS = f"{LEARN}/marketing/community-management/shares/posts-api"
IMAGES = f"{LEARN}/marketing/community-management/shares/images-api"
VIDEOS = f"{LEARN}/marketing/community-management/shares/videos-api"
COMMENTS = f"{LEARN}/marketing/community-management/shares/comments-api"
ACLS = f"{LEARN}/marketing/community-management/organizations/organization-access-control-by-role"
LOOKUP = f"{LEARN}/marketing/community-management/organizations/organization-lookup-api"
FOLLOWERS = f"{LEARN}/marketing/community-management/members/follower-statistics"
ORG_FOLLOWERS = f"{LEARN}/marketing/community-management/organizations/follower-statistics"
# "timeIntervals=(timeRange:(start:1451606400000,end:1451952000000),timeGranularityType:DAY)" (ORG_FOLLOWERS)
TIME_INTERVALS = r"^\(timeRange:\(start:\d{13},end:\d{13}\),timeGranularityType:(DAY|WEEK|MONTH)\)$"

BEARER = {"authorization": r"Bearer \S+"}
REST = {**BEARER, "linkedin-version": r"20\d{2}(0[1-9]|1[0-2])(\.\d{2})?", "x-restli-protocol-version": r"2\.0\.0"}
REST_JSON = {**REST, "content-type": r"application/json.*"}
PERSON_OR_ORG = r"^urn:li:(person|organization):[A-Za-z0-9_-]+$"
ENCODED_URN = r"urn%3Ali%3A[A-Za-z]+%3A[^/]+"


def _media(page: str) -> dict[str, object]:
    return obj(page, {"id": text(page, pattern=r"^urn:li:(image|video|document):[^,]+$"),
                      "title": text(page), "altText": text(page, maxLength=4086)}, ("id",))


POST_BODY = obj(POSTS, {
    "author": text(POSTS, pattern=PERSON_OR_ORG),
    # "commentary: The user generated commentary for the post ... (up to 3000 characters)" (POSTS)
    "commentary": text(POSTS, maxLength=3000),
    "visibility": text(POSTS, enum=["CONNECTIONS", "PUBLIC", "LOGGED_IN", "CONTAINER"]),
    "distribution": obj(POSTS, {
        "feedDistribution": text(POSTS, enum=["MAIN_FEED", "NONE"]),
        "targetEntities": {"type": "array", "$comment": POSTS},
        "thirdPartyDistributionChannels": {"type": "array", "$comment": POSTS},
    }, ("feedDistribution",)),
    "lifecycleState": text(POSTS, enum=["DRAFT", "PUBLISHED", "PUBLISH_REQUESTED", "PUBLISH_FAILED"]),
    "isReshareDisabledByAuthor": {"type": "boolean", "$comment": POSTS},
    "content": {
        "type": "object", "$comment": POSTS, "additionalProperties": False, "minProperties": 1, "maxProperties": 1,
        "properties": {
            "media": _media(POSTS),
            # https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/multiimage-post-api:
            # "a minimum of 2 and a maximum of 20 images".
            "multiImage": obj(f"{LEARN}/marketing/community-management/shares/multiimage-post-api", {
                "images": {"type": "array", "minItems": 2, "maxItems": 20, "items": obj(POSTS, {
                    "id": text(POSTS, pattern=r"^urn:li:image:[^,]+$"), "altText": text(POSTS)}, ("id",))},
            }, ("images",)),
            "article": obj(POSTS, {"source": text(POSTS, pattern="^https?://"), "title": text(POSTS),
                                   "description": text(POSTS), "thumbnail": text(POSTS)}, ("source",)),
        },
    },
    "reshareContext": obj(POSTS, {"parent": text(POSTS)}, ("parent",)),
    "container": text(POSTS),
}, ("author", "visibility", "distribution", "lifecycleState"))

ENDPOINTS = [
    Endpoint("oauth.accessToken", "POST", r"/oauth/v2/accessToken", TOKEN_PAGE, form=True,
             headers={"content-type": r"application/x-www-form-urlencoded.*"},
             body={"type": "object", "additionalProperties": False, "$comment": TOKEN_PAGE,
                   "required": ["grant_type", "client_id", "client_secret"],
                   "properties": {"grant_type": text(TOKEN_PAGE, enum=["authorization_code", "refresh_token"]),
                                  "code": text(TOKEN_PAGE), "redirect_uri": text(TOKEN_PAGE),
                                  "client_id": text(TOKEN_PAGE), "client_secret": text(TOKEN_PAGE),
                                  "refresh_token": text(TOKEN_PAGE)},
                   "oneOf": [{"properties": {"grant_type": {"const": "authorization_code"}},
                              "required": ["code", "redirect_uri"]},
                             {"properties": {"grant_type": {"const": "refresh_token"}},
                              "required": ["refresh_token"]}]}),
    Endpoint("userinfo", "GET", r"/v2/userinfo", USERINFO, headers=BEARER,
             answer=obj(USERINFO, {
                 "sub": text(USERINFO), "name": text(USERINFO), "given_name": text(USERINFO),
                 "family_name": text(USERINFO), "picture": text(USERINFO), "email": text(USERINFO),
                 "email_verified": {"type": "boolean"},
                 "locale": {"$comment": USERINFO, "anyOf": [
                     {"type": "string"},
                     obj(USERINFO, {"country": text(USERINFO), "language": text(USERINFO)})]},
             }, ("sub",))),
    Endpoint("posts.create", "POST", r"/rest/posts", POSTS, headers=REST_JSON, body=POST_BODY),
    Endpoint("posts.delete", "DELETE", rf"/rest/posts/{ENCODED_URN}", POSTS, headers=REST),
    Endpoint("images.initializeUpload", "POST", r"/rest/images", IMAGES, headers=REST_JSON,
             query=obj(IMAGES, {"action": text(IMAGES, enum=["initializeUpload"])}, ("action",)),
             body=obj(IMAGES, {"initializeUploadRequest": obj(IMAGES, {
                 "owner": text(IMAGES, pattern=PERSON_OR_ORG)}, ("owner",))}, ("initializeUploadRequest",)),
             answer=obj(IMAGES, {"value": obj(IMAGES, {
                 "uploadUrlExpiresAt": {"type": "integer"}, "uploadUrl": text(IMAGES),
                 "image": text(IMAGES, pattern=r"^urn:li:image:")}, ("uploadUrl", "image"))}, ("value",))),
    Endpoint("videos.initializeUpload", "POST", r"/rest/videos", VIDEOS, headers=REST_JSON,
             query=obj(VIDEOS, {"action": text(VIDEOS, enum=["initializeUpload", "finalizeUpload"])}, ("action",)),
             body={"$comment": VIDEOS, "oneOf": [
                 obj(VIDEOS, {"initializeUploadRequest": obj(VIDEOS, {
                     "owner": text(VIDEOS, pattern=PERSON_OR_ORG),
                     "fileSizeBytes": {"type": "integer", "minimum": 1, "$comment": VIDEOS},
                     "uploadCaptions": {"type": "boolean"}, "uploadThumbnail": {"type": "boolean"},
                 }, ("owner", "fileSizeBytes"))}, ("initializeUploadRequest",)),
                 obj(VIDEOS, {"finalizeUploadRequest": obj(VIDEOS, {
                     "video": text(VIDEOS, pattern=r"^urn:li:video:"), "uploadToken": text(VIDEOS),
                     "uploadedPartIds": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                 }, ("video", "uploadToken", "uploadedPartIds"))}, ("finalizeUploadRequest",)),
             ]}),
    Endpoint("videos.get", "GET", rf"/rest/videos/{ENCODED_URN}", VIDEOS, headers=REST),
    # The upload URL the initialize answered: the file's bytes with the member's token (IMAGES, VIDEOS).
    Endpoint("images.upload", "PUT", r"/upload/[^/]+|/dms-uploads/.*|/mediaUpload/.*", IMAGES,
             query={"type": "object", "$comment": IMAGES}, headers=BEARER, body={"$comment": IMAGES}, binary=True),
    # Each part of a video to the part's own pre-signed URL, with its bytes as
    # `application/octet-stream` (VIDEOS, "Upload the Video").
    Endpoint("videos.uploadPart", "PUT", r"/videoupload/.*|/dms-uploads/.*", VIDEOS,
             query={"type": "object", "$comment": VIDEOS}, headers={"content-type": r"application/octet-stream"},
             body={"$comment": VIDEOS}, binary=True),
    Endpoint("comments.create", "POST", rf"/rest/socialActions/{ENCODED_URN}/comments", COMMENTS,
             headers=REST_JSON,
             body=obj(COMMENTS, {"actor": text(COMMENTS, pattern=PERSON_OR_ORG),
                                 "object": text(COMMENTS, pattern=r"^urn:li:(share|ugcPost|activity):"),
                                 "parentComment": text(COMMENTS),
                                 "message": obj(COMMENTS, {"text": text(COMMENTS, minLength=1)}, ("text",)),
                                 "content": {"type": "array", "$comment": COMMENTS}},
                      ("actor", "object", "message"))),
    Endpoint("organizationAcls.roleAssignee", "GET", r"/rest/organizationAcls", ACLS, headers=REST,
             query=obj(ACLS, {"q": text(ACLS, enum=["roleAssignee"]),
                              "role": text(ACLS, enum=["ADMINISTRATOR", "DIRECT_SPONSORED_CONTENT_POSTER",
                                                       "RECRUITING_POSTER", "LEAD_GEN_FORMS_MANAGER",
                                                       "ANALYST", "CURATOR", "CONTENT_ADMINISTRATOR"]),
                              "state": text(ACLS, enum=["APPROVED", "REJECTED", "REQUESTED", "REVOKED"]),
                              "start": text(ACLS, pattern=r"^\d+$"), "count": text(ACLS, pattern=r"^\d+$")},
                      ("q",))),
    Endpoint("organizations.batchGet", "GET", r"/rest/organizations", LOOKUP, headers=REST,
             query=obj(LOOKUP, {"ids": text(LOOKUP, pattern=r"^List\([^()]+\)$")}, ("ids",))),
    Endpoint("networkSizes.get", "GET", rf"/rest/networkSizes/{ENCODED_URN}", LOOKUP, headers=REST,
             query=obj(LOOKUP, {"edgeType": text(LOOKUP, enum=["COMPANY_FOLLOWED_BY_MEMBER"])}, ("edgeType",)),
             answer=obj(LOOKUP, {"firstDegreeSize": {"type": "integer", "minimum": 0}}, ("firstDegreeSize",))),
    Endpoint("organizationalEntityFollowerStatistics.timeBound", "GET", r"/rest/organizationalEntityFollowerStatistics",
             ORG_FOLLOWERS, headers=REST,
             query=obj(ORG_FOLLOWERS, {"q": text(ORG_FOLLOWERS, enum=["organizationalEntity"]),
                                       "organizationalEntity": text(ORG_FOLLOWERS,
                                                                    pattern=r"^urn:li:organization(Brand)?:\d+$"),
                                       "timeIntervals": text(ORG_FOLLOWERS, pattern=TIME_INTERVALS)},
                       ("q", "organizationalEntity")),
             answer=obj(ORG_FOLLOWERS, {
                 "paging": {"type": "object", "$comment": ORG_FOLLOWERS},
                 "elements": {"type": "array", "$comment": ORG_FOLLOWERS, "items": {
                     "type": "object", "$comment": ORG_FOLLOWERS, "properties": {
                         "organizationalEntity": text(ORG_FOLLOWERS),
                         "timeRange": obj(ORG_FOLLOWERS, {"start": {"type": "integer"}, "end": {"type": "integer"}},
                                          ("start", "end")),
                         "followerGains": obj(ORG_FOLLOWERS, {
                             "organicFollowerGain": {"type": "integer", "minimum": 0},
                             "paidFollowerGain": {"type": "integer", "minimum": 0}},
                             ("organicFollowerGain", "paidFollowerGain"))}}}}, ("elements",))),
    Endpoint("memberFollowersCount.me", "GET", r"/rest/memberFollowersCount", FOLLOWERS, headers=REST,
             query=obj(FOLLOWERS, {"q": text(FOLLOWERS, enum=["me", "dateRange"]),
                                   "dateRange": text(FOLLOWERS)}, ("q",))),
]


def check(seen: Seen) -> list[str]:
    return check_written(seen, ENDPOINTS, "LinkedIn")
