"""Decoding a JSON body that a stranger sent, once, at the edge.

Python's `json.loads` accepts two things that fail later, far from the request, as a 500:

- a lone surrogate escape (`"\\ud800"`): the decoded `str` cannot be encoded as UTF-8, so storage,
  hashing and rendering the answer all raise `UnicodeEncodeError`;
- an integer of more than 4,300 digits: `json.loads` itself raises a plain `ValueError`.

`decode()` turns both into `BadRequest` (or, for platform webhooks that must never be refused for
their content, replaces each lone surrogate with U+FFFD, and each NUL too: PostgreSQL's text cannot
hold it). A NUL from anyone else is refused where the field is known (`kit.shapes.parse`: 422
on the field), or with `holds_nul()`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kit.errors import BadRequest

# A surrogate escape in the raw text: only then is the decoded value walked.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_NUL_ESCAPE = b"\\u0000"
_UNKEEPABLE = re.compile("[\x00\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def decode(raw: bytes, *, replace_surrogates: bool = False) -> Any:
    """The decoded JSON value of `raw`; `BadRequest` when it is not JSON a service can keep."""
    try:
        value = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise BadRequest("The request body is not valid JSON.") from None
    except ValueError:  # an integer longer than Python converts (4,300 digits)
        raise BadRequest("The request body holds a number too large to read.") from None
    if replace_surrogates:
        return _clean(value) if _SURROGATE_ESCAPE.search(raw) or _NUL_ESCAPE in raw else value
    if _SURROGATE_ESCAPE.search(raw) is None:
        return value
    if _has_lone_surrogate(value):
        raise BadRequest("The request body holds an unpaired surrogate escape (\\ud800-\\udfff), which is not text.")
    return value


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return _LONE_SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(item) for item in value)
    return False


def holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(holds_nul(k) or holds_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(holds_nul(item) for item in value)
    return False


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return _UNKEEPABLE.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(item) for item in value]
    return value
