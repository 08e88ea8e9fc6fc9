"""`switchboard sandbox seed`: connect one sandbox account per platform, through the running service.

The emulator's accounts live in the process that serves it, so seeding goes through the service
over HTTP, exactly as a person would: OAuth platforms through their (auto-approving) consent page
and our callback, Telegram and WhatsApp with test credentials (any well-formed one connects in the
sandbox). It is idempotent: a platform where the profile already has an account is left as it is,
and the credentials and consent hints are derived from the profile id, so seeding the same profile
again (even after a disconnect) reconnects the same platform accounts, which keep their ids.
"""

from __future__ import annotations

import hashlib
from typing import Any

import httpx2

from platforms.base import PLATFORMS

TOKEN_PLATFORMS = ("telegram", "whatsapp")


def _digits(seed: str, count: int) -> str:
    return str(int(hashlib.sha256(seed.encode()).hexdigest(), 16))[-count:].rjust(count, "0")


def test_credentials(platform: str, profile_id: str) -> dict[str, str]:
    """Sandbox credentials of the profile's own test bot or number, the same on every call."""
    tag = hashlib.sha256(f"sandbox-seed:{platform}:{profile_id}".encode()).hexdigest()
    if platform == "telegram":
        return {"botToken": f"6{_digits(tag, 9)}:AA{tag[:33]}"}
    return {
        "phoneNumberId": "3" + _digits(tag + ":phone", 14),
        "wabaId": "4" + _digits(tag + ":waba", 14),
        "accessToken": f"EAAW{tag}",
    }


def connect(
    http: httpx2.Client, *, api_key: str, profile_id: str, platform: str, username: str | None = None
) -> dict[str, Any]:
    """Connect one sandbox account of `platform` to the profile; return the account record.
    `username` names the account (the same name, the same account); without it, a new one."""
    auth = {"Authorization": f"Bearer {api_key}"}
    if platform in TOKEN_PLATFORMS:
        if username:
            credentials = test_credentials(platform, username)
        else:
            made = http.post(f"/sandbox/{platform}/accounts", json={})
            made.raise_for_status()
            credentials = made.json()["credentials"]
        answer = http.post(f"/v1/connect/{platform}", headers=auth, json={"profileId": profile_id, **credentials})
        answer.raise_for_status()
        return answer.json()
    started = http.get(f"/v1/connect/{platform}", headers=auth, params={"profileId": profile_id})
    started.raise_for_status()
    url = started.json()["authUrl"]
    if username:
        url += f"&login_hint={username}"
    consent = http.get(url)  # the sandbox's consent page approves at once and redirects to our callback
    if consent.status_code not in (302, 303, 307):
        raise RuntimeError(f"the sandbox consent page answered {consent.status_code}")
    callback = http.get(consent.headers["location"])
    callback.raise_for_status()
    account: dict[str, Any] = callback.json()
    if platform == "tiktok":
        account = _connect_tiktok_messaging(http, auth, account, username)
    return account


def _connect_tiktok_messaging(http: httpx2.Client, auth: dict[str, str], account: dict[str, Any],
                              username: str | None) -> dict[str, Any]:
    """TikTok messaging's own grant (TikTok API for Business), the second step of a TikTok account:
    a personal account, which TikTok offers no messaging, keeps the account as it is."""
    started = http.get(f"/v1/connect/tiktok/{account['id']}/grants/messaging", headers=auth)
    started.raise_for_status()
    url = started.json()["authUrl"] + (f"&login_hint={username}" if username else "")
    consent = http.get(url)  # signed in to TikTok since the first consent: the same account
    if consent.status_code not in (302, 303, 307):
        raise RuntimeError(f"the sandbox business consent page answered {consent.status_code}")
    callback = http.get(consent.headers["location"])
    if callback.status_code == 422:
        return account
    callback.raise_for_status()
    granted: dict[str, Any] = callback.json()
    return granted


def seed(base_url: str, *, api_key: str, profile_id: str) -> dict[str, str]:
    auth = {"Authorization": f"Bearer {api_key}"}
    with httpx2.Client(base_url=base_url, timeout=30) as http:
        listed = http.get("/v1/accounts", headers=auth, params={"profileId": profile_id, "limit": 100})
        listed.raise_for_status()
        have = {a["platform"]: a["id"] for a in listed.json()["data"] if a["status"] == "connected"}
        return {
            platform: have.get(platform)
            or connect(http, api_key=api_key, profile_id=profile_id, platform=platform,
                       username=f"seed_{profile_id}")["id"]
            for platform in PLATFORMS
        }
