"""`make screenshots`: the console's pages at 1280 px, from a fresh service with a seeded sandbox.

Starts `switchboard serve` on a throwaway data dir with the sandbox on, connects one sandbox account
per platform (`switchboard sandbox seed`'s own code), lets contacts write, answers one, adds a
webhook endpoint and a key, then signs in with Chromium (Debian's package, through Playwright) and
saves each page into docs/screenshots/. Run it again whenever the pages change.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2
from playwright.sync_api import sync_playwright

from switchboard.sandbox_seed import seed

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "screenshots"
BIN = Path(sys.executable).parent / "switchboard"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
EMAIL, PASSWORD = "owner@example.com", "a sandbox password"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_until_up(base: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit("switchboard serve stopped while starting")
        try:
            if httpx2.get(base + "/v1/health", timeout=2).status_code == 200:
                return
        except httpx2.TransportError:
            pass
        time.sleep(0.2)
    raise SystemExit("switchboard serve did not start within 60 s")


def _populate(base: str, made: dict[str, str]) -> None:
    """What a week of use leaves: accounts, conversations with replies, an endpoint and its log, keys."""
    auth = {"Authorization": f"Bearer {made['apiKey']}"}
    accounts = seed(base, api_key=made["apiKey"], profile_id=made["profileId"])
    with httpx2.Client(base_url=base, timeout=30) as http:
        http.post("/v1/profiles", headers=auth, json={"name": "Corner Bakery"}).raise_for_status()
        for n, (platform, account_id) in enumerate(sorted(accounts.items())):
            # Platforms without a follower count answer 422; their column stays empty.
            http.post(f"/sandbox/{platform}/followers", json={"accountId": account_id, "followers": 1200 + 377 * n})
        contacts = [("telegram", {"id": "5001", "name": "Ada Lovelace"}, "Hi! Are you open on Sunday?"),
                    ("whatsapp", {"id": "15551234567", "name": "Lin Chen"}, "Can I order a birthday cake?"),
                    ("telegram", {"id": "5002", "name": "Grace Hopper"}, "Thanks for the quick delivery"),
                    ("instagram", {"id": "9001", "name": "Tim"}, "Love the new croissants 🥐")]
        for platform, sender, text in contacts:
            http.post(f"/sandbox/{platform}/inbound-message",
                      json={"accountId": accounts[platform], "from": sender, "text": text}).raise_for_status()
        listed = http.get("/v1/conversations", headers=auth).json()["data"]
        ada = next(c for c in listed if c.get("contactName") == "Ada Lovelace")
        http.post(f"/v1/conversations/{ada['id']}/messages", headers=auth,
                  json={"text": "Yes, from 8 to 14. See you!"}).raise_for_status()
        http.post("/sandbox/telegram/inbound-message", json={
            "accountId": accounts["telegram"], "from": {"id": "5001", "name": "Ada Lovelace"},
            "text": "Perfect, I'll come by at 10"}).raise_for_status()
        hook = http.post("/v1/webhooks", headers=auth, json={
            "url": "https://localhost:1/hooks/switchboard", "description": "CRM sync",
            "events": ["message.received", "message.sent", "account.connected"]}).json()
        http.post(f"/v1/webhooks/{hook['id']}/test", headers=auth).raise_for_status()
        http.post("/v1/api-keys", headers=auth, json={"name": "Bakery website", "scope": "profiles",
                                                     "profileIds": [made["profileId"]], "permission": "read",
                                                     "expiresInDays": 90}).raise_for_status()
        http.get("/v1/workspaces", headers=auth)
    os.environ["SCREENSHOT_CONVERSATION"] = ada["id"]
    os.environ["SCREENSHOT_WEBHOOK"] = hook["id"]


def _shoot(base: str) -> list[Path]:
    pages = [
        ("accounts", "/dashboard/accounts"),
        ("inbox", f"/dashboard/inbox/{os.environ['SCREENSHOT_CONVERSATION']}"),
        ("webhooks", "/dashboard/webhooks"),
        ("webhook", f"/dashboard/webhooks/{os.environ['SCREENSHOT_WEBHOOK']}"),
        ("api-keys", "/dashboard/api-keys"),
        ("connected-apps", "/dashboard/settings/connected-apps"),
    ]
    saved = []
    OUT.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        tab = browser.new_page(viewport={"width": 1280, "height": 860})
        tab.goto(base + "/dashboard/login")
        saved.append(OUT / "sign-in.png")
        tab.screenshot(path=str(saved[-1]))
        tab.get_by_label("E-mail").fill(EMAIL)
        tab.get_by_label("Password").fill(PASSWORD)
        tab.get_by_role("button", name="Sign in").click()
        tab.wait_for_url(base + "/dashboard")
        for name, path in pages:
            tab.goto(base + path)
            tab.wait_for_load_state("networkidle")
            saved.append(OUT / f"{name}.png")
            tab.screenshot(path=str(saved[-1]), full_page=True)
        browser.close()
    return saved


def main() -> int:
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="switchboard-screens-") as data:
        env = {**os.environ, "SWITCHBOARD_DATA_DIR": data, "SWITCHBOARD_SANDBOX": "1", "SWITCHBOARD_BASE_URL": base,
               "SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE": "1"}
        made = json.loads(subprocess.run([str(BIN), "bootstrap", "--email", EMAIL, "--password", PASSWORD, "--json"],
                                         env=env, check=True, capture_output=True).stdout)
        server = subprocess.Popen([str(BIN), "serve", "--port", str(port)], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_until_up(base, server)
            _populate(base, made)
            # Follower counts come from snapshots; take today's now instead of waiting for the daily one.
            subprocess.run([str(BIN), "analytics", "snapshot"], env=env, check=True, capture_output=True)
            saved = _shoot(base)
        finally:
            server.terminate()
            server.wait(timeout=30)
    for path in saved:
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
