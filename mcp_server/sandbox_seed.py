"""`switchboard sandbox seed`: connect one sandbox account per platform, through the running service.

The emulator keeps its accounts in the serving process's memory, so seeding goes through that
process over HTTP, exactly as a person would: OAuth platforms through their (auto-approving)
consent page and our callback, Telegram and WhatsApp with the tokens the sandbox hands out.
"""

from __future__ import annotations

from typing import Any

import httpx2

from platforms.base import PLATFORMS

TOKEN_PLATFORMS = ("telegram", "whatsapp")


def connect(
    http: httpx2.Client, *, api_key: str, profile_id: str, platform: str, username: str | None = None
) -> dict[str, Any]:
    """Connect one sandbox account of `platform` to the profile; return the account record."""
    auth = {"Authorization": f"Bearer {api_key}"}
    if platform in TOKEN_PLATFORMS:
        made = http.post(f"/sandbox/{platform}/accounts", json={"username": username} if username else {})
        made.raise_for_status()
        body = {"profileId": profile_id, **made.json()["credentials"]}
        answer = http.post(f"/v1/connect/{platform}", headers=auth, json=body)
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
    return callback.json()


def seed(base_url: str, *, api_key: str, profile_id: str) -> dict[str, str]:
    with httpx2.Client(base_url=base_url, timeout=30) as http:
        return {
            platform: connect(http, api_key=api_key, profile_id=profile_id, platform=platform)["id"]
            for platform in PLATFORMS
        }
