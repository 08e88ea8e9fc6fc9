"""Facebook Login as the emulator answers it, which Facebook Pages and the Marketing API (Meta Ads)
share: the consent dialog and the token endpoint."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from platforms.emulator_kit.answer import JSONResponse
from platforms.emulator_kit.errors import graph_error
from platforms.emulator_kit.oauth import OAuthServer


class FacebookLogin(OAuthServer):
    """Facebook Login, for Pages (`facebook`) and the Marketing API (`meta_ads`) alike."""

    def facebook_login_routes(self, platform: str) -> list[Route]:
        return [
            Route(f"/{platform}/{{version}}/dialog/oauth", self.fb_authorize, methods=["GET"]),
            Route(f"/{platform}/{{version}}/oauth/access_token", self.fb_token, methods=["GET", "POST"]),
        ]

    async def fb_authorize(self, request: Request) -> Response:
        platform = self.platform_of(request)
        return self.authorize(
            platform, request, new_account=lambda hint: self.new_account(platform, hint)
        )

    async def fb_token(self, request: Request) -> Response:
        platform = self.platform_of(request)
        params = dict(request.query_params)
        if request.method == "POST":
            params.update({k: str(v) for k, v in (await request.form()).items()})
        if not self.client_ok(platform, params.get("client_id"), params.get("client_secret")):
            return graph_error(400, 100, "Error validating client secret.")
        ttl_short, ttl_long = 2 * 3600, 60 * 24 * 3600
        if params.get("grant_type") == "fb_exchange_token":
            old = self.state.token(platform, params.get("fb_exchange_token"), ("user",))
            if old is None:
                return graph_error(400, 190, "Error validating access token: Session has expired.", 463)
            token = self.state.issue(platform, old.account_id, "user", ttl_long, prefix="EAAL")
            return JSONResponse({"access_token": token.value, "token_type": "bearer", "expires_in": ttl_long})
        entry = self.redeem(platform, params.get("code"), params.get("redirect_uri"))
        if entry is None:
            return graph_error(400, 100, "This authorization code has been used or has expired.", 36009)
        token = self.state.issue(platform, entry.account_id, "user", ttl_short, prefix="EAAS")
        return JSONResponse({"access_token": token.value, "token_type": "bearer", "expires_in": ttl_short})
