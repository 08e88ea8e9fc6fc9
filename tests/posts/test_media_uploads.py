"""Media uploads under concurrency, and how the bytes are served back."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx2
import pytest

from tests.conftest import bearer
from tests.support.posts import JPEG, PNG, upload
from tests.support.webhook_receiver import wait_for

pytestmark = pytest.mark.shared_service

MIB = 1024 * 1024


def _start(client: httpx2.Client, tenant: dict[str, str], size: int, content_type: str = "image/jpeg",
           filename: str = "photo.jpg") -> dict:
    started = client.post("/v1/media/uploads", headers=bearer(tenant["apiKey"]),
                          json={"filename": filename, "contentType": content_type, "size": size})
    assert started.status_code == 201, started.text
    return started.json()


def test_one_put_at_a_time_per_token_and_complete_matches_the_served_file(live):
    tenant = live.tenant()
    first = JPEG[:64] + b"\x01" * (4 * MIB - 64)
    second = JPEG[:64] + b"\x02" * (4 * MIB - 64)
    upload_ = _start(live.client, tenant, len(first))
    halfway = threading.Event()
    go_on = threading.Event()

    def slow_body() -> Iterator[bytes]:
        yield first[: 2 * MIB]
        halfway.set()
        go_on.wait(30)
        yield first[2 * MIB:]

    with ThreadPoolExecutor(1) as pool, httpx2.Client(timeout=60) as other:
        slow = pool.submit(other.put, upload_["uploadUrl"], content=slow_body())
        assert halfway.wait(30)
        # Until the first PUT has claimed the upload, a completion finds no bytes (422); from then
        # on, and while its bytes come, it is told a PUT is in progress.
        completing = wait_for(lambda: (answer := live.client.post(
            f"/v1/media/uploads/{upload_['token']}/complete", headers=bearer(tenant["apiKey"]))).status_code == 409
            and answer)
        competing = live.client.put(upload_["uploadUrl"], content=second)
        go_on.set()
        done = slow.result()
    assert competing.status_code == 409, competing.text
    assert competing.json()["error"]["code"] == "upload_in_progress"
    assert completing.json()["error"]["code"] == "upload_in_progress"
    assert done.status_code == 200, done.text
    assert done.json()["receivedBytes"] == len(first)

    completed = live.client.post(f"/v1/media/uploads/{upload_['token']}/complete", headers=bearer(tenant["apiKey"]))
    assert completed.status_code == 200, completed.text
    served = live.client.get(completed.json()["url"])
    assert served.content == first
    assert completed.json()["sha256"] == hashlib.sha256(served.content).hexdigest()

    again = live.client.put(upload_["uploadUrl"], content=second)  # once completed, the bytes are fixed
    assert again.status_code == 404


def test_concurrent_completions_answer_the_same_media(live):
    tenant = live.tenant()
    uploads = []
    for n in range(5):  # several rounds: the race between completions is narrow
        upload_ = _start(live.client, tenant, len(PNG), "image/png", f"p{n}.png")
        assert live.client.put(upload_["uploadUrl"], content=PNG).status_code == 200
        uploads.append(upload_)

    def complete(token: str) -> httpx2.Response:
        with httpx2.Client(base_url=live.url, timeout=60) as http:
            return http.post(f"/v1/media/uploads/{token}/complete", headers=bearer(tenant["apiKey"]))

    for upload_ in uploads:
        with ThreadPoolExecutor(10) as pool:
            answers = list(pool.map(complete, [upload_["token"]] * 10))
        assert [a.status_code for a in answers] == [200] * 10, [a.text for a in answers if a.status_code != 200]
        assert len({(a.json()["mediaId"], a.json()["sha256"]) for a in answers}) == 1
        assert answers[0].json()["sha256"] == hashlib.sha256(PNG).hexdigest()


@pytest.mark.parametrize(("filename", "fallback", "encoded"), [
    ("photo.jpg", "photo.jpg", "photo.jpg"),
    ('a"b\\c;d.jpg', "a_b_c;d.jpg", "a%22b%5Cc%3Bd.jpg"),
    ("naïve café 😀.jpg", "na_ve caf_ _.jpg", "na%C3%AFve%20caf%C3%A9%20%F0%9F%98%80.jpg"),
    ("line\r\nSet-Cookie: x=1.jpg", "line__Set-Cookie: x=1.jpg", "line%0D%0ASet-Cookie%3A%20x%3D1.jpg"),
])
def test_served_media_is_never_sniffed_nor_run_and_names_its_file_safely(client, tenant, filename, fallback, encoded):
    media = upload(client, tenant, JPEG, "image/jpeg", filename=filename)
    served = client.get(media["url"])
    assert served.status_code == 200
    assert served.headers["x-content-type-options"] == "nosniff"
    assert served.headers["content-security-policy"] == "sandbox"
    assert served.headers["content-disposition"] == f"inline; filename=\"{fallback}\"; filename*=UTF-8''{encoded}"
    assert "set-cookie" not in served.headers
