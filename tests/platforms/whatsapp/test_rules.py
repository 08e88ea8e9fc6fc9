"""WhatsApp's inbox rules: a contact is a phone number, kept in E.164 whatever way it was written."""

from __future__ import annotations

from platforms.registry import declared
from service.inbox.contacts import normalise_handle


def test_a_contact_is_a_phone_number():
    assert declared("whatsapp").inbox_rules.phone_handles
    assert normalise_handle("whatsapp", "0044 20 7946 0958") == "+442079460958"
    assert normalise_handle("telegram", "@Bea") == "bea"
