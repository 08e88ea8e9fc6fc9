"""Webhook tests: fast retry delays and a short timeout, and a loopback HTTPS receiver trusted through the CA bundle."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kit.settings import Settings
from tests.support.webhook_receiver import Receiver, Tls, make_tls, running_receiver

# Seconds instead of 30 s .. 2 h, so a whole retry schedule runs in a test.
TEST_DELAYS = (1, 2, 1, 1, 1)
TEST_TIMEOUT = 2.0


@pytest.fixture(scope="session")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Tls:
    return make_tls(Path(tmp_path_factory.mktemp("tls")), "localhost", "127.0.0.1", "hooks.example.test")


def _webhook_overrides(tls: Tls) -> dict[str, Any]:
    return {"webhook_ca_bundle": tls.ca_path, "webhook_retry_delays": TEST_DELAYS,
            "webhook_timeout_seconds": TEST_TIMEOUT}


@pytest.fixture
def settings(settings: Settings, tls: Tls) -> Settings:
    return replace(settings, **_webhook_overrides(tls))


@pytest.fixture(scope="module")
def live_overrides(tls: Tls) -> dict[str, Any]:
    """The same settings for a module that runs on one service (`live`)."""
    return _webhook_overrides(tls)


@pytest.fixture
def receiver(tls: Tls) -> Iterator[Receiver]:
    with running_receiver(tls) as running:
        yield running
