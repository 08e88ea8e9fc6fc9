"""Dashboard sign-in through an external OpenID Connect provider (Authlib's Starlette client).

On only when `SWITCHBOARD_OIDC_ISSUER`, `..._CLIENT_ID` and `..._CLIENT_SECRET` are set; the
sign-in button names it after `SWITCHBOARD_OIDC_NAME`. Authlib does discovery, PKCE (S256),
`state` and `nonce`, and checks the `id_token` signature, issuer, audience and expiry. A
conforming provider may leave scope-requested claims out of the `id_token` when it issues an
access token too (OpenID Connect Core §5.4): `email` and `email_verified` are then read from its
userinfo endpoint, whose `sub` must be the id_token's (§5.3.2).

We then link the identity to a person: by the provider's subject once linked; on a first sign-in
only through a *verified* e-mail of an existing user, or of a live invitation the person came
from (the invitation's page sends them here with it). Signing in never creates a second account
for someone, nor an account for a stranger. Each refusal is logged with its reason (no e-mail, no
token); a provider that cannot be reached is a page that says so (502), never a 500.
"""

from __future__ import annotations

import logging
from typing import Any

from authlib.integrations.httpx_client._compat import httpx2 as authlib_http
from authlib.integrations.starlette_client import OAuth, OAuthError
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from kit.settings import Settings
from oauth import shell as dashboard
from service.common import audit
from service.identity import users

log = logging.getLogger("switchboard.oidc")
INVITATION_KEY = "oidc_invitation"
# What reaching the provider can fail with: no answer, a refused connection, a broken TLS.
UNREACHABLE = (authlib_http.HTTPError, OSError)


def _unreachable(request: Request, settings: Settings) -> Response:
    return dashboard.error_page(
        request, 502, f"{settings.oidc_name} cannot be reached",
        f"Switchboard could not reach {settings.oidc_name} to sign you in. Try again in a moment, or sign in "
        "with your e-mail and password.", "provider_unreachable")


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
        invitation = request.query_params.get("invitation")
        if invitation:
            request.session[INVITATION_KEY] = invitation[:100]
        try:
            return await idp.authorize_redirect(request, callback_url)  # type: ignore[no-any-return]
        except UNREACHABLE as failure:
            log.warning("OIDC sign-in could not start: the provider did not answer (%s)", type(failure).__name__)
            return _unreachable(request, settings)

    async def claims_of(token: dict[str, Any]) -> dict[str, Any]:
        """The id_token's claims, completed from the userinfo endpoint when they lack the e-mail."""
        claims = dict(token.get("userinfo") or {})
        if "email" in claims and "email_verified" in claims:
            return claims
        extra = dict(await idp.userinfo(token=token))
        if extra.get("sub") != claims.get("sub"):
            raise OAuthError(error="userinfo_subject_mismatch")
        return {**extra, **{k: v for k, v in claims.items() if k not in ("email", "email_verified")}}

    async def callback(request: Request) -> Response:
        address = request.client.host if request.client else None
        try:
            token = await idp.authorize_access_token(request)
            claims = await claims_of(token)
        except OAuthError as error:
            log.info("OIDC sign-in refused: the provider did not confirm the person (%s)", error.error)
            await dashboard.in_db(audit.signin, user_id=None, email="", succeeded=False, ip=address,
                                  reason=f"identity provider: {error.error}", method="oidc")
            return dashboard.error_page(request, 400, "Sign-in failed",
                                        "The identity provider did not confirm who you are.", error.error)
        except UNREACHABLE as failure:
            log.warning("OIDC sign-in could not finish: the provider did not answer (%s)", type(failure).__name__)
            return _unreachable(request, settings)
        subject = f"{settings.oidc_issuer}#{claims.get('sub')}"
        email = claims.get("email") if isinstance(claims.get("email"), str) else None
        invitation = request.session.pop(INVITATION_KEY, None)
        linked = await dashboard.in_db(users.link_identity, subject=subject, email=email,
                                       email_verified=claims.get("email_verified") is True,
                                       invitation=invitation, ip=address)
        if linked.user is None:
            log.info("OIDC sign-in refused: %s", linked.refusal)
            await dashboard.in_db(audit.signin, user_id=None, email=(email or "")[:320], succeeded=False,
                                  ip=address, reason=linked.refusal, method="oidc")
            return dashboard.error_page(
                request, 403, "No account for you yet",
                f"{settings.oidc_name} signed you in, but no Switchboard user has that verified e-mail. "
                "Ask an owner or an admin of your workspace to invite you, then open the invitation's link.")
        next_url = dashboard.safe_next(request.session.get("oidc_next"))
        if linked.joined:
            next_url = f"/dashboard?workspace={linked.joined}"
        await dashboard.sign_in(request, linked.user.id, linked.user.email, method="oidc")
        return RedirectResponse(next_url, status_code=303)

    return [
        Route("/dashboard/login/oidc", start, methods=["GET"], middleware=middleware),
        Route("/dashboard/login/oidc/callback", callback, methods=["GET"], middleware=middleware),
    ]
