"""`switchboard webhooks listen`: a temporary endpoint on the running service, a local HTTPS
receiver that checks both signatures, forwarding to a plain local URL, and a clean exit."""

import json
import queue
import re
import signal
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from storage.db import connection
from storage.models import ApiKey
from tests.conftest import bearer
from tests.support.processes import service_env, switchboard


def _lines(process):
    lines: queue.Queue[str] = queue.Queue()

    def pump():
        for line in process.stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _until(lines, pattern, timeout=30):
    seen = []
    while True:
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no line matching {pattern!r}; saw {seen}") from None
        seen.append(line)
        if re.search(pattern, line):
            return line


def test_listen_receives_verifies_forwards_and_cleans_up(client, tenant, service):
    forwarded = []

    class App(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["content-length"]))
            forwarded.append((dict((k.lower(), v) for k, v in self.headers.items()), body))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    app = ThreadingHTTPServer(("127.0.0.1", 0), App)
    threading.Thread(target=app.serve_forever, daemon=True).start()
    forward_to = f"http://127.0.0.1:{app.server_port}/hooks"
    with connection():
        keys_before = ApiKey.select().count()

    process = subprocess.Popen(switchboard("webhooks", "listen", "--forward-to", forward_to),
                               env=service_env(service), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = _lines(process)
        ready = _until(lines, r"^Ready: ")
        webhook_id = re.search(r"endpoint (wh_\w+)", ready)[1]
        queued = client.post(f"/v1/webhooks/{webhook_id}/test", headers=bearer(tenant["apiKey"]))
        assert queued.status_code == 202
        arrived = _until(lines, r"webhook\.test")
        assert queued.json()["eventId"] in arrived
        assert "signature verified" in arrived
        assert f"-> {forward_to} 204" in arrived
        headers, body = forwarded[0]
        assert json.loads(body)["id"] == queued.json()["eventId"]
        assert headers["webhook-id"] == queued.json()["eventId"]
        assert headers["x-service-signature"].startswith("t=")
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
        app.shutdown()
    assert process.returncode == 0, process.stderr.read()
    assert client.get("/v1/webhooks", headers=bearer(tenant["apiKey"])).json()["data"] == []
    with connection():
        assert ApiKey.select().count() == keys_before
