"""Dashboard sign-in through an external OpenID Connect provider (Authlib's Starlette client).

On only when `SWITCHBOARD_OIDC_ISSUER`, `..._CLIENT_ID` and `..._CLIENT_SECRET` are set. Authlib
does discovery, PKCE (S256), `state` and `nonce`, and checks the `id_token` signature, issuer,
audience and expiry. We then link the identity to a person: by the provider's subject once linked;
on a first sign-in only through a *verified* e-mail of an existing user. An unknown e-mail is
refused: signing in never creates a second account for someone (nor an account for a stranger).
"""

from __future__ import annotations

import logging
from typing import Any

from authlib.integrations.starlette_client import OAuth, OAuthError
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from kit.settings import Settings
from oauth.dashboard import shell as dashboard
from service.identity import users

log = logging.getLogger("switchboard.oidc")


def routes(settings: Settings, middleware: list[Middleware]) -> list[Route]:
    oauth = OAuth()
    oauth.register(
        name="idp",
        client_id=settings.oidc_client_id,
        client_secret=settings.oidc_client_secret,
        server_metadata_url=(settings.oidc_issuer or "").rstrip("/") + "/.well-known/openid-configuration",
        client_kwargs={"scope": "openid email profile", "code_challenge_method": "S256"},
    )
    idp: Any = oauth.create_client("idp")
    callback_url = settings.base_url + "/dashboard/login/oidc/callback"

    async def start(request: Request) -> Response:
        request.session["oidc_next"] = dashboard.safe_next(request.query_params.get("next"))
        return await idp.authorize_redirect(request, callback_url)  # type: ignore[no-any-return]

    async def callback(request: Request) -> Response:
        try:
            token = await idp.authorize_access_token(request)
        except OAuthError as error:
            log.info("OIDC sign-in failed: %s", error.error)
            return dashboard.error_page(request, 400, "Sign-in failed",
                                        "The identity provider did not confirm who you are.", error.error)
        claims = token.get("userinfo") or {}
        subject = f"{settings.oidc_issuer}#{claims.get('sub')}"
        user = await dashboard.in_db(users.link_identity, subject=subject, email=claims.get("email"),
                                     email_verified=claims.get("email_verified") is True)
        if user is None:
            return dashboard.error_page(
                request, 403, "No account for you yet",
                "Your identity provider signed you in, but no Switchboard user has that verified e-mail. "
                "Ask an owner of your workspace to invite you.")
        next_url = dashboard.safe_next(request.session.get("oidc_next"))
        await dashboard.sign_in(request, user.id, user.email, method="oidc")
        return RedirectResponse(next_url, status_code=303)

    return [
        Route("/dashboard/login/oidc", start, methods=["GET"], middleware=middleware),
        Route("/dashboard/login/oidc/callback", callback, methods=["GET"], middleware=middleware),
    ]
