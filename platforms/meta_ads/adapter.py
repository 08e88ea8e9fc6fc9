"""Meta Ads through the Marketing API, connected with Facebook Login (`ads_management`).

The account is the first ad account of the user (`GET /{v}/me/adaccounts`), id `act_<n>`.
What "publishing" means here: an ad creative (`POST /{v}/act_<n>/adcreatives` with an
`object_story_spec.link_data` on a Page given as `options.pageId`), which the advertiser then uses
in ads; deleting removes the creative (`DELETE /{v}/{creative-id}`). No DMs, no comments, no
followers (an ad account has none)."""

from __future__ import annotations

from typing import Any, ClassVar

from platforms.base import (
    AccountContext,
    Capabilities,
    ConnectedIdentity,
    GrantChoice,
    MediaItem,
    PublishedPost,
    ReauthRequired,
    Rejected,
)
from platforms.graph.adapter import FacebookLogin
from platforms.meta_ads.rules import MetaAdsPostRules


class MetaAdsAdapter(FacebookLogin):
    lapsing_credentials: ClassVar[tuple[str, ...]] = ("expiresAt",)
    platform = "meta_ads"
    display_name = "Meta Ads"
    post_rules = MetaAdsPostRules()
    scopes = ("ads_management", "ads_read", "business_management", "pages_show_list")
    capabilities = Capabilities(
        post_text_limit=2200, post_media="optional", publish=True, delete_post=True, oauth=True
    )

    def exchange_code(self, *, code: str, redirect_uri: str, state: str = "") -> ConnectedIdentity:
        token, expires = self._user_token(code=code, redirect_uri=redirect_uri)
        accounts = self._graph("GET", "me/adaccounts", token, params={"fields": "id,account_id,name"})
        if not accounts.get("data"):
            raise Rejected("this Facebook user has no ad account", "no_ad_account")
        ad = accounts["data"][0]
        credentials = {"accessToken": token, "expiresAt": expires, "adAccountId": str(ad["id"])}
        return ConnectedIdentity(
            str(ad["id"]), str(ad.get("account_id") or ad["id"]), ad.get("name"), credentials
        )

    def exchange_code_choices(self, *, code: str, redirect_uri: str, state: str = "") -> list[GrantChoice]:
        """Every ad account the person can use (`GET /me/adaccounts`), each an account of its own
        sharing the person's token."""
        token, expires = self._user_token(code=code, redirect_uri=redirect_uri)
        accounts = self._graph_all("me/adaccounts", token, params={"fields": "id,account_id,name"})
        if not accounts:
            raise Rejected("this Facebook user has no ad account", "no_ad_account")
        return [
            GrantChoice("ad_account", ConnectedIdentity(
                str(ad["id"]), str(ad.get("account_id") or ad["id"]), ad.get("name"),
                {"accessToken": token, "expiresAt": expires, "adAccountId": str(ad["id"])},
            ))
            for ad in accounts
        ]

    def refresh_credentials(self, account: AccountContext) -> dict[str, Any]:
        """None: Meta documents no renewal of a long-lived user token by exchanging it again
        (https://developers.facebook.com/docs/facebook-login/guides/access-tokens/get-long-lived).
        The 60-day token is a lapsing credential: in the week before it lapses the renewal kind
        flags the account `needsReauth` while the token still works, so a person reconnects it."""
        raise ReauthRequired("Meta's ad account token lapses 60 days after it was granted and Meta offers no "
                             "renewal of it: a person must connect the account again before then")

    def publish_options(self, account: AccountContext) -> dict[str, Any]:
        return {"platform": self.platform, "creativeTypes": ["link_data"], "required": ["pageId", "link"]}

    def publish_post(
        self, account: AccountContext, *, text: str, media: list[MediaItem], options: dict[str, Any]
    ) -> PublishedPost:
        page_id = options.get("pageId") or account.credentials.get("pageId")
        link = options.get("link")
        if not page_id or not link:
            raise Rejected("a Meta Ads creative needs options.pageId and options.link", "missing_field")
        link_data: dict[str, Any] = {"message": text, "link": link}
        images = [m for m in media if m.is_image]
        if images:
            link_data["picture"] = images[0].url
        body = {
            "name": str(options.get("name") or text[:80] or "Switchboard creative"),
            "object_story_spec": {"page_id": str(page_id), "link_data": link_data},
        }
        answer = self._graph(
            "POST",
            f"{account.platform_account_id}/adcreatives",
            self._token(account),
            secrets=account.secrets(),
            json=body,
        )
        return PublishedPost(str(answer["id"]), None)

    def delete_post(self, account: AccountContext, *, platform_post_id: str) -> None:
        try:
            self._graph("DELETE", platform_post_id, self._token(account), secrets=account.secrets())
        except Rejected as failure:
            if failure.code != "100.33":
                raise
