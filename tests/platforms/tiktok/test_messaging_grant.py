"""TikTok messaging's own grant: Business Messaging takes TikTok API for Business's authorization
(its own app, `tt_user/oauth2/token/`, its own `open_id` as `business_id`), never the Login Kit
token; the sandbox refuses a Login Kit token there, as TikTok does."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from platforms.base import AccountContext, GrantRefused, GrantRequired, Rejected
from platforms.tiktok.adapter import MESSAGING


def _login_kit_only(account: AccountContext) -> AccountContext:
    return AccountContext(account.platform_account_id,
                          {k: v for k, v in account.credentials.items() if k != MESSAGING})


def test_business_messaging_refuses_the_login_kit_token_and_its_open_id(sandbox):
    account = sandbox.account("tiktok")
    grant = account.credentials[MESSAGING]

    def business_get(token: str, business_id: str) -> int:
        answer = sandbox.client.get(sandbox.url("tiktok", "open_api/v1.3/business/get/"),
                                    params={"business_id": business_id, "fields": '["username"]'},
                                    headers={"Access-Token": token})
        assert answer.status_code == 200  # the Business API answers its errors in a 200
        return int(answer.json()["code"])

    def send(token: str, business_id: str) -> int:
        answer = sandbox.client.post(sandbox.url("tiktok", "open_api/v1.3/business/message/send/"), json={
            "business_id": business_id, "recipient_type": "CONVERSATION", "recipient": "tt_conv_1",
            "message_type": "TEXT", "text": {"body": "hi"}}, headers={"Access-Token": token})
        return int(answer.json()["code"])

    # What the adapter once sent: the Login Kit token in `Access-Token`, Login Kit's open_id as business_id.
    assert business_get(account.credentials["accessToken"], account.platform_account_id) == 40105
    assert send(account.credentials["accessToken"], account.platform_account_id) == 40105
    # The business grant's token, with Login Kit's open_id: not the grant's business_id.
    assert grant["businessId"] != account.platform_account_id
    assert business_get(grant["accessToken"], account.platform_account_id) == 40002
    assert business_get(grant["accessToken"], grant["businessId"]) == 0
    assert sandbox.adapters["tiktok"].business_messaging(account) is True


def test_without_the_messaging_grant_publishing_works_and_messaging_asks_for_the_grant(sandbox):
    account = _login_kit_only(sandbox.account("tiktok"))
    adapter = sandbox.adapters["tiktok"]
    assert adapter.publish_options(account)["privacyLevels"]  # Login Kit: publishing as before
    with pytest.raises(GrantRequired) as missing:
        adapter.send_dm(account, recipient="tt_conv_x", text="hi")
    assert missing.value.grant == MESSAGING
    with pytest.raises(GrantRequired):
        adapter.business_messaging(account)


def _consent(sandbox, adapter, account: AccountContext, redirect_uri: str, hint: str) -> str:
    url = adapter.grant_authorize_url(MESSAGING, state="s1", redirect_uri=redirect_uri)
    assert urlsplit(url).path.endswith("/portal/auth")
    assert parse_qs(urlsplit(url).query)["app_id"] == [sandbox.config.oauth_clients["tiktok_business"].client_id]
    back = sandbox.client.get(url + f"&login_hint={hint}")
    assert back.status_code == 302
    query = parse_qs(urlsplit(back.headers["location"]).query)
    assert query["state"] == ["s1"]
    return query["code"][0]


def test_the_business_grant_is_exchanged_refreshed_and_checked_to_be_the_same_account(sandbox):
    adapter = sandbox.adapters["tiktok"]
    made = sandbox.control("tiktok", "accounts", {"username": "grantee"}).json()
    sandbox.emulator.state.account("tiktok", made["platformAccountId"]).extra["login_hint"] = "grantee"
    account = _login_kit_only(AccountContext(made["platformAccountId"], made["credentials"]))
    redirect = "https://switchboard.example/v1/connect/tiktok/grants/messaging/callback"
    code = _consent(sandbox, adapter, account, redirect, "grantee")
    granted = adapter.exchange_grant_code(MESSAGING, account, code=code, redirect_uri=redirect)
    grant = granted[MESSAGING]
    assert grant["businessId"] != account.platform_account_id  # each app has its own open_id of a user
    assert not grant["accessToken"].startswith("act.") and grant["refreshToken"]
    assert granted["accessToken"] == account.credentials["accessToken"]  # Login Kit's credentials untouched
    with_grant = AccountContext(account.platform_account_id, granted)
    assert adapter.business_messaging(with_grant) is True
    with pytest.raises(GrantRefused):  # a code is spent once
        adapter.exchange_grant_code(MESSAGING, account, code=code, redirect_uri=redirect)

    refreshed = adapter.refresh_grant(MESSAGING, with_grant)
    assert refreshed[MESSAGING]["accessToken"] != grant["accessToken"]
    assert refreshed[MESSAGING]["businessId"] == grant["businessId"]
    assert adapter.business_messaging(AccountContext(account.platform_account_id, refreshed)) is True
    with pytest.raises(GrantRefused):  # the old refresh token was spent by the refresh
        adapter.refresh_grant(MESSAGING, with_grant)
    with pytest.raises(GrantRefused):  # Login Kit's refresh token is not one of the business app's
        adapter.refresh_grant(MESSAGING, AccountContext(account.platform_account_id, {
            **granted, MESSAGING: {**grant, "refreshToken": account.credentials["refreshToken"]}}))

    other = sandbox.control("tiktok", "accounts", {"username": "someone_else"}).json()
    sandbox.emulator.state.account("tiktok", other["platformAccountId"]).extra["login_hint"] = "someone_else"
    wrong = _consent(sandbox, adapter, account, redirect, "someone_else")
    with pytest.raises(Rejected) as refusal:
        adapter.exchange_grant_code(MESSAGING, account, code=wrong, redirect_uri=redirect)
    assert refusal.value.code == "other_account"
