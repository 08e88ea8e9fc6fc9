"""The media tests' file server: HTTPS with a certificate of a local authority the service trusts."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.file_server import file_server
from tests.support.webhook_receiver import Tls, make_tls


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Tls:
    return make_tls(tmp_path_factory.mktemp("tls"), "localhost")


@pytest.fixture(scope="module")
def live_overrides(tls: Tls) -> dict[str, Any]:
    return {"webhook_ca_bundle": tls.ca_path}


@pytest.fixture(scope="module")
def files(tls: Tls) -> Iterator[str]:
    with file_server(tls) as base:
        yield base
