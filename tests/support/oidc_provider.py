"""A small OpenID Connect provider for tests: discovery, authorise (signs the configured person in
at once), token with PKCE S256 and an RS256 `id_token`, JWKS."""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from joserfc import jwt
from joserfc.jwk import RSAKey
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route


@dataclass
class Provider:
    client_id: str = "switchboard"
    client_secret: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    person: dict[str, Any] = field(default_factory=dict)  # sub, email, email_verified
    issuer: str = ""
    key: RSAKey = field(default_factory=lambda: RSAKey.generate_key(2048, parameters={"kid": "k1"}))
    codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    token_requests: list[dict[str, str]] = field(default_factory=list)

    def app(self) -> Starlette:
        async def discovery(request: Request) -> Response:
            return JSONResponse({
                "issuer": self.issuer, "authorization_endpoint": f"{self.issuer}/authorize",
                "token_endpoint": f"{self.issuer}/token", "jwks_uri": f"{self.issuer}/jwks",
                "response_types_supported": ["code"], "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"], "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            })

        async def authorize(request: Request) -> Response:
            q = request.query_params
            assert q["client_id"] == self.client_id and q["code_challenge_method"] == "S256"
            code = secrets.token_urlsafe(16)
            self.codes[code] = {"nonce": q.get("nonce"), "challenge": q["code_challenge"],
                                "redirect_uri": q["redirect_uri"]}
            return RedirectResponse(q["redirect_uri"] + "?" + urlencode({"code": code, "state": q["state"]}), 302)

        async def token(request: Request) -> Response:
            form = dict(await request.form())
            self.token_requests.append(form)
            basic = request.headers.get("authorization", "")
            given = base64.b64decode(basic.split(" ", 1)[1]).decode() if basic.startswith("Basic ") else \
                f"{form.get('client_id')}:{form.get('client_secret')}"
            if given != f"{self.client_id}:{self.client_secret}":
                return JSONResponse({"error": "invalid_client"}, status_code=401)
            grant = self.codes.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "")
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if grant is None or digest != grant["challenge"]:
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            now = int(time.time())
            claims = {"iss": self.issuer, "aud": self.client_id, "iat": now, "exp": now + 300,
                      "nonce": grant["nonce"], **self.person}
            id_token = jwt.encode({"alg": "RS256", "kid": "k1"}, claims, self.key)
            return JSONResponse({"access_token": secrets.token_urlsafe(16), "token_type": "Bearer",
                                 "expires_in": 300, "id_token": id_token})

        async def jwks(request: Request) -> Response:
            return JSONResponse({"keys": [self.key.as_dict(private=False)]})

        return Starlette(routes=[
            Route("/.well-known/openid-configuration", discovery), Route("/authorize", authorize),
            Route("/token", token, methods=["POST"]), Route("/jwks", jwks),
        ])
