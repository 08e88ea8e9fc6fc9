"""`make screenshots`: the console's pages at 1280 px, from a fresh service with a seeded sandbox.

Starts `switchboard serve` on a throwaway data dir with the sandbox on, connects one sandbox account
per platform (`switchboard sandbox seed`'s own code), lets contacts write, answers one, adds a
webhook endpoint and a key, then signs in with Chromium (Debian's package, through Playwright) and
saves each page into docs/screenshots/. Run it again whenever the pages change.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import socket
import sqlite3
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
        _studio(http, auth, accounts)
    os.environ["SCREENSHOT_CONVERSATION"] = ada["id"]
    os.environ["SCREENSHOT_WEBHOOK"] = hook["id"]


PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108020000009077"
                    "53de0000000c4944415408d763f8cfc0f01f0005000201c0a2e9c40000000049454e44ae426082")


def _studio(http: httpx2.Client, auth: dict[str, str], accounts: dict[str, str]) -> None:
    """The studio's side of that week: posts published and scheduled over the month, a picture, a
    broadcast sent, a comment automation that answered a comment, a sequence with an enrolment."""
    upload = http.post("/v1/media/uploads", headers=auth, json={"filename": "croissants.png",
                                                                "contentType": "image/png", "size": len(PNG)}).json()
    http.put(f"/v1/media/uploads/{upload['token']}", content=PNG).raise_for_status()
    http.post(f"/v1/media/uploads/{upload['token']}/complete", headers=auth).raise_for_status()
    published = http.post("/v1/posts", headers=auth, json={
        "content": "Fresh croissants every morning from 7 🥐",
        "targets": [{"accountId": accounts["x"]}, {"accountId": accounts["facebook"]},
                    {"accountId": accounts["linkedin"], "content": "Our bakery now opens at 7 every morning."}],
        "publishNow": True}).json()
    today = dt.datetime.now(dt.UTC).date()
    texts = ["Sunday brunch menu", "New sourdough recipe", "Meet our bakers", "Holiday opening hours",
             "Cake of the week", "Behind the ovens", "Customer of the month"]
    for n, text in enumerate(texts * 2):
        day = today + dt.timedelta(days=1 + n * 2 % 24)
        http.post("/v1/posts", headers=auth, json={
            "content": text, "targets": [{"accountId": accounts["x" if n % 2 else "linkedin"]}],
            "scheduledFor": f"{day.isoformat()}T{9 + n % 8:02d}:30:00", "timezone": "Europe/Paris"}).raise_for_status()
    http.put(f"/v1/accounts/{accounts['linkedin']}/queue", headers=auth, json={
        "timezone": "Europe/Paris", "slots": [{"weekday": 2, "time": "09:00"}, {"weekday": 4, "time": "17:30"}]})
    broadcast = http.post("/v1/broadcasts", headers=auth, json={
        "accountId": accounts["telegram"], "name": "Weekend offer", "text": "Two croissants for one this weekend!",
        "buttonLabel": "Order now", "buttonUrl": "https://bakery.example.com/order", "sendNow": True}).json()
    automation = http.post("/v1/comment-automations", headers=auth, json={
        "accountId": accounts["instagram"], "name": "Price list", "keywords": ["price", "menu"],
        "matchType": "contains", "dmText": "Here is our price list 🥖", "dmButtonLabel": "See prices",
        "dmButtonUrl": "https://bakery.example.com/prices", "publicReplyText": "Sent you a DM!",
        "oncePerUser": True}).json()
    http.post("/sandbox/instagram/comment", json={"accountId": accounts["instagram"], "mediaId": "m1",
                                                  "from": {"id": "9102", "handle": "hungry.sam"},
                                                  "text": "What's the price of the cake?"}).raise_for_status()
    sequence = http.post("/v1/sequences", headers=auth, json={
        "accountId": accounts["telegram"], "name": "Welcome", "trigger": "conversation_started", "stopOnReply": True,
        "steps": [{"delayMinutes": 0, "text": "Welcome to the Corner Bakery!"},
                  {"delayMinutes": 1440, "text": "Fancy a croissant?", "buttonLabel": "Order",
                   "buttonUrl": "https://bakery.example.com/order"}]}).json()
    grace = next(c for c in http.get("/v1/conversations", headers=auth).json()["data"]
                 if c.get("contactName") == "Grace Hopper")
    http.post(f"/v1/sequences/{sequence['id']}/enroll", headers=auth,
              json={"conversationId": grace["id"]}).raise_for_status()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and http.get(f"/v1/broadcasts/{broadcast['id']}",
                                                   headers=auth).json()["status"] != "completed":
        time.sleep(0.2)
    os.environ["SCREENSHOT_POST"] = published["id"]
    os.environ["SCREENSHOT_BROADCAST"] = broadcast["id"]
    os.environ["SCREENSHOT_AUTOMATION"] = automation["id"]
    os.environ["SCREENSHOT_SEQUENCE"] = sequence["id"]
    os.environ["SCREENSHOT_INSTAGRAM"] = accounts["instagram"]


def _past_followers(data: str) -> None:
    """Thirty days of follower counts for the Instagram account, as the daily snapshots leave them
    (the analytics chart needs more than today's), written straight into the throwaway database."""
    account = os.environ["SCREENSHOT_INSTAGRAM"]
    today = dt.datetime.now(dt.UTC).date()
    with sqlite3.connect(Path(data) / "switchboard.db") as db:
        for n in range(1, 31):
            day = today - dt.timedelta(days=n)
            db.execute("INSERT OR REPLACE INTO follower_snapshot (account_id, date, followers, state, taken_at) "
                       "VALUES (?, ?, ?, 'taken', ?)", (account, day.isoformat(), 1200 - 9 * n + (n % 4) * 7,
                                                        f"{day.isoformat()} 03:00:00"))


def _shoot(base: str) -> list[Path]:
    pages = [
        ("home", "/dashboard"),
        ("accounts", "/dashboard/accounts"),
        ("inbox", f"/dashboard/inbox/{os.environ['SCREENSHOT_CONVERSATION']}"),
        ("webhooks", "/dashboard/webhooks"),
        ("webhook", f"/dashboard/webhooks/{os.environ['SCREENSHOT_WEBHOOK']}"),
        ("api-keys", "/dashboard/api-keys"),
        ("connected-apps", "/dashboard/settings/connected-apps"),
        ("posts", "/dashboard/posts"),
        ("post", f"/dashboard/posts/{os.environ['SCREENSHOT_POST']}"),
        ("calendar", "/dashboard/calendar"),
        ("calendar-week", "/dashboard/calendar?view=week"),
        ("media", "/dashboard/media"),
        ("broadcasts", "/dashboard/broadcasts"),
        ("broadcast", f"/dashboard/broadcasts/{os.environ['SCREENSHOT_BROADCAST']}"),
        ("broadcast-new", "/dashboard/broadcasts/new"),
        ("automations", "/dashboard/automations"),
        ("automation", f"/dashboard/automations/{os.environ['SCREENSHOT_AUTOMATION']}"),
        ("sequences", "/dashboard/sequences"),
        ("sequence", f"/dashboard/sequences/{os.environ['SCREENSHOT_SEQUENCE']}"),
        ("analytics", f"/dashboard/analytics?account={os.environ['SCREENSHOT_INSTAGRAM']}"),
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
        # The composer as a person fills it in: three platforms, X's own shorter text, the checks.
        tab.goto(base + "/dashboard/posts/new")
        tab.get_by_label("Text", exact=True).fill("Our spring collection is here: lemon tarts, rhubarb buns and "
                                                  "strawberry cream puffs, baked every morning from 7. " * 3)
        for platform in ("X", "Facebook", "LinkedIn"):
            tab.get_by_role("checkbox", name=f"{platform} · ", exact=False).first.check()
        tab.get_by_text("Own text and options for X · ").click()
        tab.get_by_label("Text for X · ", exact=False).fill("Spring is here 🍋 https://bakery.example.com/spring")
        tab.get_by_role("list", name="Checks").wait_for()
        tab.wait_for_load_state("networkidle")
        saved.append(OUT / "composer.png")
        tab.screenshot(path=str(saved[-1]), full_page=True)
        tab.set_viewport_size({"width": 390, "height": 844})
        tab.goto(base + "/dashboard/calendar")
        saved.append(OUT / "calendar-phone.png")
        tab.screenshot(path=str(saved[-1]), full_page=True)
        # A phone: stacked rows, the inbox's list, then a thread on a screen of its own.
        for name, path in [("accounts-phone", "/dashboard/accounts"), ("inbox-phone", "/dashboard/inbox"),
                           ("inbox-thread-phone", f"/dashboard/inbox/{os.environ['SCREENSHOT_CONVERSATION']}")]:
            tab.goto(base + path)
            tab.wait_for_load_state("networkidle")
            saved.append(OUT / f"{name}.png")
            tab.screenshot(path=str(saved[-1]))  # the first screen, as a phone shows it
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
            _past_followers(data)
            saved = _shoot(base)
        finally:
            server.terminate()
            server.wait(timeout=30)
    for path in saved:
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
