"""The SSRF guard with the operator's default (private addresses refused), at the API and at connection time."""

from __future__ import annotations

import ipaddress
import socket
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx2
import pytest

from kit import net
from tests.conftest import bearer
from tests.support.webhook_receiver import running_receiver

pytestmark = pytest.mark.shared_service


@pytest.fixture(scope="module")
def live_overrides(live_overrides):
    """The module's one service, with private addresses refused as the operator's default has it."""
    return {**live_overrides, "webhook_allow_private": False}


# Each test works in a workspace of its own.
@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/hook",
        "https://localhost/hook",
        "https://10.1.2.3/hook",
        "https://192.168.0.10/hook",
        "https://172.16.5.5/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://100.64.0.1/hook",
        "https://[::1]/hook",
        "https://[fe80::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://[64:ff9b::a00:1]/hook",
        "https://[::127.0.0.1]/hook",
        "https://[::a9fe:a9fe]/latest/meta-data",
        "https://[::ffff:0:127.0.0.1]/hook",
        "https://[::ffff:0:a00:1]/hook",
        "https://224.0.0.1/hook",
        "https://0.0.0.0/hook",
        "https://does-not-exist.invalid/hook",
    ],
)
def test_non_public_addresses_are_refused_when_an_endpoint_is_saved(client, tenant, url):
    answer = client.post("/v1/webhooks", json={"url": url}, headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 422
    assert answer.json()["error"]["details"][0]["field"] == "url"


def test_ipv4_addresses_embedded_in_ipv6_are_judged_by_the_ipv4_address():
    judged = {text: net.is_public_address(ipaddress.ip_address(text)) for text in (
        "::127.0.0.1", "::10.0.0.1", "::ffff:0:169.254.169.254", "::ffff:0:192.168.1.1", "::", "::1",
        "::ffff:0:8.8.8.8", "::ffff:8.8.8.8", "2606:4700:4700::1111")}
    assert judged == {"::127.0.0.1": False, "::10.0.0.1": False, "::ffff:0:169.254.169.254": False,
                      "::ffff:0:192.168.1.1": False, "::": False, "::1": False,
                      "::ffff:0:8.8.8.8": True, "::ffff:8.8.8.8": True, "2606:4700:4700::1111": True}


@pytest.mark.parametrize("url", ["https://1.1.1.1/x\t", "https://1.1.1.1/x\n", "https://1.1.1.1/\r\nHost: a",
                                 "https://1.1.1.1/\x00", "https://1.1.1.1/\x7f", "https://1.1.1.1\t/x",
                                 "https://1.1.1.1/\u2028"])
def test_a_url_with_a_control_character_is_refused_and_not_stored(client, tenant, url):
    h = bearer(tenant["apiKey"])
    answer = client.post("/v1/webhooks", json={"url": url}, headers=h)
    assert answer.status_code == 422
    assert answer.json()["error"]["details"][0]["field"] == "url"
    assert client.get("/v1/webhooks", headers=h).json()["data"] == []


def test_a_patch_to_a_private_address_is_refused(client, tenant, monkeypatch):
    monkeypatch.setattr(net, "_getaddrinfo", _resolving({"hooks.example.test": "93.184.216.34"}))
    made = client.post("/v1/webhooks", json={"url": "https://hooks.example.test/h"}, headers=bearer(tenant["apiKey"]))
    assert made.status_code == 201
    answer = client.patch(f"/v1/webhooks/{made.json()['id']}", json={"url": "https://10.0.0.7/h"},
                          headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 422


def _resolving(table):
    def fake(host, port):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (table[host], port))]

    return fake


def test_public_addresses_pass_the_check():
    for address in ("93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946", "64:ff9b::5db8:d822"):
        assert net.is_public_address(ipaddress.ip_address(address))


def test_a_name_that_resolves_to_loopback_is_refused_at_connection_time(tls, monkeypatch):
    # DNS rebinding: the name looked public when it was saved and resolves to loopback when sending.
    monkeypatch.setattr(net, "_getaddrinfo", _resolving({"hooks.example.test": "127.0.0.1"}))
    with running_receiver(tls, host="hooks.example.test") as receiver:
        client = net.guarded_client(timeout=2, allow_private=False, extra_ca_bundle=tls.ca_path, user_agent="t")
        with client, pytest.raises(net.AddressRefused):
            client.post(receiver.url + "/hook", content=b"{}")
        hits = receiver.snapshot()
    assert hits == []


def test_the_connection_goes_to_the_checked_address_with_the_name_kept_for_tls(tls, monkeypatch):
    looked_up = []

    def fake(host, port):
        looked_up.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    monkeypatch.setattr(net, "_getaddrinfo", fake)
    with running_receiver(tls, host="hooks.example.test") as receiver:
        client = net.guarded_client(timeout=2, allow_private=True, extra_ca_bundle=tls.ca_path, user_agent="t")
        with client:
            answers = [client.post(receiver.url + "/hook", content=b"{}").status_code for _ in range(3)]
        hits = receiver.snapshot()
    assert answers == [200, 200, 200]
    assert looked_up == ["hooks.example.test"]  # resolved once; the kept-alive connection reused
    assert hits[0].headers["host"] == receiver.url.removeprefix("https://")


def test_the_socket_is_opened_to_an_address_never_a_name(tls, monkeypatch):
    # If anything but the guard resolved the name, this socket-level resolver would be reached.
    monkeypatch.setattr(net, "_getaddrinfo", _resolving({"hooks.example.test": "127.0.0.1"}))

    real = socket.getaddrinfo

    def numeric_only(host, *args, **kwargs):
        ipaddress.ip_address(host)  # a name here would mean a second, unchecked resolution
        return real(host, *args, **kwargs)

    with running_receiver(tls, host="hooks.example.test") as receiver:
        monkeypatch.setattr(socket, "getaddrinfo", numeric_only)
        client = net.guarded_client(timeout=2, allow_private=True, extra_ca_bundle=tls.ca_path, user_agent="t")
        with client:
            status = client.post(receiver.url + "/hook", content=b"{}").status_code
    assert status == 200


def test_an_untrusted_certificate_fails(tls, tmp_path):
    with running_receiver(tls) as receiver:
        client = net.guarded_client(timeout=2, allow_private=True, extra_ca_bundle=None, user_agent="t")
        with client, pytest.raises(httpx2.ConnectError):
            client.post(receiver.url + "/hook", content=b"{}")


def test_a_name_server_that_does_not_answer_is_a_refusal_within_the_deadline(monkeypatch):
    answered = threading.Event()

    def hanging(host, port):
        # A resolver retrying a silent name server. Were the deadline not applied, the check would
        # wait for this answer, a public address, and pass.
        answered.wait(30)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port))]

    monkeypatch.setattr(net, "_getaddrinfo", hanging)
    monkeypatch.setattr(net, "RESOLVE_TIMEOUT_SECONDS", 0.2)
    try:
        with pytest.raises(net.AddressRefused, match=r"did not resolve within 0\.2 s"):
            net.check_url("https://slow.example.test/hook", allow_private=False)
    finally:
        answered.set()


def test_a_slow_name_server_holds_up_no_other_request(client, tenant, monkeypatch):
    # Saving a URL waits on its host name's lookup. Made inside the request's write transaction, on
    # one of the few storage threads, a silent name server would hold every other write (SQLite's
    # one lock) or every storage thread (as many lookups as there are threads) until it answered.
    asked = threading.Semaphore(0)
    answer = threading.Event()

    def resolver(host, port):
        if host.endswith(".slow.example.test"):
            asked.release()
            answer.wait(30)
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port))]

    monkeypatch.setattr(net, "_getaddrinfo", resolver)
    monkeypatch.setattr(net, "RESOLVE_TIMEOUT_SECONDS", 60.0)
    key = bearer(tenant["apiKey"])
    endpoint = client.post("/v1/webhooks", json={"url": "https://quick.example.test/hook"}, headers=key)
    assert endpoint.status_code == 201
    lookups = 4  # the storage threads (`storage.requests.storage_threads`)
    with ThreadPoolExecutor(lookups) as pool:
        saving = [pool.submit(client.post, "/v1/webhooks", json={"url": f"https://h{n}.slow.example.test/hook"},
                              headers=key) for n in range(lookups)]
        try:
            for _ in range(lookups):
                assert asked.acquire(timeout=10)
            changed = client.patch(f"/v1/webhooks/{endpoint.json()['id']}", json={"description": "answered"},
                                   headers=key, timeout=10)
            listed = client.get("/v1/webhooks", headers=key, timeout=10)
        finally:
            answer.set()
        refused = [future.result() for future in saving]
    assert changed.status_code == 200 and changed.json()["description"] == "answered"
    assert [item["description"] for item in listed.json()["data"]] == ["answered"]
    assert [(reply.status_code, reply.json()["error"]["details"][0]["field"]) for reply in refused] == [
        (422, "url")] * lookups
