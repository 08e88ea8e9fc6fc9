"""`switchboard webhooks listen`: try webhooks on this machine, in the spirit of a payment CLI.

It finds the running service (and checks it is this data dir's, see `running`), registers a
temporary endpoint there pointing at a local HTTPS receiver it runs itself (certificate from the
data dir's local CA, which a service allowing private webhook URLs trusts), prints every event as
it arrives with both signatures checked, forwards it to a plain local URL when asked, and removes
the endpoint and its temporary API key on exit (Ctrl-C or SIGTERM).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import hmac
import json
import signal
import ssl
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2

from kit.settings import Settings

TOLERANCE_SECONDS = 300
FORWARDED_HEADERS = ("content-type", "x-service-signature", "x-service-event", "x-service-delivery",
                     "webhook-id", "webhook-timestamp", "webhook-signature", "user-agent")


def stripe_style_ok(secret: str, body: bytes, header: str, now: float) -> bool:
    """`x-service-signature: t=..,v1=..`: HMAC-SHA256 keyed with the whole secret, within 5 minutes."""
    parts = [p.split("=", 1) for p in header.split(",") if "=" in p]
    stamps = [v for k, v in parts if k == "t"]
    if not stamps or not stamps[0].isdigit() or abs(now - int(stamps[0])) > TOLERANCE_SECONDS:
        return False
    expected = hmac.new(secret.encode(), stamps[0].encode() + b"." + body, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, v) for k, v in parts if k == "v1")


def standard_ok(secret: str, body: bytes, headers: dict[str, str], now: float) -> bool:
    """Standard Webhooks: `v1,<base64 HMAC of id.timestamp.body>` keyed with the decoded secret."""
    event_id, stamp = headers.get("webhook-id", ""), headers.get("webhook-timestamp", "")
    if not stamp.isdigit() or abs(now - int(stamp)) > TOLERANCE_SECONDS:
        return False
    key = base64.b64decode(secret.removeprefix("whsec_"))
    expected = base64.b64encode(
        hmac.new(key, f"{event_id}.{stamp}.".encode() + body, hashlib.sha256).digest()
    ).decode()
    given = [s.split(",", 1)[1] for s in headers.get("webhook-signature", "").split() if s.startswith("v1,")]
    return any(hmac.compare_digest(expected, s) for s in given)


class Listener:
    def __init__(self, *, secret: str = "", forward_to: str | None, out: Any) -> None:
        self.secret = secret
        self.forward_to = forward_to
        self.out = out
        self.lock = threading.Lock()

    def handle(self, body: bytes, headers: dict[str, str]) -> int:
        now = time.time()
        verified = stripe_style_ok(self.secret, body, headers.get("x-service-signature", ""), now) and standard_ok(
            self.secret, body, headers, now
        )
        try:
            envelope = json.loads(body)
        except ValueError:
            envelope = {}
        line = (f"{time.strftime('%H:%M:%S')}  {headers.get('x-service-event', '?'):24} "
                f"{envelope.get('id', '?')}  {'signature verified' if verified else 'SIGNATURE INVALID'}")
        if verified and self.forward_to:
            try:
                answer = httpx2.post(self.forward_to, content=body, timeout=10, headers={
                    k: v for k, v in headers.items() if k in FORWARDED_HEADERS})
                line += f"  -> {self.forward_to} {answer.status_code}"
            except httpx2.HTTPError:
                line += f"  -> {self.forward_to} unreachable"
        with self.lock:
            print(line, file=self.out, flush=True)
        return 200 if verified else 400


def _server(listener: Listener, port: int, cert: Path, key: Path) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if 0 < length <= 5 * 1024 * 1024 else b""
            status = listener.handle(body, {k.lower(): v for k, v in self.headers.items()})
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:  # the listener prints its own lines
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    return server


def listen(args: argparse.Namespace, settings: Settings) -> int:
    from kit import local_ca
    from service.identity import api_keys
    from storage.db import connection, db
    from storage.models import ApiKey, RateLimitCounter, Workspace
    from switchboard.running import NoService, service_url, verify
    from switchboard.wiring import prepare

    if args.forward_to and not args.forward_to.startswith(("http://", "https://")):
        print("error: --forward-to takes an http(s) URL, e.g. http://127.0.0.1:3000/webhooks", file=sys.stderr)
        return 1
    try:
        url = service_url(settings, args.url)
        verify(settings, url)
    except NoService as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    prepare(settings)
    with connection():
        workspaces = [w.id for w in Workspace.select(Workspace.id)]
    workspace = args.workspace or (workspaces[0] if len(workspaces) == 1 else None)
    if workspace not in workspaces:
        print(f"error: name the workspace with --workspace (one of: {', '.join(workspaces)})", file=sys.stderr)
        return 1

    listener = Listener(forward_to=args.forward_to, out=sys.stdout)
    with tempfile.TemporaryDirectory() as scratch:
        cert, key_file = local_ca.issue_localhost(settings.data_dir, Path(scratch))
        server = _server(listener, args.port, cert, key_file)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        receiver = f"https://127.0.0.1:{server.server_address[1]}/"
        with connection(), db.atomic():
            key = api_keys.create_key(workspace_id=workspace, name="webhooks listen")
        auth = {"Authorization": f"Bearer {key.key}"}
        endpoint: dict[str, Any] | None = None
        stop = threading.Event()
        try:
            body: dict[str, Any] = {"url": receiver, "description": "switchboard webhooks listen (temporary)"}
            if args.events:
                body["events"] = [e.strip() for e in args.events.split(",") if e.strip()]
            made = httpx2.post(url + "/v1/webhooks", json=body, headers=auth, timeout=30)
            if made.status_code != 201:
                refusal = made.json().get("error", {})
                details = "; ".join(f"{d['field']} {d['message']}" for d in refusal.get("details", []))
                print(f"error: the service refused the endpoint: {refusal.get('message')} {details}".strip(),
                      file=sys.stderr)
                if "private" in details or "loopback" in details:
                    print("  run the service with SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE=1 (the default of "
                          "`switchboard serve` with the sandbox)", file=sys.stderr)
                return 1
            endpoint = made.json()
            listener.secret = endpoint["secret"]
            print(f"Ready: events of {workspace} arrive at {receiver} (endpoint {endpoint['id']}), "
                  f"checked with its secret{f', forwarded to {args.forward_to}' if args.forward_to else ''}.\n"
                  # The listener's own key, removed with the endpoint when it stops: the line works as printed.
                  f"  Send a test event: curl -X POST -H 'Authorization: Bearer {key.key}' "
                  f"{url}/v1/webhooks/{endpoint['id']}/test\n  Ctrl-C to stop (the endpoint and that key are "
                  "removed).",
                  flush=True)
            for signum in (signal.SIGINT, signal.SIGTERM):
                signal.signal(signum, lambda *_: stop.set())
            stop.wait()
        finally:
            if endpoint is not None:
                with contextlib.suppress(httpx2.HTTPError):
                    httpx2.delete(f"{url}/v1/webhooks/{endpoint['id']}", headers=auth, timeout=30)
            with connection(), db.atomic():
                ApiKey.delete().where(ApiKey.id == key.id).execute()
                RateLimitCounter.delete().where(RateLimitCounter.key_id == key.id).execute()
            server.shutdown()
    print("Stopped; the temporary endpoint is removed.", flush=True)
    return 0
