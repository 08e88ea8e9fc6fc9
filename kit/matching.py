"""Keyword matching for comment automations and story-reply sequences.

People type `Café`, `CAFE` or `cafe` for the same word, so texts and keywords are compared in one
folded form: Unicode case folding (`ß` → `ss`), then compatibility decomposition (NFKD) with the
combining marks dropped (`ç` → `c`, `é` → `e`, full-width `ｉｎｆｏ` → `info`). `PREÇO` matches `preco`.

- `contains`: a keyword appears anywhere in the text.
- `exact`: the whole text is a keyword, ignoring blanks and punctuation around it (`Info!` and
  ` info ` are `info`; runs of blanks inside count as one).
- `any`: every text matches.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Literal

MatchType = Literal["contains", "exact", "any"]
MATCH_TYPES: tuple[str, ...] = ("contains", "exact", "any")


def fold(text: str | None) -> str:
    """The form in which texts are compared: case and accents gone."""
    if not text:
        return ""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def _ignorable(char: str) -> bool:
    # Blanks, and punctuation (P*) or symbols (S*: emoji, `+`, `$`) around the words.
    return char.isspace() or unicodedata.category(char)[0] in "PS"


def _core(text: str) -> str:
    start, end = 0, len(text)
    while start < end and _ignorable(text[start]):
        start += 1
    while end > start and _ignorable(text[end - 1]):
        end -= 1
    return " ".join(text[start:end].split())


def can_match(keyword: str) -> bool:
    """Whether a keyword has something a comment can match: one made only of blanks, punctuation
    and symbols (`"!!!"`, `" "`) folds to nothing and would silently never match."""
    return bool(_core(fold(keyword)))


def matches(text: str | None, keywords: Iterable[str], match_type: str) -> bool:
    """Whether `text` matches one of `keywords` under `match_type`. No keywords match nothing
    (except with `any`): a caller for whom "no keywords" means "everything" says so itself."""
    if match_type == "any":
        return True
    folded = fold(text)
    if match_type == "exact":
        core = _core(folded)
        return bool(core) and any(core == _core(fold(keyword)) for keyword in keywords)
    return any(needle and needle in folded for needle in (fold(keyword).strip() for keyword in keywords))
