"""A local SMTP server (aiosmtpd) that keeps what the service mails, for tests to read."""

from __future__ import annotations

import email
import email.policy
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller

from tests.support.live_server import free_port


@dataclass
class Mailbox:
    url: str
    messages: list[EmailMessage] = field(default_factory=list)

    def to(self, address: str) -> list[EmailMessage]:
        return [message for message in self.messages if message["To"] == address]


class _Keeper:
    def __init__(self, box: Mailbox) -> None:
        self.box = box

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        self.box.messages.append(parsed)  # type: ignore[arg-type]
        return "250 Message accepted for delivery"


@contextmanager
def mailbox() -> Iterator[Mailbox]:
    port = free_port()
    box = Mailbox(url=f"smtp://tester:secret@127.0.0.1:{port}")
    controller = Controller(_Keeper(box), hostname="127.0.0.1", port=port, auth_require_tls=False,
                            authenticator=lambda *args: _Accepted())
    controller.start()
    try:
        yield box
    finally:
        controller.stop()


class _Accepted:
    success = True
    auth_data = None
