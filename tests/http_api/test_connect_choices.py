"""A grant that reaches several Pages, ad accounts, organizations or channels: the person chooses
which to connect (CONTRACT section 3, `/v1/connect/{platform}/choices`), over real HTTP to the sandbox."""

import threading
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from kit import clock
from service.accounts import adapters
from service.analytics import ops as analytics
from storage.db import connection
from storage.models import ConnectSelection
from tests.conftest import bearer
from tests.support.factories import add_key, add_profile
from tests.support.posts import sent_posts, wait_settled

pytestmark = pytest.mark.shared_service


def _grant(client, tenant, platform, reach, redirect_url=None):
    """Start a connect, let the sandbox's consent page grant `reach` things, follow it back."""
    params = {"profileId": tenant["profileId"]}
    if redirect_url:
        params["redirectUrl"] = redirect_url
    start = client.get(f"/v1/connect/{platform}", headers=bearer(tenant["apiKey"]), params=params)
    assert start.status_code == 200, start.text
    consent = client.get(start.json()["authUrl"] + f"&reach={reach}")
    assert consent.status_code == 302
    return client.get(consent.headers["location"])


def _accounts(client, tenant, platform):
    return client.get("/v1/accounts", headers=bearer(tenant["apiKey"]), params={"platform": platform}).json()["data"]


def test_three_pages_are_offered_and_the_two_chosen_each_post_and_receive(client, tenant):
    h = bearer(tenant["apiKey"])
    callback = _grant(client, tenant, "facebook", 3)
    assert callback.status_code == 200, callback.text
    offered = callback.json()
    assert offered["selection"].startswith("sel_")
    assert offered["platform"] == "facebook"
    assert len(offered["choices"]) == 3
    assert _accounts(client, tenant, "facebook") == []  # nothing connected before the choice

    listed = client.get("/v1/connect/facebook/choices", headers=h, params={"selection": offered["selection"]})
    assert listed.status_code == 200, listed.text
    choices = listed.json()["data"]
    assert [c["kind"] for c in choices] == ["page", "page", "page"]
    assert len({c["id"] for c in choices}) == 3 and all(c["name"] for c in choices)

    picked = [choices[0]["id"], choices[2]["id"]]
    chosen = client.post("/v1/connect/facebook/choices", headers=h,
                         json={"selection": offered["selection"], "ids": picked})
    assert chosen.status_code == 201, chosen.text
    accounts = chosen.json()["data"]
    assert [a["platformAccountId"] for a in accounts] == picked
    assert {a["displayName"] for a in accounts} == {choices[0]["name"], choices[2]["name"]}
    assert sorted(a["id"] for a in _accounts(client, tenant, "facebook")) == sorted(a["id"] for a in accounts)

    # Each chosen Page is an account of its own: it publishes, and its contacts' messages arrive.
    post = client.post("/v1/posts", headers=h, json={
        "content": "Hello from both", "publishNow": True,
        "targets": [{"accountId": account["id"]} for account in accounts]})
    assert post.status_code == 201, post.text
    assert wait_settled(client, tenant, post.json()["id"])["status"] == "published"
    for index, account in enumerate(accounts):
        assert [row["text"] for row in sent_posts(client, "facebook", account["id"])] == ["Hello from both"]
        wrote = client.post("/sandbox/facebook/inbound-message", json={
            "accountId": account["id"], "from": {"id": f"77{index}", "name": f"Reader {index}"}, "text": "Hi page"})
        assert wrote.status_code == 200 and wrote.json()["delivered"] is True
        conversations = client.get("/v1/conversations", headers=h, params={"accountId": account["id"]}).json()
        assert [c["externalConversationId"] for c in conversations["data"]] == [f"77{index}"]
        reply = client.post(f"/v1/conversations/{conversations['data'][0]['id']}/messages", headers=h,
                            json={"text": "Thanks!"})
        assert reply.status_code == 201, reply.text

    # Spent: the same selection offers nothing more, and its tokens are gone from storage.
    again = client.post("/v1/connect/facebook/choices", headers=h,
                        json={"selection": offered["selection"], "ids": [choices[1]["id"]]})
    assert again.status_code == 404
    assert again.json()["error"]["code"] == "not_found"
    assert client.get("/v1/connect/facebook/choices", headers=h,
                      params={"selection": offered["selection"]}).status_code == 404
    with connection():
        assert [row.choices for row in ConnectSelection.select().where(
            ConnectSelection.workspace == tenant["workspaceId"])] == [None]


def test_a_grant_reaching_one_page_connects_it_at_once(client, tenant):
    callback = _grant(client, tenant, "facebook", 1)
    assert callback.status_code == 200, callback.text
    account = callback.json()
    assert account["id"].startswith("acc_") and account["platform"] == "facebook"
    assert [a["id"] for a in _accounts(client, tenant, "facebook")] == [account["id"]]


def test_a_redirect_carries_the_selection_and_ad_accounts_are_chosen_alike(client, tenant):
    callback = _grant(client, tenant, "meta_ads", 2, redirect_url="https://app.example.com/done?x=1")
    assert callback.status_code == 303
    location = callback.headers["location"]
    assert location.startswith("https://app.example.com/done?x=1&selection=sel_")
    selection = parse_qs(urlsplit(location).query)["selection"][0]
    h = bearer(tenant["apiKey"])
    choices = client.get("/v1/connect/meta_ads/choices", headers=h, params={"selection": selection}).json()["data"]
    assert [c["kind"] for c in choices] == ["ad_account", "ad_account"]
    chosen = client.post("/v1/connect/meta_ads/choices", headers=h,
                         json={"selection": selection, "ids": [c["id"] for c in choices]})
    assert chosen.status_code == 201, chosen.text
    assert sorted(a["platformAccountId"] for a in chosen.json()["data"]) == sorted(c["id"] for c in choices)


def test_a_selection_belongs_to_its_workspace_and_refuses_what_it_does_not_offer(client, tenant, other_tenant):
    selection = _grant(client, tenant, "facebook", 2).json()["selection"]
    h, other = bearer(tenant["apiKey"]), bearer(other_tenant["apiKey"])
    choices = client.get("/v1/connect/facebook/choices", headers=h, params={"selection": selection}).json()["data"]

    foreign = client.get("/v1/connect/facebook/choices", headers=other, params={"selection": selection})
    assert foreign.status_code == 404
    taken = client.post("/v1/connect/facebook/choices", headers=other,
                        json={"selection": selection, "ids": [choices[0]["id"]]})
    assert taken.status_code == 404
    wrong_platform = client.get("/v1/connect/meta_ads/choices", headers=h, params={"selection": selection})
    assert wrong_platform.status_code == 404
    # Inside the workspace: a read key sees the choices but cannot choose; a key for other profiles neither.
    read = bearer(add_key(tenant["workspaceId"], permission="read"))
    assert client.get("/v1/connect/facebook/choices", headers=read, params={"selection": selection}).status_code == 200
    assert client.post("/v1/connect/facebook/choices", headers=read,
                       json={"selection": selection, "ids": [choices[0]["id"]]}).status_code == 403
    elsewhere = add_profile(tenant["workspaceId"], "Elsewhere")
    narrow = bearer(add_key(tenant["workspaceId"], scope="profiles", profile_ids=[elsewhere]))
    assert client.get("/v1/connect/facebook/choices", headers=narrow, params={"selection": selection}).status_code == 403

    unknown = client.post("/v1/connect/facebook/choices", headers=h,
                          json={"selection": selection, "ids": [choices[0]["id"], "999"]})
    assert unknown.status_code == 422
    assert unknown.json()["error"]["details"] == [{"field": "ids[1]", "message": "is not one of the choices"}]
    empty = client.post("/v1/connect/facebook/choices", headers=h, json={"selection": selection, "ids": []})
    assert empty.status_code == 422
    assert client.get("/v1/connect/facebook/choices", headers=h).status_code == 422
    assert _accounts(client, tenant, "facebook") == [] and _accounts(client, other_tenant, "facebook") == []

    # Still usable after those refusals, until it expires.
    assert client.get("/v1/connect/facebook/choices", headers=h, params={"selection": selection}).status_code == 200
    clock.advance(31 * 60)
    expired = client.post("/v1/connect/facebook/choices", headers=h,
                          json={"selection": selection, "ids": [choices[0]["id"]]})
    assert expired.status_code == 404
    assert "expired" in expired.json()["error"]["message"]
    assert _accounts(client, tenant, "facebook") == []


def test_linkedin_connects_the_member_and_with_its_own_app_the_organizations_they_administer(client, tenant):
    """The member by the member app; the organizations by the Community Management API's own app
    (LinkedIn requires it be the only product of its app), a connect of its own."""
    h = bearer(tenant["apiKey"])
    start = client.get("/v1/connect/linkedin", headers=h, params={"profileId": tenant["profileId"]}).json()
    consent = client.get(start["authUrl"] + "&reach=3&login_hint=li.admin")
    member_account = client.get(consent.headers["location"]).json()  # the member app reaches the member alone
    assert member_account["platform"] == "linkedin" and member_account["status"] == "connected"
    member = {"id": member_account["platformAccountId"]}

    org_start = client.get("/v1/connect/linkedin", headers=h,
                           params={"profileId": tenant["profileId"], "product": "organizations"}).json()
    org_query = parse_qs(urlsplit(org_start["authUrl"]).query)
    assert org_query["client_id"] == [adapters.config().oauth_clients["linkedin_org"].client_id]
    assert sorted(org_query["scope"][0].split()) == ["r_organization_social", "rw_organization_admin",
                                                     "w_organization_social"]
    org_consent = client.get(org_start["authUrl"] + "&login_hint=li.admin")
    offered = client.get(org_consent.headers["location"]).json()
    assert [c["kind"] for c in offered["choices"]] == ["organization", "organization"]
    organization = offered["choices"][1]
    assert organization["name"].startswith("Sandbox Organization")
    chosen = client.post("/v1/connect/linkedin/choices", headers=h,
                         json={"selection": offered["selection"], "ids": [organization["id"]]})
    assert chosen.status_code == 201, chosen.text
    [org_account] = chosen.json()["data"]
    assert org_account["platformAccountId"] == organization["id"]

    post = client.post("/v1/posts", headers=h, json={
        "content": "News from the company", "publishNow": True,
        "targets": [{"accountId": org_account["id"]}, {"accountId": member_account["id"]}]})
    assert post.status_code == 201, post.text
    assert wait_settled(client, tenant, post.json()["id"])["status"] == "published"
    [as_org] = sent_posts(client, "linkedin", org_account["id"])
    assert as_org["payload"]["author"] == f"urn:li:organization:{organization['id']}"
    [as_member] = sent_posts(client, "linkedin", member_account["id"])
    assert as_member["payload"]["author"] == f"urn:li:person:{member['id']}"

    # The organization's post takes its first comment and is deleted as the organization's; its
    # followers are the organization's.
    commented = client.post("/v1/posts", headers=h, json={
        "content": "Launch day", "publishNow": True,
        "targets": [{"accountId": org_account["id"], "options": {"firstComment": "Details below"}}]})
    assert wait_settled(client, tenant, commented.json()["id"])["status"] == "published"
    rows = client.get("/sandbox/linkedin/sent", params={"accountId": org_account["id"]}).json()["data"]
    assert rows[-1]["kind"] == "comment"
    assert rows[-1]["payload"]["actor"] == f"urn:li:organization:{organization['id']}"
    gone = client.delete(f"/v1/posts/{commented.json()['id']}", headers=h, params={"fromPlatforms": "true"})
    assert gone.status_code == 200, gone.text
    assert [row["deleted"] for row in gone.json()["platforms"]] == [True]
    assert client.post("/sandbox/linkedin/followers",
                       json={"accountId": org_account["id"], "followers": 812}).status_code == 200
    [snapshot] = analytics.take_now(account_ids=[org_account["id"]])
    assert (snapshot.outcome, snapshot.followers) == ("taken", 812)


def test_youtube_offers_each_channel_the_grant_reaches(client, tenant):
    h = bearer(tenant["apiKey"])
    offered = _grant(client, tenant, "youtube", 2).json()
    assert [c["kind"] for c in offered["choices"]] == ["channel", "channel"]
    chosen = client.post("/v1/connect/youtube/choices", headers=h,
                         json={"selection": offered["selection"], "ids": [offered["choices"][1]["id"]]})
    assert chosen.status_code == 201, chosen.text
    [account] = chosen.json()["data"]
    assert (account["platformAccountId"], account["displayName"]) == (
        offered["choices"][1]["id"], offered["choices"][1]["name"])
    assert [a["id"] for a in _accounts(client, tenant, "youtube")] == [account["id"]]


def test_two_choices_made_at_once_with_one_selection_connect_once(client, server_url, tenant):
    selection = _grant(client, tenant, "facebook", 2).json()["selection"]
    h = bearer(tenant["apiKey"])
    ids = [c["id"] for c in client.get("/v1/connect/facebook/choices", headers=h,
                                       params={"selection": selection}).json()["data"]]
    start = threading.Barrier(2)

    def choose() -> int:
        with httpx2.Client(base_url=server_url, timeout=30) as own:
            start.wait()
            return own.post("/v1/connect/facebook/choices", headers=h,
                            json={"selection": selection, "ids": ids}).status_code

    with ThreadPoolExecutor(2) as pool:
        statuses = sorted(pool.map(lambda _: choose(), range(2)))
    assert statuses == [201, 404]
    assert len(_accounts(client, tenant, "facebook")) == 2
