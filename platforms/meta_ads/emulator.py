"""The Marketing API on the Graph core: the ad accounts of the user (`/me/adaccounts`) and ad
creatives (an `object_story_spec` with a Page and link data). Its login is Facebook Login."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from platforms.emulator_kit.answer import JSONResponse
from platforms.emulator_kit.core import Call, PlatformParts
from platforms.emulator_kit.errors import graph_error
from platforms.emulator_kit.state import Account
from platforms.graph.emulator import EdgeRoute, as_obj, graph_page, on_account, on_me
from platforms.graph.login_emulator import FacebookLogin


class MetaAdsEmulator(FacebookLogin):
    def meta_ads_parts(self) -> PlatformParts:
        return PlatformParts(lambda: self.facebook_login_routes("meta_ads"), self.new_meta_ads_account,
                             self.meta_ads_credentials)

    def meta_ads_graph_edges(self) -> list[EdgeRoute]:
        ads = ("meta_ads",)
        return [
            EdgeRoute(ads, "GET", ("adaccounts",), on_me, self._ads_accounts),
            EdgeRoute(ads, "POST", ("adcreatives",), on_account, self._ads_creative),
        ]

    def new_meta_ads_account(self, username: str | None = None, name: str | None = None) -> Account:
        n = self.state.next_number()
        account = Account("meta_ads", f"act_{n:015d}", username or f"{n:015d}", name or f"Sandbox Ads {n}")
        return self.state.add_account(account)

    def meta_ads_credentials(self, account: Account) -> dict[str, Any]:
        """Fresh credentials in the shape the adapter stores."""
        token = self.state.issue("meta_ads", account.id, "user", 60 * 24 * 3600, prefix="EAAA")
        return {"accessToken": token.value, "adAccountId": account.id}

    def _ads_accounts(self, call: Call, account: Account, node: str) -> Response:
        return graph_page(call.request, [
            {"id": ad.id, "account_id": ad.id.removeprefix("act_"), "name": ad.display_name}
            for ad in self.reached(account)
        ])

    # -- Marketing API -----------------------------------------------------------------------
    def _ads_creative(self, call: Call, account: Account, node: str) -> Response:
        params = call.params()
        spec = as_obj(params.get("object_story_spec"))
        if (
            not isinstance(spec, dict)
            or not spec.get("page_id")
            or not isinstance(spec.get("link_data"), dict)
        ):
            return graph_error(
                400, 100, "(#100) object_story_spec with page_id and link_data is required", 1443048
            )
        creative_id = f"{23800000000000000 + self.state.serial()}"
        text = spec["link_data"].get("message")
        account.posts[creative_id] = {"text": text, "permalink": None}
        self.record(call, "post", creative_id, text, creative_id)
        return JSONResponse({"id": creative_id})
