"""Problems the check finds in requests the adapters send today, each a known adapter defect with
what fixes it. The suite passes them (and counts them); the mutation test holds that each one is
still found, so an entry is removed with its fix rather than outliving it.

Each entry: the platform, a regular expression a problem line (`"<platform> <METHOD> <path>: <problem>"`)
matches, and the defect with the fix it awaits."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Defect:
    platform: str
    problem: re.Pattern[str]
    item: str


def _defect(platform: str, problem: str, item: str) -> Defect:
    return Defect(platform, re.compile(problem), item)


# Empty: every request the adapters send and every answer the sandbox gives passes the check. A
# defect found later is listed here with the fix it awaits, and removed with that fix.
DEFECTS: list[Defect] = []


def known(platform: str, line: str) -> Defect | None:
    return next((d for d in DEFECTS if d.platform == platform and d.problem.search(line)), None)
