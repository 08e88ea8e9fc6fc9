"""Credentials that lapse for good (Instagram's 60-day tokens) are renewed in the week before they
do, by the scheduler and a worker; a platform that refuses flags the account for a person."""

from __future__ import annotations

import datetime as dt

from kit import clock, crypto
from service.accounts import adapters
from storage.db import connection, db
from storage.models import Account
from tests.conftest import bearer
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for


def _row(account_id: str) -> Account:
    with connection():
        return Account.get_by_id(account_id)


def _days_pass(client, account: dict, days: int) -> None:
    """`days` pass for the account's tokens at the platform, and for our record of them."""
    aged = client.post("/sandbox/instagram/age-tokens", json={"accountId": account["id"], "days": days})
    assert aged.status_code == 200, aged.text
    with connection(), db.atomic():
        row = Account.get_by_id(account["id"])
        credentials = crypto.decrypt_json(row.credentials)
        lapses = clock.parse_iso(credentials["expiresAt"]) - dt.timedelta(days=days)
        credentials["expiresAt"] = clock.iso(lapses)
        Account.update(credentials=crypto.encrypt_json(credentials), credentials_expire_at=lapses).where(
            Account.id == row.id).execute()



def test_a_token_lapsing_within_the_week_is_renewed_and_one_already_lapsed_flags_the_account(client, tenant):
    soon = connect_account(client, tenant, "instagram")
    lapsed = connect_account(client, tenant, "instagram")
    fresh = connect_account(client, tenant, "instagram")
    connected = _row(soon["id"])
    assert abs(connected.credentials_expire_at - (clock.now() + dt.timedelta(days=60))) < dt.timedelta(minutes=5)
    old_token = adapters.context(connected).credentials["accessToken"]

    _days_pass(client, soon, 55)
    _days_pass(client, lapsed, 61)
    renewed = wait_for(lambda: (row := _row(soon["id"])).credentials_expire_at > clock.now() + dt.timedelta(days=50)
                     and row)
    assert adapters.context(renewed).credentials["accessToken"] != old_token
    assert renewed.needs_reauth is False
    with connection():
        assert adapters.call(renewed, lambda adapter, ctx: adapter.follower_count(ctx)) >= 0  # the new token works

    listed = wait_for(lambda: [a for a in client.get("/v1/accounts", headers=bearer(tenant["apiKey"])).json()["data"]
                             if a["id"] == lapsed["id"] and a["needsReauth"]])
    assert listed[0]["status"] == "connected"
    # An account far from its lapse is left alone.
    untouched = _row(fresh["id"])
    assert untouched.credentials_checked_at is None
    assert adapters.context(untouched).credentials == adapters.context(_row(fresh["id"])).credentials


def _flagged_five_days_before_it_lapses(client, tenant, platform: str) -> tuple[dict, dict]:
    """A connected account whose 60-day token lapses in five days: it says `needsReauth`, still
    connected. Its record and the credentials it was connected with."""
    account = connect_account(client, tenant, platform)
    row = _row(account["id"])
    credentials = adapters.context(row).credentials
    assert abs(row.credentials_expire_at - (clock.now() + dt.timedelta(days=60))) < dt.timedelta(minutes=5)
    with connection(), db.atomic():
        lapses = clock.now() + dt.timedelta(days=5)
        Account.update(credentials=crypto.encrypt_json({**credentials, "expiresAt": clock.iso(lapses)}),
                       credentials_expire_at=lapses).where(Account.id == row.id).execute()
    listed = wait_for(lambda: [a for a in client.get("/v1/accounts", headers=bearer(tenant["apiKey"])).json()["data"]
                               if a["id"] == account["id"] and a["needsReauth"]])
    assert listed[0]["status"] == "connected"
    return account, credentials


def test_a_linkedin_member_token_is_flagged_for_a_person_a_week_before_it_lapses(client, tenant):
    """Share on LinkedIn grants no refresh token (programmatic refresh is for approved partners): the
    account says `needsReauth` in the week before day 60, while its token still works, instead of
    failing without warning on the day."""
    _, credentials = _flagged_five_days_before_it_lapses(client, tenant, "linkedin")
    assert not credentials.get("refreshToken")


def test_a_meta_ads_token_is_flagged_for_a_person_a_week_before_it_lapses_never_exchanged_again(client, tenant):
    """Meta documents no renewal of a long-lived user token by exchanging it again: the account says
    `needsReauth` in the week before day 60, while its token still works, and its token stays the same."""
    account, credentials = _flagged_five_days_before_it_lapses(client, tenant, "meta_ads")
    assert adapters.context(_row(account["id"])).credentials["accessToken"] == credentials["accessToken"]


def test_a_facebook_page_token_that_never_expires_is_not_renewed_nor_flagged(client, tenant):
    """The Page token got from a long-lived user token has no expiration date; re-exchanging the
    user token is no documented renewal. So nothing lapses, and the account is never flagged for it."""
    from service.accounts import work

    page = connect_account(client, tenant, "facebook")
    assert _row(page["id"]).credentials_expire_at is None
    with connection(), db.atomic():
        Account.update(credentials_expire_at=clock.now() + dt.timedelta(days=3)).where(
            Account.id == page["id"]).execute()
    assert work.renew(page["id"]) == "not_due"
    assert _row(page["id"]).needs_reauth is False
