"""The platforms' OAuth 2 servers, as the sandbox runs them: an auto-approving consent page,
single-use authorisation codes (PKCE checked where the platform asks for it), and the access and
refresh tokens of a new sandbox account."""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode, urlsplit

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from platforms.emulator_kit.core import AuthCode, EmulatorBase
from platforms.emulator_kit.state import Account, random_token, token_digest


class OAuthServer(EmulatorBase):
    def client_ok(self, platform: str, client_id: str | None, client_secret: str | None = None) -> bool:
        client = self.config.oauth_clients.get(platform)
        if client is None or not client_id or not secrets.compare_digest(client_id, client.client_id):
            return False
        return client_secret is None or secrets.compare_digest(client_secret, client.client_secret)

    def authorize(
        self,
        platform: str,
        request: Request,
        *,
        client_param: str = "client_id",
        new_account: Callable[[str | None], Account],
        challenge: bool = False,
        new_sibling: Callable[[str | None], Account] | None = None,
        client: str | None = None,
        default_reach: str | None = None,
    ) -> Response:
        """Auto-approving consent page: the account named by `login_hint` (made on first use) or a
        new one; redirects back with `code` and `state`. `client`: the app of another of the
        platform's products (its codes are redeemed under that name)."""
        query = request.query_params
        redirect_uri = query.get("redirect_uri")
        if not self.client_ok(client or platform, query.get(client_param)) or not redirect_uri:
            return PlainTextResponse("Invalid client_id or redirect_uri.", status_code=400)
        if urlsplit(redirect_uri).scheme not in ("http", "https"):
            return PlainTextResponse("Invalid redirect_uri.", status_code=400)
        if challenge and query.get("code_challenge_method", "plain") not in ("S256", "plain"):
            return PlainTextResponse("Invalid code_challenge_method.", status_code=400)
        if challenge and not query.get("code_challenge"):
            return PlainTextResponse("Missing code_challenge.", status_code=400)
        hint = query.get("login_hint")
        account = None
        if hint:
            account = self.state.find_account(platform, lambda a: a.extra.get("login_hint") == hint)
        if account is None:
            account = new_account(hint)
            if hint:
                account.extra["login_hint"] = hint
        # `default_reach`: what a grant reaches unless asked otherwise, for an account that reaches nothing yet.
        reach = query.get("reach") or (None if account.extra.get("siblings") else default_reach)
        self._reach(account, reach, new_sibling or new_account)
        code = random_token(32)
        # Kept by its digest, like a token: the code itself is only in the redirect.
        digest = token_digest(code)
        self.codes[digest] = AuthCode(
            client or platform,
            account.id,
            redirect_uri,
            time.time() + 600,
            query.get("code_challenge"),
            query.get("code_challenge_method", "plain"),
            scope=query.get("scope", ""),
        )
        self.state.touch_code(digest)
        separator = "&" if urlsplit(redirect_uri).query else "?"
        params = {"code": code}
        if query.get("state") is not None:
            params["state"] = query["state"]
        return RedirectResponse(f"{redirect_uri}{separator}{urlencode(params)}", status_code=302)

    def _reach(self, account: Account, reach: str | None, new_account: Callable[[str | None], Account]) -> None:
        """The sandbox's `reach=N` (1..10) on the consent page: the grant reaches N Pages, ad
        accounts or channels (LinkedIn: the member and N-1 organizations); without it, as before."""
        if reach is None or not (reach.isascii() and reach.isdigit()) or len(reach) > 3:
            return
        wanted = max(1, min(int(reach), 10)) - 1
        siblings = list(account.extra.get("siblings", []))[:wanted]
        while len(siblings) < wanted:
            sibling = new_account(None)
            sibling.extra["sibling_of"] = account.id
            self.state.touch(sibling)
            siblings.append(sibling.id)
        account.extra["siblings"] = siblings
        self.state.touch(account)

    def redeem(
        self, platform: str, code: str | None, redirect_uri: str | None, verifier: str | None = None
    ) -> AuthCode | None:
        """Single use, within 10 minutes, same redirect URI, PKCE checked when a challenge was sent."""
        digest = token_digest(code or "")
        entry = self.codes.get(digest)
        if entry is None or entry.platform != platform or entry.used or entry.expires_at < time.time():
            return None
        if redirect_uri != entry.redirect_uri:
            return None
        if entry.challenge:
            if not verifier:
                return None
            if entry.challenge_method == "S256":
                digest = (
                    base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
                )
            else:
                digest = verifier
            if not secrets.compare_digest(digest, entry.challenge):
                return None
        entry.used = True
        self.state.touch_code(digest)
        return entry


    def token_pair(
        self, account: Account, ttl: float, *, access_prefix: str = "", refresh_prefix: str = "", **extra: Any
    ) -> dict[str, Any]:
        """A test account's credentials as the adapter stores them after a consent: a fresh access
        token (`extra` kept on it, e.g. its scope) and a refresh token of a year."""
        access = self.state.issue(account.platform, account.id, "access", ttl, prefix=access_prefix, **extra)
        refresh = self.state.issue(account.platform, account.id, "refresh", 365 * 86400, prefix=refresh_prefix)
        return {"accessToken": access.value, "expiresAt": None, "refreshToken": refresh.value}
