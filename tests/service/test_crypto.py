"""Credentials at rest: each caller gets its own copy of what was sealed, and a key that changed
still opens nothing, however often the same bytes were opened before."""

from __future__ import annotations

import dataclasses

import pytest

from kit import crypto, settings


def test_each_opening_is_a_copy_of_its_own(service):
    sealed = crypto.encrypt_json({"botToken": "123:abc", "pages": [{"id": "1"}]})
    first = crypto.decrypt_json(sealed)
    first["botToken"] = "changed"
    first["pages"].append({"id": "2"})
    assert crypto.decrypt_json(memoryview(sealed)) == {"botToken": "123:abc", "pages": [{"id": "1"}]}


def test_another_secret_key_opens_nothing_it_opened_before(service):
    sealed = crypto.encrypt_json({"botToken": "123:abc"})
    assert crypto.decrypt_json(sealed) == {"botToken": "123:abc"}
    settings.configure(dataclasses.replace(service, secret_key="another-key-entirely"))
    with pytest.raises(ValueError, match="cannot be decrypted"):
        crypto.decrypt_json(sealed)
