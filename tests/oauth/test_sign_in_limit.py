"""The dashboard's sign-in limit: ten attempts per e-mail and per address in any 15 minutes, each
counted before its password is judged, so that parallel guesses cannot slip past it."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx2

from kit import clock
from service.common import ratelimit
from tests.support.oauth_flow import email_of, hidden


def _form(http: httpx2.Client) -> str:
    return hidden(http.get("/dashboard/login").text, "csrf_token")


def _post(http: httpx2.Client, token: str, email: str, password: str) -> httpx2.Response:
    return http.post("/dashboard/login", data={"csrf_token": token, "email": email, "password": password,
                                               "next": "/dashboard"})


def test_forty_parallel_wrong_passwords_get_ten_judged_and_thirty_refused(server_url, tenant):
    email = email_of(tenant["userId"])
    browsers = [httpx2.Client(base_url=server_url, timeout=60) for _ in range(40)]
    try:
        tokens = [_form(http) for http in browsers]  # each with its session and form, ready to send at once
        with ThreadPoolExecutor(40) as pool:
            answers = list(pool.map(lambda pair: _post(pair[0], pair[1], email, "a guess"), zip(browsers, tokens)))
    finally:
        for http in browsers:
            http.close()
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [401] * ratelimit.SIGN_IN_FAILURES + [429] * (40 - ratelimit.SIGN_IN_FAILURES)
    with httpx2.Client(base_url=server_url, timeout=30) as http:
        assert _post(http, _form(http), email, "correct horse").status_code == 429  # the right one too, for now


def test_the_window_slides_rather_than_starting_afresh_on_the_quarter_hour(server_url, tenant):
    email = email_of(tenant["userId"])
    to_next_quarter = ratelimit.SIGN_IN_WINDOW_SECONDS - int(clock.epoch()) % ratelimit.SIGN_IN_WINDOW_SECONDS
    clock.advance(to_next_quarter - 60 if to_next_quarter > 60 else to_next_quarter + 840)  # a minute before one
    with httpx2.Client(base_url=server_url, timeout=30) as http:
        for _ in range(ratelimit.SIGN_IN_FAILURES):
            assert _post(http, _form(http), email, "a guess").status_code == 401
        clock.advance(120)  # past the quarter hour: a fixed window would have forgotten the ten
        blocked = _post(http, _form(http), email, "correct horse")
        assert blocked.status_code == 429
        assert 15 * 60 - 180 <= int(blocked.headers["retry-after"]) <= 15 * 60 - 60
        clock.advance(int(blocked.headers["retry-after"]) + 1)  # the ten have aged out of the window
        signed_in = _post(http, _form(http), email, "correct horse")
        assert signed_in.status_code == 303, signed_in.text


def test_signing_in_often_never_locks_the_person_out(server_url, tenant):
    email = email_of(tenant["userId"])
    for _ in range(ratelimit.SIGN_IN_FAILURES + 5):
        with httpx2.Client(base_url=server_url, timeout=30) as http:
            assert _post(http, _form(http), email, "correct horse").status_code == 303
