"""An access token a process has already checked is remembered, yet anything that ends it, written
elsewhere (on a connection of its own, as another process or a person at a SQL prompt would write
it, never through the service), holds at the very next /mcp request."""

import pytest

from kit.tokens import sha256_hex
from storage.db import connection
from storage.hot import oauth_token_epoch
from tests.support.elsewhere import elsewhere
from tests.support.oauth_flow import call_tool_raw, hand_made_tokens

pytestmark = pytest.mark.shared_service

THE_TOKEN = "(SELECT {column} FROM o_auth_token WHERE access_hash = ?)"


def _remembered(browser, tenant) -> str:
    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    assert call_tool_raw(browser, tokens["access_token"], "list_workspaces").status_code == 200  # now remembered
    return tokens["access_token"]


@pytest.mark.parametrize("statement", [
    "UPDATE o_auth_token SET revoked_at = '2020-01-01 00:00:00' WHERE access_hash = ?",
    "UPDATE o_auth_token SET access_expires_at = '2020-01-01 00:00:00' WHERE access_hash = ?",
    "DELETE FROM o_auth_token WHERE access_hash = ?",
    f"UPDATE o_auth_grant SET revoked_at = '2020-01-01 00:00:00' WHERE id = {THE_TOKEN.format(column='grant_id')}",
    f"DELETE FROM o_auth_grant WHERE id = {THE_TOKEN.format(column='grant_id')}",
    f"DELETE FROM membership WHERE user_id = {THE_TOKEN.format(column='user_id')}",
], ids=["token revoked", "token expired", "token deleted", "grant revoked", "grant deleted", "person left"])
def test_a_remembered_token_ended_elsewhere_is_refused_at_the_next_request(browser, live, tenant, statement):
    token = _remembered(browser, tenant)
    elsewhere(live.settings.database_url)(statement, (sha256_hex(token),))
    assert call_tool_raw(browser, token, "list_workspaces").status_code == 401


def test_using_or_issuing_tokens_leaves_every_remembered_token_standing(browser, live, tenant):
    token = _remembered(browser, tenant)  # its first use wrote the grant's lastUsedAt
    with connection():
        before = oauth_token_epoch()
    elsewhere(live.settings.database_url)(
        f"UPDATE o_auth_grant SET last_used_at = NULL WHERE id = {THE_TOKEN.format(column='grant_id')}",
        (sha256_hex(token),))
    assert call_tool_raw(browser, token, "list_workspaces").status_code == 200  # writes lastUsedAt again
    _remembered(browser, tenant)  # another connected app: a grant, a token, their first use
    with connection():
        assert oauth_token_epoch() == before
