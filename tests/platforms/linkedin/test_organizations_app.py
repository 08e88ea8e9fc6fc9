"""LinkedIn organizations by the Community Management API's own app: LinkedIn requires that product
be the only one of its app, so the sandbox refuses a consent mixing member and organization scopes,
and an organizations app's token at `/v2/userinfo` (OpenID Connect is a member product)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode, urlsplit

from platforms.linkedin.adapter import ORGANIZATION_SCOPES, ORGANIZATIONS, SCOPES


def _consent(sandbox, client_id: str, scopes: tuple[str, ...], hint: str) -> dict[str, list[str]]:
    query = urlencode({"response_type": "code", "client_id": client_id, "state": "s",
                       "redirect_uri": "https://switchboard.example/cb", "scope": " ".join(scopes),
                       "login_hint": hint, "reach": "3"})
    answer = sandbox.client.get(sandbox.url("linkedin", f"oauth/v2/authorization?{query}"))
    assert answer.status_code == 302
    return parse_qs(urlsplit(answer.headers["location"]).query)


def test_one_app_asking_member_and_organization_scopes_is_refused(sandbox):
    member_app = sandbox.config.oauth_clients["linkedin"].client_id
    org_app = sandbox.config.oauth_clients["linkedin_org"].client_id
    mixed = _consent(sandbox, member_app, SCOPES + ORGANIZATION_SCOPES, "li.mixed")
    assert mixed["error"] == ["unauthorized_scope_error"]
    assert _consent(sandbox, org_app, (*ORGANIZATION_SCOPES, "openid"), "li.mixed")["error"] == [
        "unauthorized_scope_error"]
    assert "code" in _consent(sandbox, member_app, SCOPES, "li.mixed")
    assert "code" in _consent(sandbox, org_app, ORGANIZATION_SCOPES, "li.mixed")


def test_the_organizations_app_reaches_the_organizations_without_userinfo(sandbox):
    adapter = sandbox.adapters["linkedin"]
    redirect = "https://switchboard.example/cb"
    url = adapter.product_authorize_url(ORGANIZATIONS, state="s", redirect_uri=redirect)
    query = parse_qs(urlsplit(url).query)
    assert query["client_id"] == [sandbox.config.oauth_clients["linkedin_org"].client_id]
    assert query["scope"][0].split() == list(ORGANIZATION_SCOPES)
    answer = sandbox.client.get(url + "&login_hint=li.orgs&reach=3")
    code = parse_qs(urlsplit(answer.headers["location"]).query)["code"][0]
    choices = adapter.exchange_product_code(ORGANIZATIONS, code=code, redirect_uri=redirect)
    assert [choice.kind for choice in choices] == ["organization", "organization"]
    token = choices[0].identity.credentials["accessToken"]
    assert choices[0].identity.credentials["authorUrn"] == f"urn:li:organization:{choices[0].identity.platform_account_id}"
    refused = sandbox.client.get(sandbox.url("linkedin", "v2/userinfo"), headers={"Authorization": f"Bearer {token}"})
    assert refused.status_code == 403
    # The member app's token posts as the member, never as an organization.
    member = sandbox.account("linkedin")
    as_org = sandbox.client.post(sandbox.url("linkedin", "rest/posts"), headers={
        "Authorization": f"Bearer {member.credentials['accessToken']}", "LinkedIn-Version": "202610",
        "X-Restli-Protocol-Version": "2.0.0"}, json={
        "author": "urn:li:organization:1", "commentary": "hi", "visibility": "PUBLIC", "lifecycleState": "PUBLISHED",
        "distribution": {"feedDistribution": "MAIN_FEED"}})
    assert as_org.status_code == 403
