"""Schemathesis hooks that widen what the fuzzer sends beyond what the schemas describe.

Loaded by the schemathesis process (`SCHEMATHESIS_HOOKS=tests.support.fuzz_hooks`). Each generated
JSON body is sent as drawn, or with one value replaced by a lone surrogate escape (`"\ud800"`) or
an integer far outside any range (up to thousands of digits), or with a new key of odd text
(surrogates, non-ASCII letters and digits, control and separator characters), or with an instant or
a date (any key named like one: `scheduledFor`, `publishAt`, `fromDate`...) moved to the edge of
what datetime can hold (years 1 and 9999, where converting to UTC overflows). `page` and `limit`
get non-ASCII digits or a page number past any list; query dates the same extremes. Every such request is invalid whatever the fuzzer drew (so its negative-data
check still holds) and must be answered with a 4xx, never a 5xx.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import schemathesis
from hypothesis import strategies as st

# json.dumps needs this to write an integer of more than 4,300 digits (the server must refuse it).
sys.set_int_max_str_digits(0)

SURROGATES = st.sampled_from(["\ud800", "a\udfffb", "\udc00\ud800", "x\ud83d"])
# Half lone surrogates: the class of input most likely to slip past a check.
ODD_KEYS = st.one_of(
    SURROGATES,
    st.sampled_from(["١", "𝟏", "１", "é", "עברית", "日本語", "\u2028", "\u200b", "\x00", "\t", "line\nbreak", "\x7f",
                     "😀"]),
)
# Outside every integer field's range; the first two are past what Python's json reads (4,300 digits).
HUGE = st.sampled_from([10**4301, -(10**5000), 10**400, 2**63, -(2**63) - 1, 2**64, 10**30])
ODD_DIGITS = st.sampled_from(["١", "𝟏", "１", "٣٣", "\u200b1", "9" * 40])
PAGING = ("page", "limit")
# Past the contract's bounds (1970-01-01 .. 9999-12-30 in UTC): the first two overflow on conversion.
EXTREME_INSTANTS = st.sampled_from(["9999-12-31T23:00:00-05:00", "0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59",
                                    "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999-14:00", "1969-12-31T23:59:59Z"])
EXTREME_DATES = st.sampled_from(["9999-12-31", "0001-01-01", "1969-12-31"])
HUGE_PAGES = st.sampled_from(["999999999999999999", "1000000001", "9223372036854775807", "18446744073709551617"])
_DATE_NAMES = re.compile(r"(For|At|Date|^from|^to|^since|^until)$")


def _dated_keys(mapping: dict[str, Any]) -> list[str]:
    return sorted(key for key, value in mapping.items() if isinstance(value, str) and _DATE_NAMES.search(key))


def _extreme(key: str) -> Any:
    return EXTREME_DATES if key.endswith("Date") else EXTREME_INSTANTS


def _replace(mapping: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    return {**mapping, key: value}


@schemathesis.hook
def flatmap_body(ctx: Any, body: Any) -> Any:
    if not isinstance(body, dict):
        return st.just(body)
    options = [st.just(body), st.builds(_replace, st.just(body), ODD_KEYS, st.just("x"))]
    if body:
        options.append(st.builds(_replace, st.just(body), st.sampled_from(sorted(body)), st.one_of(SURROGATES, HUGE)))
    for key in _dated_keys(body):
        options.append(st.builds(_replace, st.just(body), st.just(key), _extreme(key)))
    return st.one_of(options)


@schemathesis.hook
def flatmap_query(ctx: Any, query: Any) -> Any:
    if not isinstance(query, dict):
        return st.just(query)
    options = [st.just(query)]
    paging = sorted(key for key in query if key in PAGING)
    if paging:
        options.append(st.builds(_replace, st.just(query), st.sampled_from(paging), ODD_DIGITS))
    if "page" in query:
        options.append(st.builds(_replace, st.just(query), st.just("page"), HUGE_PAGES))
    for key in _dated_keys(query):
        options.append(st.builds(_replace, st.just(query), st.just(key), _extreme(key)))
    return st.one_of(options)
