"""Problems the check finds in requests the adapters send today, each a known adapter defect with the
issue item it belongs to. The suite passes them (and counts them); the mutation test holds that each
one is still found, so an entry is removed with its fix rather than outliving it.

Each entry: the platform, a regular expression a problem line (`"<platform> <METHOD> <path>: <problem>"`)
matches, and the issue item (or the first part's finding) that fixes the adapter."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Defect:
    platform: str
    problem: re.Pattern[str]
    item: str


DEFECTS: list[Defect] = []


def known(platform: str, line: str) -> Defect | None:
    return next((d for d in DEFECTS if d.platform == platform and d.problem.search(line)), None)
