"""Meta's Graph API family (Instagram, Facebook, WhatsApp Cloud, Marketing API): error mapping,
Messenger-style sending and Facebook Login, shared by those adapters."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any

import httpx2

from platforms._common import BaseAdapter, expires_at
from platforms.base import (
    AccountContext,
    Button,
    ButtonRefused,
    OutsideMessagingWindow,
    PlatformFailure,
    ReauthRequired,
    Rejected,
    RetryLater,
    SentMessage,
    cut_label,
)
from platforms.graph.inbound import meta_signed, parse_messenger, verify_meta_challenge
from platforms.graph.rules import MessengerInboxRules
from platforms.http import generic_failure, json_body, redact, retry_after_seconds
from platforms.inbound import InboundEvent

THROTTLING_CODES = {4, 17, 32, 613, 80007, 130429, 131056}
# Business-use-case rate limits (80001 Pages, 80002 Instagram, 80004 Ads management, 80006 Messenger,
# ...): Graph sends no Retry-After; `X-Business-Use-Case-Usage` says how long until access returns.
BUSINESS_USE_CASE_CODES = {80000, 80001, 80002, 80003, 80004, 80005, 80006, 80008, 80009, 80014}
BUSINESS_USE_CASE_DEFAULT_SECONDS = 60.0
TRANSIENT_CODES = {1, 2, 131000, 131016}
WINDOW_SUBCODES = {2018278, 2534022}
NOT_FOUND_SUBCODE = 33


def graph_code(failure: Rejected) -> str:
    return (failure.code or "").split(".")[0]


def business_use_case_wait(headers: Mapping[str, str]) -> float | None:
    """Seconds until the throttled use case regains access, from `X-Business-Use-Case-Usage`
    (`{"<business id>": [{"type": ..., "estimated_time_to_regain_access": <minutes>}, ...]}`)."""
    raw = headers.get("x-business-use-case-usage")
    if not raw:
        return None
    try:
        usage = json.loads(raw)
    except ValueError:
        return None
    minutes = [
        entry.get("estimated_time_to_regain_access")
        for entries in (usage.values() if isinstance(usage, dict) else ())
        if isinstance(entries, list)
        for entry in entries
        if isinstance(entry, dict)
    ]
    known = [float(m) for m in minutes if isinstance(m, int | float) and not isinstance(m, bool) and m >= 0]
    if not known:
        return None
    return max(known) * 60 or BUSINESS_USE_CASE_DEFAULT_SECONDS


def graph_classify(response: httpx2.Response, secrets: list[str]) -> PlatformFailure:
    body = json_body(response)
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return generic_failure(response, secrets)
    code = error.get("code")
    subcode = error.get("error_subcode")
    message = str(error.get("error_user_msg") or error.get("message") or "the platform refused the request")
    details = (
        (error.get("error_data") or {}).get("details") if isinstance(error.get("error_data"), dict) else None
    )
    if details and details not in message:
        message = f"{message}: {details}"
    message = redact(message, secrets)
    status = response.status_code
    if code in BUSINESS_USE_CASE_CODES:
        wait = business_use_case_wait(response.headers)
        return RetryLater(message, wait if wait is not None else BUSINESS_USE_CASE_DEFAULT_SECONDS)
    if code in THROTTLING_CODES or status == 429:
        default = 1.0 if code in (130429, 131056) else 60.0
        return RetryLater(message, retry_after_seconds(response.headers, default))
    if code in (190, 102) or status == 401:
        return ReauthRequired(message)
    label = f"{code}.{subcode}" if subcode else str(code)
    if code == 131047 or subcode in WINDOW_SUBCODES or code in WINDOW_SUBCODES:
        return OutsideMessagingWindow(message, label)
    if status >= 500 or code in TRANSIENT_CODES:
        return RetryLater(message, retry_after_seconds(response.headers, 30.0))
    return Rejected(message, label)


def appsecret_proof(app_secret: str, token: str) -> str:
    return hmac.new(app_secret.encode(), token.encode(), hashlib.sha256).hexdigest()


def button_template(text: str, button: Button) -> dict[str, Any]:
    return {
        "attachment": {
            "type": "template",
            "payload": {
                "template_type": "button",
                "text": text,
                "buttons": [{"type": "web_url", "url": button.url, "title": cut_label(button.label)}],
            },
        }
    }


class GraphAdapter(BaseAdapter):
    classify = staticmethod(graph_classify)

    def webhook_check(self, params: Mapping[str, str]) -> str | dict[str, str] | None:
        return verify_meta_challenge(params, self.config.meta_verify_token)

    def _webhook_secrets(self) -> list[str]:
        """The app secrets that may sign this platform's webhooks."""
        return [self.config.meta_app_secret]

    def verify_webhook(self, headers: Mapping[str, str], raw_body: bytes, query: Mapping[str, str]) -> bool:
        return meta_signed(headers, raw_body, self._webhook_secrets())

    def _url(self, path: str) -> str:
        return f"{self.endpoints.api}/{self.config.graph_version}/{path.lstrip('/')}"

    @staticmethod
    def _auth(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    def _app_secret(self) -> str:
        return self.config.meta_app_secret

    def _graph(
        self, method: str, path: str, token: str, *, secrets: list[str] | None = None, app_secret: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """`app_secret`: the secret of the app the token belongs to, when not this adapter's own app."""
        app_secret = app_secret if app_secret is not None else self._app_secret()
        if app_secret:
            # Proves the call comes from the app's server: Meta refuses calls without it when the
            # app requires it, and a stolen token alone is not enough.
            kwargs["params"] = {**(kwargs.get("params") or {}), "appsecret_proof": appsecret_proof(app_secret, token)}
        response = self._call(
            method, self._url(path), secrets=[token, *(secrets or [])], headers=self._auth(token), **kwargs
        )
        return json_body(response) or {}

    def _graph_all(
        self, path: str, token: str, *, secrets: list[str] | None = None, params: dict[str, Any] | None = None,
        max_items: int = 1000, app_secret: str | None = None,
    ) -> list[dict[str, Any]]:
        """Every item of a Graph list, page after page (by the `after` cursor, so the token stays in
        the header rather than in the `next` URL), up to `max_items`."""
        items: list[dict[str, Any]] = []
        query = dict(params or {})
        while len(items) < max_items:
            answer = self._graph("GET", path, token, secrets=secrets, params=query, app_secret=app_secret)
            items += [item for item in answer.get("data") or [] if isinstance(item, dict)]
            paging = answer.get("paging") or {}
            after = (paging.get("cursors") or {}).get("after")
            if not paging.get("next") or not after:
                break
            query = {**query, "after": after}
        return items[:max_items]

    @staticmethod
    def _token(account: AccountContext) -> str:
        token = account.credentials.get("accessToken")
        if not isinstance(token, str) or not token:
            raise ReauthRequired("the account has no access token")
        return token


class MessengerStyle(GraphAdapter):
    """Instagram messaging and Messenger share the Send API and its button template, the app
    subscription edge and the followers field."""

    webhook_fields: tuple[str, ...] = ()
    webhook_subscription = True
    inbox_rules = MessengerInboxRules()

    def parse_webhook(self, payload: dict[str, Any], query: Mapping[str, str]) -> list[InboundEvent]:
        return parse_messenger(self.platform, payload)

    def subscribe_webhooks(self, account: AccountContext) -> list[str]:
        self._graph(
            "POST",
            f"{account.platform_account_id}/subscribed_apps",
            self._token(account),
            secrets=account.secrets(),
            params={"subscribed_fields": ",".join(self.webhook_fields)},
        )
        return list(self.webhook_fields)

    def follower_count(self, account: AccountContext) -> int:
        answer = self._graph(
            "GET",
            account.platform_account_id,
            self._token(account),
            secrets=account.secrets(),
            params={"fields": "followers_count"},
        )
        return int(answer.get("followers_count", 0))

    def _send(
        self, account: AccountContext, recipient: dict[str, str], message: dict[str, Any]
    ) -> SentMessage:
        payload = {"recipient": recipient, "messaging_type": "RESPONSE", "message": message}
        answer = self._graph(
            "POST",
            f"{account.platform_account_id}/messages",
            self._token(account),
            secrets=account.secrets(),
            json=payload,
        )
        return SentMessage(str(answer.get("message_id", "")), False, payload)

    def _deliver(
        self, account: AccountContext, recipient: dict[str, str], text: str, button: Button | None
    ) -> SentMessage:
        def native(btn: Button) -> SentMessage:
            try:
                return self._send(account, recipient, button_template(text, btn))
            except OutsideMessagingWindow:
                raise
            except Rejected as failure:
                if graph_code(failure) == "100":
                    raise ButtonRefused(failure.reason, failure.code) from None
                raise

        return self._with_button_fallback(
            text, button, native, lambda body: self._send(account, recipient, {"text": body})
        )

    def send_dm(
        self, account: AccountContext, *, recipient: str, text: str, button: Button | None = None
    ) -> SentMessage:
        return self._deliver(account, {"id": recipient}, text, button)

    def private_reply(
        self, account: AccountContext, *, comment_id: str, text: str, button: Button | None = None
    ) -> SentMessage:
        return self._deliver(account, {"comment_id": comment_id}, text, button)

    def _delete_node(self, account: AccountContext, node_id: str) -> None:
        try:
            self._graph("DELETE", node_id, self._token(account), secrets=account.secrets())
        except Rejected as failure:
            if failure.code == f"100.{NOT_FOUND_SUBCODE}":
                return
            raise


class FacebookLogin(GraphAdapter):
    """Facebook Login for Facebook Pages and the Marketing API."""

    scopes: tuple[str, ...] = ()

    def authorize_url(self, *, state: str, redirect_uri: str) -> str:
        client = self.config.oauth_client(self.platform)
        return self._authorize(
            f"/{self.config.graph_version}/dialog/oauth",
            {
                "client_id": client.client_id,
                "redirect_uri": redirect_uri,
                "state": state,
                "response_type": "code",
                "scope": ",".join(self.scopes),
            },
        )

    def _token_endpoint(self, params: dict[str, str]) -> dict[str, Any]:
        client = self.config.oauth_client(self.platform)
        query = {"client_id": client.client_id, "client_secret": client.client_secret, **params}
        secrets = [
            client.client_secret,
            *(v for k, v in params.items() if k in ("code", "fb_exchange_token")),
        ]
        response = self._call(
            "GET",
            f"{self.endpoints.oauth}/{self.config.graph_version}/oauth/access_token",
            params=query,
            secrets=secrets,
        )
        return json_body(response) or {}

    def _user_token(self, *, code: str, redirect_uri: str) -> tuple[str, str | None]:
        short = self._token_endpoint({"code": code, "redirect_uri": redirect_uri})
        long = self._token_endpoint(
            {"grant_type": "fb_exchange_token", "fb_exchange_token": short["access_token"]}
        )
        return str(long["access_token"]), expires_at(long.get("expires_in"))

    def _exchange_user_token(self, token: str) -> tuple[str, str | None]:
        long = self._token_endpoint({"grant_type": "fb_exchange_token", "fb_exchange_token": token})
        return str(long["access_token"]), expires_at(long.get("expires_in"))
