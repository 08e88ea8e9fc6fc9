"""OAuth connection, refresh, token checks, rate limits, faults and token redaction."""

from __future__ import annotations

import logging

import pytest

from platforms.base import AccountContext, ReauthRequired, Rejected, RetryLater
from tests.support.publish import publish


@pytest.mark.parametrize(
    "platform", ["instagram", "facebook", "meta_ads", "tiktok", "youtube", "x", "linkedin"]
)
def test_oauth_connect_then_use_the_credentials(sandbox, platform):
    code, redirect_uri = sandbox.oauth(platform, state=f"state-{platform}")
    adapter = sandbox.adapters[platform]
    identity = adapter.exchange_code(code=code, redirect_uri=redirect_uri, state=f"state-{platform}")
    assert identity.platform_account_id and identity.credentials["accessToken"]
    with pytest.raises((Rejected, ReauthRequired)):  # a code is single-use
        adapter.exchange_code(code=code, redirect_uri=redirect_uri, state=f"state-{platform}")


def test_oauth_connect_subscribes_meta_accounts(sandbox):
    code, redirect_uri = sandbox.oauth("facebook")
    identity = sandbox.adapters["facebook"].exchange_code(code=code, redirect_uri=redirect_uri)
    assert {"messages", "messaging_postbacks", "message_echoes", "feed"} <= set(identity.subscribed_fields)


def test_x_pkce_needs_the_same_state(sandbox):
    code, redirect_uri = sandbox.oauth("x", state="right")
    with pytest.raises(ReauthRequired):
        sandbox.adapters["x"].exchange_code(code=code, redirect_uri=redirect_uri, state="wrong")


def _connect(sandbox, platform):
    from platforms.base import AccountContext

    code, redirect_uri = sandbox.oauth(platform, state="s")
    identity = sandbox.adapters[platform].exchange_code(code=code, redirect_uri=redirect_uri, state="s")
    return AccountContext(identity.platform_account_id, identity.credentials)


def test_youtube_refresh_keeps_the_refresh_token_google_does_not_return(sandbox):
    acc = _connect(sandbox, "youtube")
    old_refresh = acc.credentials["refreshToken"]
    new = sandbox.adapters["youtube"].refresh_credentials(acc)
    assert new["refreshToken"] == old_refresh
    assert new["accessToken"] != acc.credentials["accessToken"]


@pytest.mark.parametrize("platform", ["x", "tiktok"])
def test_refresh_takes_a_rotated_refresh_token(sandbox, platform):
    acc = _connect(sandbox, platform)
    sandbox.control(platform, "followers", {"accountId": acc.platform_account_id, "followers": 17})
    new = sandbox.adapters[platform].refresh_credentials(acc)
    assert new["refreshToken"] != acc.credentials["refreshToken"]
    from platforms.base import AccountContext

    assert sandbox.adapters[platform].follower_count(AccountContext(acc.platform_account_id, new)) == 17
    with pytest.raises(ReauthRequired):  # the old refresh token was rotated away
        sandbox.adapters[platform].refresh_credentials(acc)


def test_instagram_and_linkedin_refresh(sandbox):
    ig = _connect(sandbox, "instagram")
    new = sandbox.adapters["instagram"].refresh_credentials(ig)
    assert new["accessToken"] != ig.credentials["accessToken"] and new["userId"] == ig.platform_account_id
    # Share on LinkedIn grants no refresh token: only a person can renew the member's token.
    li = _connect(sandbox, "linkedin")
    assert not li.credentials["refreshToken"] and li.credentials["expiresAt"]
    with pytest.raises(ReauthRequired) as refused:
        sandbox.adapters["linkedin"].refresh_credentials(li)
    assert "no refresh token" in refused.value.message


@pytest.mark.parametrize(
    "platform", ["instagram", "facebook", "whatsapp", "telegram", "tiktok", "youtube", "x", "linkedin"]
)
def test_expired_token_is_reauth_required(sandbox, platform):
    acc = sandbox.connected(platform)
    answer = sandbox.control(platform, "expire-token", {"accountId": acc.platform_account_id})
    assert answer.json()["expired"] >= 1
    adapter = sandbox.adapters[platform]
    with pytest.raises(ReauthRequired):
        if platform in ("whatsapp", "telegram"):
            adapter.send_dm(acc, recipient="15550000000", text="x")
        else:
            adapter.follower_count(acc)


def test_telegram_rate_limit_429_carries_retry_after(sandbox):
    acc = sandbox.connected("telegram")
    sandbox.inbound("telegram", acc, {"id": "31337"}, "hi")
    adapter = sandbox.adapters["telegram"]
    with pytest.raises(RetryLater) as caught:
        for _ in range(40):
            adapter.send_dm(acc, recipient="31337", text="burst")
    assert caught.value.delay_seconds == 1.0
    assert len(sandbox.sent("telegram", acc)) == 30


def test_whatsapp_rate_limit_is_130429(sandbox, monkeypatch):
    acc = sandbox.connected("whatsapp")
    sandbox.inbound("whatsapp", acc, {"id": "15551230000"}, "hi")
    # The burst falls in one second of the platform's clock however slowly this machine makes it.
    monkeypatch.setattr(sandbox.emulator.state, "monotonic", lambda: 1_000.0)
    with pytest.raises(RetryLater) as caught:
        for _ in range(100):
            sandbox.adapters["whatsapp"].send_dm(acc, recipient="15551230000", text="burst")
    assert caught.value.delay_seconds == 1.0
    assert len(sandbox.sent("whatsapp", acc)) == 80


@pytest.mark.parametrize(
    ("platform", "delay"),
    # Graph throttles by business use case and gives the wait in whole minutes.
    [("telegram", 7.0), ("tiktok", 7.0), ("youtube", 7.0), ("linkedin", 7.0), ("instagram", 60.0)],
)
def test_fault_429_is_retry_later_with_the_platform_delay(sandbox, platform, delay):
    acc = sandbox.connected(platform)
    sandbox.control(
        platform,
        "faults",
        {"accountId": acc.platform_account_id, "failNext": 1, "status": 429, "retryAfter": 7},
    )
    adapter = sandbox.adapters[platform]
    with pytest.raises(RetryLater) as caught:
        if platform == "telegram":
            adapter.subscribe_webhooks(acc)
        else:
            adapter.follower_count(acc)
    assert caught.value.delay_seconds == pytest.approx(delay, abs=1.0)


def test_fault_500_is_retry_later_and_400_is_rejected(sandbox):
    acc = sandbox.account("x")
    sandbox.control("x", "followers", {"accountId": acc.platform_account_id, "followers": 42})
    sandbox.control("x", "faults", {"accountId": acc.platform_account_id, "failNext": 1, "status": 500})
    with pytest.raises(RetryLater):
        sandbox.adapters["x"].follower_count(acc)
    sandbox.control("x", "faults", {"accountId": acc.platform_account_id, "failNext": 1, "status": 400})
    with pytest.raises(Rejected):
        sandbox.adapters["x"].follower_count(acc)
    assert sandbox.adapters["x"].follower_count(acc) == 42


def test_unreachable_platform_is_retry_later(sandbox):
    from platforms.base import AccountContext
    from platforms.registry import Endpoints, PlatformConfig, build_adapters
    from tests.support.live_server import free_port

    config = PlatformConfig.for_sandbox(sandbox.base)
    config.endpoints["telegram"] = Endpoints(f"http://127.0.0.1:{free_port()}")
    adapter = build_adapters(config, sandbox.client)["telegram"]
    with pytest.raises(RetryLater):
        adapter.send_dm(
            AccountContext("1", {"botToken": "123456:AAsecretsecretsecretsecretsecret12345"}),
            recipient="1",
            text="x",
        )


def test_tokens_never_reach_logs_or_errors(sandbox, caplog):
    caplog.set_level(logging.DEBUG)
    for name in ("httpx2", "httpcore2", "httpcore2.http11", "httpcore2.connection"):
        caplog.set_level(logging.DEBUG, logger=name)
    tg = sandbox.connected("telegram")
    token = tg.credentials["botToken"]
    wa = sandbox.connected("whatsapp")
    ig = sandbox.connected("instagram")
    ig_token = ig.credentials["accessToken"]
    errors: list[str] = []
    sandbox.inbound("telegram", tg, {"id": "777"}, "hi")
    sandbox.adapters["telegram"].send_dm(tg, recipient="777", text="ok")
    for call in (
        lambda: sandbox.adapters["telegram"].send_dm(tg, recipient="unknown-chat", text="x"),
        lambda: sandbox.adapters["whatsapp"].send_dm(wa, recipient="not-a-number", text="x"),
        lambda: sandbox.adapters["instagram"].send_dm(ig, recipient="nobody", text="x"),
    ):
        with pytest.raises(Rejected) as failed:
            call()
        errors.append(f"{failed.value!s} {failed.value!r} {failed.value.message}")
    sandbox.adapters["instagram"].refresh_credentials(ig)  # the token travels in the query string
    for platform, acc in (("telegram", tg), ("whatsapp", wa), ("instagram", ig)):
        sandbox.control(platform, "expire-token", {"accountId": acc.platform_account_id})
    for call in (
        lambda: sandbox.adapters["telegram"].send_dm(tg, recipient="777", text="x"),
        lambda: sandbox.adapters["instagram"].refresh_credentials(ig),
        lambda: sandbox.adapters["whatsapp"].subscribe_webhooks(wa),
    ):
        with pytest.raises(ReauthRequired) as caught:
            call()
        errors.append(f"{caught.value!s} {caught.value!r}")
    logs = "\n".join(record.getMessage() for record in caplog.records)
    assert "sendMessage" in logs  # the request lines are logged, redacted
    assert "[REDACTED]" in logs
    for secret in (token, token.split(":", 1)[1], wa.credentials["accessToken"], ig_token):
        assert secret not in logs
        assert all(secret not in text for text in errors)
    assert len(errors) == 6
    assert "access_token=[REDACTED]" in logs


@pytest.mark.parametrize(("platform", "code"), [("instagram", "80002"), ("facebook", "80006")])
def test_graph_business_use_case_throttling_waits_as_the_usage_header_says(sandbox, platform, code):
    acc = sandbox.connected(platform)
    sandbox.control(platform, "faults",
                    {"accountId": acc.platform_account_id, "failNext": 1, "status": 429, "retryAfter": 150})
    with pytest.raises(RetryLater) as caught:
        sandbox.adapters[platform].follower_count(acc)
    assert caught.value.delay_seconds == 180.0  # 3 minutes in X-Business-Use-Case-Usage, no Retry-After
    assert f"#{code}" in caught.value.message


def test_graph_calls_carry_the_appsecret_proof_the_platform_checks(sandbox):
    from dataclasses import replace

    from platforms.registry import build_adapters

    acc = sandbox.connected("facebook")
    assert sandbox.adapters["facebook"].follower_count(acc) >= 0
    forged = build_adapters(replace(sandbox.config, meta_app_secret="not-the-app-secret"), sandbox.client)
    with pytest.raises(Rejected) as caught:
        forged["facebook"].follower_count(acc)
    assert "appsecret_proof" in caught.value.message


def test_linkedin_asks_only_for_what_ordinary_apps_are_granted_and_the_follower_count_is_optional(sandbox):
    from urllib.parse import parse_qs, urlsplit

    from platforms.base import Unsupported

    adapter = sandbox.adapters["linkedin"]
    url = adapter.authorize_url(state="s", redirect_uri=f"{sandbox.base}/callback/linkedin")
    assert parse_qs(urlsplit(url).query)["scope"] == ["openid profile w_member_social"]
    code, redirect_uri = sandbox.oauth("linkedin", state="s")
    identity = adapter.exchange_code(code=code, redirect_uri=redirect_uri, state="s")
    connected = AccountContext(identity.platform_account_id, identity.credentials)
    with pytest.raises(Unsupported):  # no member analytics granted: not asked for
        adapter.follower_count(connected)
    assert publish(adapter, connected, text="shared", media=[], options={})
    # An app granted member analytics reads the count.
    analytics = sandbox.account("linkedin")
    sandbox.control("linkedin", "followers", {"accountId": analytics.platform_account_id, "followers": 12})
    assert adapter.follower_count(analytics) == 12
    # The sandbox app, like an ordinary one, is not granted r_member_social: the consent fails whole.
    refused = sandbox.client.get(url.replace("w_member_social", "w_member_social+r_member_social"))
    assert refused.status_code == 302
    assert parse_qs(urlsplit(refused.headers["location"]).query)["error"] == ["unauthorized_scope_error"]


def test_linkedin_version_is_current_and_a_retired_one_gets_426(sandbox):
    from dataclasses import replace

    from platforms.linkedin.emulator import linkedin_version_active
    from platforms.registry import PlatformConfig, build_adapters

    # The default must be renewed before LinkedIn retires it: this fails a year after its release.
    assert linkedin_version_active(PlatformConfig(hooks_base_url="x").linkedin_version)
    acc = sandbox.account("linkedin")
    retired = build_adapters(replace(sandbox.config, linkedin_version="202401"), sandbox.client)["linkedin"]
    with pytest.raises(Rejected) as caught:
        publish(retired, acc, text="old", media=[], options={})
    assert "202401 is not active" in caught.value.message
    assert publish(sandbox.adapters["linkedin"], acc, text="current", media=[], options={})


def test_a_whatsapp_token_of_another_meta_app_is_proved_with_that_apps_secret(sandbox):
    """Graph refuses an `appsecret_proof` made with another app's secret (code 100): connect asks
    `debug_token` which app the token is of, and proves and subscribes with that app's secret, or
    refuses with what to configure."""
    from platforms.graph.inbound import meta_signature

    other = "200000000000002"
    made = sandbox.control("whatsapp", "accounts", {"appId": other})
    assert made.status_code == 201, made.text
    credentials = made.json()["credentials"]
    adapter = sandbox.adapters["whatsapp"]
    with pytest.raises(Rejected) as refused:
        adapter.connect_with_token(**credentials)
    assert refused.value.code == "unknown_meta_app" and "SWITCHBOARD_META_APP_SECRETS" in refused.value.message
    sandbox.config.meta_app_secrets[other] = "other-app-secret"
    try:
        identity = adapter.connect_with_token(**credentials)
        assert identity.credentials["appId"] == other
        acc = AccountContext(identity.platform_account_id, identity.credentials)
        adapter.send_template(acc, recipient="15550001234", name="hello_world", language="en_US", parameters=[])
        sandbox.inbound("whatsapp", acc, {"id": "15550001234", "name": "Ana"}, "hi")
        hook = sandbox.hooks[-1]
        assert hook.headers["x-hub-signature-256"] == meta_signature("other-app-secret", hook.body)
    finally:
        sandbox.config.meta_app_secrets.pop(other, None)


def test_debug_token_carries_the_proof_an_app_that_requires_the_app_secret_asks_for(sandbox):
    """With "Require App Secret" on, Graph refuses even `debug_token` without the `appsecret_proof`
    of the token's own app (https://developers.facebook.com/docs/graph-api/securing-requests): the
    sandbox's app requires it, and connecting a number proves every call."""
    made = sandbox.control("whatsapp", "accounts", {})
    assert made.status_code == 201, made.text
    credentials = made.json()["credentials"]
    token = credentials["accessToken"]
    bare = sandbox.client.get(sandbox.url("whatsapp", "v23.0/debug_token"), params={"input_token": token},
                              headers={"Authorization": f"Bearer {token}"})
    assert bare.status_code == 400 and bare.json()["error"]["code"] == 100
    identity = sandbox.adapters["whatsapp"].connect_with_token(**credentials)
    assert identity.platform_account_id == credentials["phoneNumberId"]


def test_instagram_login_calls_carry_no_proof_made_with_the_meta_apps_secret(sandbox):
    """An Instagram Login token is the Instagram app's: a proof made with the Meta app's secret is
    refused (code 100) where one is checked, so without the Instagram app's secret none is sent."""
    acc = sandbox.account("instagram")
    adapter = sandbox.adapters["instagram"]
    kept = sandbox.config.instagram_app_secret
    sandbox.config.instagram_app_secret = ""
    try:
        assert adapter.follower_count(acc) >= 0
    finally:
        sandbox.config.instagram_app_secret = kept
    assert adapter.follower_count(acc) >= 0  # and with it, the proof is the Instagram app's
