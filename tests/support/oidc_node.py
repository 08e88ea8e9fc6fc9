"""The real `oidc-provider` (the OpenID-certified Node implementation, npm) with its default
settings, run for the sign-in tests from `tests/support/oidc_node/` (its `package.json` and lock
file pin it). Installed once per lock file into a cache directory with `npm ci`; the tests that use
it skip when Node or npm is missing."""

from __future__ import annotations

import hashlib
import html
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest

from tests.support.live_server import free_port

HERE = Path(__file__).parent / "oidc_node"
CACHE = Path.home() / ".cache" / "switchboard-tests"


def _installed() -> Path:
    if not (shutil.which("node") and shutil.which("npm")):
        pytest.skip("Node and npm are needed to run oidc-provider")
    lock = (HERE / "package-lock.json").read_bytes()
    target = CACHE / f"oidc-provider-{hashlib.sha256(lock).hexdigest()[:12]}"
    if not (target / "node_modules" / "oidc-provider").exists():
        target.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy(HERE / name, target / name)
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=target, check=True, capture_output=True,
                       timeout=300)
    shutil.copy(HERE / "server.js", target / "server.js")
    return target


@dataclass
class NodeProvider:
    issuer: str
    client_id: str
    client_secret: str
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


@contextmanager
def node_provider(redirect_uri: str, *, client_id: str = "switchboard",
                  client_secret: str = "a-client-secret-for-tests") -> Iterator[NodeProvider]:
    folder = _installed()
    port = free_port()
    process = subprocess.Popen(["node", "server.js", str(port), client_id, client_secret, redirect_uri], cwd=folder,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    issuer = f"http://127.0.0.1:{port}"
    running = NodeProvider(issuer, client_id, client_secret, process)

    def answers() -> bool:
        try:
            return httpx2.get(f"{issuer}/.well-known/openid-configuration", timeout=2).status_code == 200
        except httpx2.HTTPError:
            return False

    try:
        deadline = time.monotonic() + 30
        while not answers():  # the process's own start: nothing to await but its port
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("oidc-provider did not start: " + (process.stdout.read() if process.stdout
                                                                       else b"").decode(errors="replace"))
            time.sleep(0.05)
        yield running
    finally:
        running.stop()


def _form(page: str) -> tuple[str, dict[str, str]]:
    action = html.unescape(re.search(r'<form[^>]*action="([^"]+)"', page).group(1))  # type: ignore[union-attr]
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page))
    return action, fields


def sign_in_at_provider(http: httpx2.Client, start: httpx2.Response, login: str) -> httpx2.Response:
    """Answer the provider's own login and consent pages (any password) from where the service's
    sign-in redirected to; the service's final answer (redirects followed)."""
    page = start
    for _ in range(4):
        if "name=\"prompt\"" not in page.text:
            return page
        action, fields = _form(page.text)
        if fields.get("prompt") == "login":
            fields.update(login=login, password="any password")
        page = http.post(httpx2.URL(str(page.url)).join(action), data=fields)
    return page
