"""Dashboard sessions end server-side: sign-out, a password change and a removal from a workspace
end them at once, in every process, also for a copied cookie."""

from __future__ import annotations

import httpx2
import pytest

from service.identity import users, workspaces
from storage.db import connection, db
from storage.models import DashboardSession, Membership
from tests.support.live_server import free_port
from tests.support.oauth_flow import browser_sign_in, email_of, hidden
from tests.support.processes import serve_process

pytestmark = pytest.mark.shared_service


PASSWORD = "correct horse"


# service's settings, for the processes a test starts beside it.
@pytest.fixture
def service(live):
    return live.settings


def _signed_in(http: httpx2.Client) -> bool:
    answer = http.get("/dashboard")
    assert answer.status_code in (200, 303), answer.status_code
    return answer.status_code == 200


def _copy(http: httpx2.Client, base_url: str) -> httpx2.Client:
    """Another client holding the very same cookie: what a thief would do with a copied cookie."""
    thief = httpx2.Client(base_url=base_url, timeout=30)
    thief.cookies.set("switchboard_session", http.cookies["switchboard_session"])
    return thief


def test_a_copied_cookie_stops_working_once_its_session_signs_out(server_url, tenant):
    with httpx2.Client(base_url=server_url, timeout=30) as browser:
        browser_sign_in(browser, email_of(tenant["userId"]), PASSWORD)
        with _copy(browser, server_url) as thief:
            assert _signed_in(thief)
            page = browser.get("/dashboard/logout")
            assert browser.post("/dashboard/logout", data={"csrf_token": hidden(page.text, "csrf_token")}
                                ).status_code == 303
            assert not _signed_in(thief)
            assert thief.get("/dashboard/api-keys").status_code == 303
    with connection():
        assert DashboardSession.select().where(DashboardSession.user == tenant["userId"]).count() == 0


def test_signing_out_ends_only_that_session(server_url, tenant):
    with httpx2.Client(base_url=server_url, timeout=30) as laptop, \
         httpx2.Client(base_url=server_url, timeout=30) as phone:
        browser_sign_in(laptop, email_of(tenant["userId"]), PASSWORD)
        browser_sign_in(phone, email_of(tenant["userId"]), PASSWORD)
        page = laptop.get("/dashboard/logout")
        laptop.post("/dashboard/logout", data={"csrf_token": hidden(page.text, "csrf_token")})
        assert not _signed_in(laptop)
        assert _signed_in(phone)


def test_a_password_change_ends_every_session_of_the_person(server_url, tenant):
    email = email_of(tenant["userId"])
    with httpx2.Client(base_url=server_url, timeout=30) as laptop, \
         httpx2.Client(base_url=server_url, timeout=30) as phone:
        browser_sign_in(laptop, email, PASSWORD)
        browser_sign_in(phone, email, PASSWORD)
        with connection():
            users.set_password(email=email, password="a brand new passphrase")
        assert not _signed_in(laptop)
        assert not _signed_in(phone)
        browser_sign_in(laptop, email, "a brand new passphrase")
        assert _signed_in(laptop)


def test_removing_a_member_ends_their_sessions(server_url, tenant):
    password_hash = users.hash_password(PASSWORD)
    with connection(), db.atomic():
        member = users.create_user(email="member@example.com", password_hash=password_hash)
        Membership.create(user=member.id, workspace=tenant["workspaceId"], role="member")
    with httpx2.Client(base_url=server_url, timeout=30) as browser:
        browser_sign_in(browser, "member@example.com", PASSWORD)
        assert _signed_in(browser)
        with connection(), db.atomic():
            workspaces.remove_member(workspace_id=tenant["workspaceId"], user_id=member.id)
        assert not _signed_in(browser)


def test_the_last_owner_cannot_be_removed(service, tenant):
    from kit.errors import Conflict

    with connection(), db.atomic(), pytest.raises(Conflict):
        workspaces.remove_member(workspace_id=tenant["workspaceId"], user_id=tenant["userId"])


def test_a_session_ended_in_one_process_is_refused_by_another(service, tenant):
    email = email_of(tenant["userId"])
    with serve_process(service, free_port(), "--no-worker") as first, \
         serve_process(service, free_port(), "--no-worker") as second, \
         httpx2.Client(base_url=first, timeout=30) as browser:
        browser_sign_in(browser, email, PASSWORD)
        with _copy(browser, second) as elsewhere:
            assert _signed_in(elsewhere)
            page = browser.get("/dashboard/logout")
            browser.post("/dashboard/logout", data={"csrf_token": hidden(page.text, "csrf_token")})
            assert not _signed_in(elsewhere)


def test_the_set_password_command_ends_the_persons_sessions(server_url, service, tenant):
    import subprocess

    from tests.support.processes import service_env, switchboard

    email = email_of(tenant["userId"])
    env = service_env(service)
    with httpx2.Client(base_url=server_url, timeout=30) as browser:
        browser_sign_in(browser, email, PASSWORD)
        short = subprocess.run(switchboard("users", "set-password", "--email", email, "--password", "short"),
                               env=env, capture_output=True, text=True, timeout=60)
        assert short.returncode == 1
        assert "password must be at least 8 characters long" in short.stderr
        assert _signed_in(browser)
        done = subprocess.run(switchboard("users", "set-password", "--email", email, "--password", "another passphrase"),
                              env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert not _signed_in(browser)
        browser_sign_in(browser, email, "another passphrase")
        assert _signed_in(browser)
