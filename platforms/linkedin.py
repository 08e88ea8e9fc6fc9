"""LinkedIn: OAuth 2.0 (`www.linkedin.com/oauth/v2/authorization`, `POST /oauth/v2/accessToken`),
OpenID `GET /v2/userinfo`, the versioned Posts API (`POST /rest/posts`, id in `x-restli-id`;
`DELETE /rest/posts/{urn}`), Images API (`POST /rest/images?action=initializeUpload` then `PUT`),
and `GET /rest/memberFollowersCount?q=me`. Posts are made as the member (`urn:li:person:<sub>`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx2

from platforms._common import BaseAdapter, expires_at, merge_refreshed
from platforms.base import (
    AccountContext,
    Capabilities,
    ConnectedIdentity,
    MediaItem,
    PlatformFailure,
    PublishedPost,
    ReauthRequired,
    Rejected,
    RetryLater,
    Unsupported,
)
from platforms.http import generic_failure, json_body, redact, retry_after_seconds

# LinkedIn reads `commentary` as "little text": these characters are markup (mentions, hashtags,
# templates), and an unescaped one cuts the post there while the API still answers 201.
LITTLE_TEXT_RESERVED = frozenset("\\|{}@[]()<>#*_~")


def escape_little_text(text: str) -> str:
    return "".join(f"\\{char}" if char in LITTLE_TEXT_RESERVED else char for char in text)


# The "Share on LinkedIn" product with OpenID Connect sign-in: what an ordinary app is granted.
# (`r_member_social` is closed to new apps; asking for it fails the whole consent.)
SCOPES = ("openid", "profile", "w_member_social")
# Member analytics (the Community Management API), granted to approved apps only: without it the
# follower count is not available, and is not asked for.
ANALYTICS_SCOPE = "r_member_profileAnalytics"


def linkedin_classify(response: httpx2.Response, secrets: list[str]) -> PlatformFailure:
    body = json_body(response)
    status = response.status_code
    if not isinstance(body, dict):
        return generic_failure(response, secrets)
    if isinstance(body.get("error"), str):
        message = redact(str(body.get("error_description") or body["error"]), secrets)
        if body["error"] in ("invalid_grant", "invalid_request"):
            return ReauthRequired(message)
        return Rejected(message, str(body["error"]))
    message = redact(str(body.get("message") or "LinkedIn refused the request"), secrets)
    if status == 429:
        return RetryLater(message, retry_after_seconds(response.headers, 60.0))
    if status == 401:
        return ReauthRequired(message)
    if status >= 500:
        return RetryLater(message, 30.0)
    return Rejected(message, str(body.get("code") or body.get("serviceErrorCode") or status))


class LinkedInAdapter(BaseAdapter):
    platform = "linkedin"
    classify = staticmethod(linkedin_classify)
    capabilities = Capabilities(
        post_text_limit=3000,
        post_media="optional",
        max_media=1,
        video_posts=False,
        publish=True,
        delete_post=True,
        oauth=True,
        followers=True,
    )

    def _headers(self, account: AccountContext) -> dict[str, str]:
        token = account.credentials.get("accessToken")
        if not isinstance(token, str) or not token:
            raise ReauthRequired("the account has no access token")
        return {
            "Authorization": f"Bearer {token}",
            "LinkedIn-Version": self.config.linkedin_version,
            "X-Restli-Protocol-Version": "2.0.0",
        }

    def _api(self, account: AccountContext, method: str, path: str, **kwargs: Any) -> httpx2.Response:
        return self._call(
            method,
            f"{self.endpoints.api}{path}",
            headers=self._headers(account),
            secrets=account.secrets(),
            **kwargs,
        )

    # -- connection ------------------------------------------------------------------------
    def authorize_url(self, *, state: str, redirect_uri: str) -> str:
        client = self.config.oauth_client(self.platform)
        return self._authorize(
            "/oauth/v2/authorization",
            {
                "response_type": "code",
                "client_id": client.client_id,
                "redirect_uri": redirect_uri,
                "state": state,
                "scope": " ".join(SCOPES),
            },
        )

    def _token(self, form: dict[str, str], secrets: list[str]) -> dict[str, Any]:
        client = self.config.oauth_client(self.platform)
        response = self._call(
            "POST",
            f"{self.endpoints.oauth}/oauth/v2/accessToken",
            data={**form, "client_id": client.client_id, "client_secret": client.client_secret},
            secrets=[client.client_secret, *secrets],
        )
        return json_body(response) or {}

    def exchange_code(self, *, code: str, redirect_uri: str, state: str = "") -> ConnectedIdentity:
        answer = self._token(
            {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}, [code]
        )
        credentials: dict[str, Any] = {
            "accessToken": answer["access_token"],
            "refreshToken": answer.get("refresh_token"),
            "expiresAt": expires_at(answer.get("expires_in")),
            "refreshExpiresAt": expires_at(answer.get("refresh_token_expires_in")),
            "scope": answer.get("scope"),
        }
        me = json_body(self._api(AccountContext("", credentials), "GET", "/v2/userinfo")) or {}
        sub = str(me["sub"])
        credentials["authorUrn"] = f"urn:li:person:{sub}"
        return ConnectedIdentity(sub, me.get("email"), me.get("name"), credentials)

    def refresh_credentials(self, account: AccountContext) -> dict[str, Any]:
        refresh = account.credentials.get("refreshToken")
        if not isinstance(refresh, str) or not refresh:
            raise ReauthRequired("the account has no refresh token")
        answer = self._token({"grant_type": "refresh_token", "refresh_token": refresh}, account.secrets())
        return merge_refreshed(account.credentials, answer)

    # -- reading ---------------------------------------------------------------------------
    def follower_count(self, account: AccountContext) -> int:
        granted = str(account.credentials.get("scope") or "").replace(",", " ").split()
        if ANALYTICS_SCOPE not in granted:
            raise Unsupported(f"LinkedIn shares a member's follower count only with apps granted {ANALYTICS_SCOPE}")
        answer = json_body(self._api(account, "GET", "/rest/memberFollowersCount", params={"q": "me"})) or {}
        elements = answer.get("elements") or [{}]
        return int(elements[0].get("memberFollowersCount", 0))

    def publish_options(self, account: AccountContext) -> dict[str, Any]:
        return {"platform": self.platform, "visibility": ["PUBLIC", "CONNECTIONS"], "textLimit": 3000}

    # -- publishing ------------------------------------------------------------------------
    def _author(self, account: AccountContext) -> str:
        return str(account.credentials.get("authorUrn") or f"urn:li:person:{account.platform_account_id}")

    def _upload_image(self, account: AccountContext, item: MediaItem) -> str:
        init = (
            json_body(
                self._api(
                    account,
                    "POST",
                    "/rest/images",
                    params={"action": "initializeUpload"},
                    json={"initializeUploadRequest": {"owner": self._author(account)}},
                )
            )
            or {}
        )
        value = init["value"]
        try:
            source = self.http.client.get(item.url)
        except httpx2.TransportError:
            raise RetryLater("the media could not be read", 30.0) from None
        if not source.is_success:
            raise Rejected(f"the media could not be read (HTTP {source.status_code})", "media_unreadable")
        self.http.request(
            "PUT",
            str(value["uploadUrl"]),
            classify=linkedin_classify,
            secrets=account.secrets(),
            content=source.content,
            headers={**self._headers(account), "Content-Type": item.content_type},
        )
        return str(value["image"])

    def publish_post(
        self, account: AccountContext, *, text: str, media: list[MediaItem], options: dict[str, Any]
    ) -> PublishedPost:
        if any(m.is_video for m in media):
            raise Rejected(
                "video posts to LinkedIn are not supported yet (text and one image)", "media_unsupported"
            )
        body: dict[str, Any] = {
            "author": self._author(account),
            "commentary": escape_little_text(text),
            "visibility": options.get("visibility", "PUBLIC"),
            "distribution": {
                "feedDistribution": "MAIN_FEED",
                "targetEntities": [],
                "thirdPartyDistributionChannels": [],
            },
            "lifecycleState": "PUBLISHED",
            "isReshareDisabledByAuthor": False,
        }
        if media:
            body["content"] = {"media": {"id": self._upload_image(account, media[0]), "altText": ""}}
        response = self._api(account, "POST", "/rest/posts", json=body)
        urn = response.headers.get("x-restli-id") or (json_body(response) or {}).get("id")
        if not urn:
            raise RetryLater("LinkedIn gave no post id", 30.0)
        return PublishedPost(str(urn), f"https://www.linkedin.com/feed/update/{urn}")

    def delete_post(self, account: AccountContext, *, platform_post_id: str) -> None:
        try:
            self._api(account, "DELETE", f"/rest/posts/{quote(platform_post_id, safe='')}")
        except Rejected as failure:
            if failure.code not in ("404", "NOT_FOUND"):
                raise
