"""Finding the running service a command should talk to, and checking that it is really ours.

`switchboard serve` writes `<data dir>/serve.json` (its URL and pid) while it runs. A command that
must call the running service (`sandbox seed`, `webhooks listen`) takes its URL from `--url`, else
`SWITCHBOARD_BASE_URL`, else that file; then, before it sends anything secret, asks the service to
prove that it holds the same secret key (`GET /_switchboard/proof?challenge=...` answers an HMAC of
the challenge), so a freshly minted key never goes to whatever else listens on a port.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from kit.crypto import derive_key
from kit.settings import Settings

STATE_FILE = "serve.json"
PROOF_PATH = "/_switchboard/proof"


class NoService(Exception):
    """No running service of this data dir could be found or trusted; the message says why."""


def _proof(secret_key: str, challenge: str, base_url: str) -> str:
    # Bound to the service's own URL too: a server elsewhere that relays the challenge to the real
    # service gets a proof naming the real URL, which the command then refuses (see `verify`).
    message = f"{challenge}|{base_url}".encode()
    return hmac.new(derive_key(secret_key, b"cli-proof"), message, hashlib.sha256).hexdigest()


LOOPBACK = {"localhost", "127.0.0.1", "::1"}


def _same_place(a: str, b: str) -> bool:
    """The same scheme, port and host (loopback names count as one host)."""
    first, second = urlsplit(a), urlsplit(b)
    if (first.scheme, first.port) != (second.scheme, second.port):
        return False
    hosts = {first.hostname, second.hostname}
    return len(hosts) == 1 or hosts <= LOOPBACK


def proof_endpoint(settings: Settings) -> Callable[[Request], Awaitable[Response]]:
    async def proof(request: Request) -> Response:
        challenge = request.query_params.get("challenge", "")
        if not 16 <= len(challenge) <= 128:
            return JSONResponse(
                {"error": {"code": "validation_failed", "message": "challenge must be 16..128 characters"}},
                status_code=422,
            )
        return JSONResponse(
            {"baseUrl": settings.base_url, "proof": _proof(settings.secret_key, challenge, settings.base_url)}
        )

    return proof


@contextlib.contextmanager
def announced(settings: Settings) -> Iterator[None]:
    """While `serve` runs: its URL and pid in the data dir, for the other commands to find."""
    path = settings.data_dir / STATE_FILE
    settings.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump({"baseUrl": settings.base_url, "pid": os.getpid(),
                   "sandboxUrl": settings.sandbox_base_url if settings.sandbox else None}, handle)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            if json.loads(path.read_text()).get("pid") == os.getpid():
                path.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def service_url(settings: Settings, explicit: str | None = None) -> str:
    """The running service's URL for this data dir (see the module docstring); NoService if none."""
    if explicit:
        return explicit.rstrip("/")
    if os.environ.get("SWITCHBOARD_BASE_URL"):
        return settings.base_url
    path: Path = settings.data_dir / STATE_FILE
    try:
        announced_ = json.loads(path.read_text())
    except (OSError, ValueError):
        raise NoService(
            f"no running `switchboard serve` found for data dir {settings.data_dir}: start it, "
            "or pass --url (or set SWITCHBOARD_BASE_URL)"
        ) from None
    if not isinstance(announced_.get("pid"), int) or not _alive(announced_["pid"]):
        raise NoService(
            f"the `switchboard serve` recorded in {path} is no longer running: start it, or pass --url"
        )
    return str(announced_["baseUrl"]).rstrip("/")


def running_sandbox(settings: Settings) -> str | None:
    """The sandbox URL of the `serve` running on this data dir, when it runs with the sandbox on."""
    try:
        announced_ = json.loads((settings.data_dir / STATE_FILE).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(announced_.get("pid"), int) or not _alive(announced_["pid"]):
        return None
    found = announced_.get("sandboxUrl")
    return found.rstrip("/") if isinstance(found, str) and found else None


def verify(settings: Settings, url: str) -> None:
    """Raise NoService unless the service at `url` proves it holds this data dir's secret key."""
    challenge = secrets.token_urlsafe(24)
    try:
        answer = httpx2.get(url + PROOF_PATH, params={"challenge": challenge}, timeout=10)
    except httpx2.HTTPError:
        raise NoService(f"nothing answers at {url}: is `switchboard serve` running there?") from None
    try:
        body = answer.json() if answer.status_code == 200 else {}
    except ValueError:
        body = {}
    given, named = (body.get("proof"), body.get("baseUrl")) if isinstance(body, dict) else (None, None)
    if (
        not isinstance(given, str)
        or not isinstance(named, str)
        or not _same_place(named, url)
        or not hmac.compare_digest(given, _proof(settings.secret_key, challenge, named))
    ):
        raise NoService(
            f"the service at {url} is not the one using data dir {settings.data_dir} (it could not prove "
            "it holds the same secret key); pass --url, or run the command with the service's settings"
        )
