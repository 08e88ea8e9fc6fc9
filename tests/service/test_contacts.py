"""Handles in one normal form per platform: one contact, one conversation."""

import pytest

from service.inbox.contacts import InvalidHandle, normalise_handle, normalise_inbound_handle


@pytest.mark.parametrize(("platform", "given", "stored"), [
    ("instagram", "@Bea.Silva", "bea.silva"),
    ("telegram", "CARL_X", "carl_x"),
    ("x", "@@odd", "@odd"),
    ("whatsapp", "+44 20 7946-0958", "+442079460958"),
    ("whatsapp", "0044 (20) 7946 0958", "+442079460958"),
    ("whatsapp", "442079460958", "+442079460958"),
    ("whatsapp", "+1.555.010.0200", "+15550100200"),
])
def test_handles_are_normalised_per_platform(platform, given, stored):
    assert normalise_handle(platform, given) == stored


@pytest.mark.parametrize(("platform", "given"), [
    ("instagram", "@"), ("telegram", "two words"), ("instagram", "x" * 256),
    ("whatsapp", "call me"), ("whatsapp", "+0123456789"), ("whatsapp", "+1234"), ("whatsapp", "+1234567890123456"),
])
def test_handles_that_cannot_name_a_contact_are_refused(platform, given):
    with pytest.raises(InvalidHandle):
        normalise_handle(platform, given)


def test_what_a_platform_sends_is_never_refused():
    assert normalise_inbound_handle("telegram", "Carl") == "carl"
    assert normalise_inbound_handle("whatsapp", "+15550001111") == "+15550001111"
    assert normalise_inbound_handle("whatsapp", "unknown") == "unknown"
    assert normalise_inbound_handle("instagram", None) is None
