"""The dashboard's inbox on 100,000 conversations, against `GET /v1/conversations`; then how soon a
new message shows in an open inbox page after its platform webhook.

Seeds a fresh SQLite file with bulk inserts (`conversations.seed`: ten accounts, 100k
conversations), serves it with `switchboard serve` (sandbox on, embedded worker) in its own
process, signs in as a person and measures, from one keep-alive client, interleaved so all share
the machine's weather: the inbox page (the list's first page, every filter's options), the inbox
with a conversation open, the list's live refresh when nothing changed (204), and the baseline
`GET /v1/conversations` (page 1) with a key. Goal: the inbox page's p95 under 100 ms.

Then Chromium (Playwright) keeps the inbox open while a sandbox Telegram contact writes, one new
contact at a time: the time from the sandbox posting the platform's webhook to the contact's name
being in the page, with no reload. Goal: under 2 s.

    python bench/dashboard_inbox.py [--requests 300] [--conversations 100000] [--arrivals 10]
"""

from __future__ import annotations

import argparse
import contextlib
import html
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
from common import ROOT, bootstrap, embedded_env, free_port, temp_dir, wait_until_up
from conversations import percentile, seed

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def _hidden(page: str, name: str) -> str:
    found = re.search(rf'name="{name}"[^>]*value="([^"]*)"', page)
    assert found, name
    return html.unescape(found.group(1))


@contextlib.contextmanager
def serving(args: list[str], url: str, env: dict[str, str]) -> Iterator[None]:
    """The service in its own process; its first start on 100k rows (migrations, the worker's first
    sweeps) takes longer than `common.process` waits."""
    proc = subprocess.Popen(args, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_up(url, proc, timeout=300)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def sign_in(http: httpx2.Client) -> None:
    page = http.get("/dashboard/login")
    answer = http.post("/dashboard/login", data={"csrf_token": _hidden(page.text, "csrf_token"),
                                                  "email": "bench@example.com", "password": "bench-password"})
    assert answer.status_code == 303, answer.status_code


def render_times(base: str, key: str, *, requests: int, expected_total: int) -> dict[str, list[float]]:
    """Milliseconds of each request, per target, interleaved."""
    with httpx2.Client(base_url=base) as person, \
            httpx2.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}) as api:
        sign_in(person)
        inbox = person.get("/dashboard/inbox")
        assert inbox.status_code == 200 and f"{expected_total} conversations" in inbox.text, inbox.status_code
        first = re.search(r'href="/dashboard/inbox/(conv_\w+)', inbox.text)
        assert first
        workspace = _hidden(inbox.text, "workspace")
        seen = re.search(r'id="list-seen" name="seen" value="(\w+)"', inbox.text)
        assert seen
        live = f"/dashboard/inbox/live?workspace={workspace}&current=&page=1&seen={seen.group(1)}"
        assert person.get(live).status_code == 204
        targets: dict[str, tuple[httpx2.Client, str]] = {
            "GET /v1/conversations (baseline)": (api, "/v1/conversations"),
            "inbox page": (person, "/dashboard/inbox"),
            "inbox page, a thread open": (person, f"/dashboard/inbox/{first.group(1)}"),
            "live list refresh, unchanged (204)": (person, live),
        }
        for _ in range(30):  # warm-up
            for client, path in targets.values():
                client.get(path).raise_for_status()
        timings: dict[str, list[float]] = {name: [] for name in targets}
        for _ in range(requests):
            for name, (client, path) in targets.items():
                started = time.perf_counter()
                client.get(path).raise_for_status()
                timings[name].append((time.perf_counter() - started) * 1000)
    return timings


def arrival_times(base: str, key: str, *, arrivals: int) -> tuple[list[float], list[float]]:
    """Seconds from the sandbox's webhook to the new contact's name in the open inbox page, and of
    that the part after the webhook was answered (the message stored): the page's own delay."""
    from playwright.sync_api import sync_playwright

    with httpx2.Client(base_url=base, timeout=30) as http:
        bot = http.post("/sandbox/telegram/accounts", json={}).json()["credentials"]
        profile = http.get("/v1/profiles", headers={"Authorization": f"Bearer {key}"}).json()["data"][0]["id"]
        account = http.post("/v1/connect/telegram", headers={"Authorization": f"Bearer {key}"},
                            json={"profileId": profile, **bot}).json()
        took, after_stored = [], []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
            tab = browser.new_page()
            tab.goto(base + "/dashboard/login")
            tab.get_by_label("E-mail").fill("bench@example.com")
            tab.get_by_label("Password").fill("bench-password")
            tab.get_by_role("button", name="Sign in").click()
            tab.goto(base + "/dashboard/inbox")
            for n in range(arrivals):
                name = f"Arrival {n} {time.time_ns()}"
                started = time.perf_counter()
                http.post("/sandbox/telegram/inbound-message", json={
                    "accountId": account["id"], "from": {"id": str(900_000 + n), "name": name},
                    "text": "hello"}).raise_for_status()
                stored = time.perf_counter()
                tab.get_by_text(name).wait_for(timeout=15_000)
                took.append(time.perf_counter() - started)
                after_stored.append(time.perf_counter() - stored)
                time.sleep(0.37 * (n % 3))  # arrivals at different points of the page's refresh cycle
            browser.close()
    return took, after_stored


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=300, help="requests per measured URL")
    parser.add_argument("--conversations", type=int, default=100_000)
    parser.add_argument("--arrivals", type=int, default=20)
    args = parser.parse_args()

    data_dir = temp_dir()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = embedded_env(data_dir, SWITCHBOARD_RATE_LIMIT_PER_MINUTE="100000000", SWITCHBOARD_SANDBOX="1",
                       SWITCHBOARD_BASE_URL=base)
    tenant = bootstrap(env)
    took = seed(Path(data_dir) / "switchboard.db", workspace_id=tenant["workspaceId"],
                profile_id=tenant["profileId"], conversations=args.conversations, messages_each=2)
    print(f"seeded {args.conversations:,} conversations in {took:.1f} s")
    serve = [sys.executable, "-m", "switchboard", "serve", "--port", str(port)]
    try:
        with serving(serve, f"{base}/v1/health", env):
            timings = render_times(base, tenant["apiKey"], requests=args.requests,
                                   expected_total=args.conversations)
            arrivals, after_stored = arrival_times(base, tenant["apiKey"], arrivals=args.arrivals)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)

    print(f"{'':38} {'median':>9} {'p95':>9}   ({args.requests} requests each, one keep-alive client)")
    for name, values in timings.items():
        print(f"{name:38} {statistics.median(values):7.2f}ms {percentile(values, 0.95):7.2f}ms")
    baseline = timings["GET /v1/conversations (baseline)"]
    page = timings["inbox page"]
    print(f"inbox page / baseline (p95):  {percentile(page, 0.95) / percentile(baseline, 0.95):.2f}")
    print(f"inbox page p95: {percentile(page, 0.95):.1f} ms (goal < 100 ms)")
    print(f"new message in the open page after its webhook: median {statistics.median(arrivals):.2f} s, "
          f"p95 {percentile(arrivals, 0.95):.2f} s, max {max(arrivals):.2f} s over {len(arrivals)} (goal < 2 s); "
          f"after the webhook was answered: median {statistics.median(after_stored):.2f} s, "
          f"max {max(after_stored):.2f} s")


if __name__ == "__main__":
    main()
