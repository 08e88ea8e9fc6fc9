"""The service never branches on a platform's name: what differs per platform is declared by its
adapter (`platforms/<name>/`: capabilities, rules, webhook methods) and the service asks for it. A
platform change is then one folder and its tests; these keep it so."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from platforms.base import PLATFORMS

SERVICE = Path(__file__).resolve().parents[2] / "service"
# The one place the names are written: the platform enum of the records' shapes.
ENUM = SERVICE / "accounts" / "shapes.py"
BRANCH = re.compile(r"platform ==|platform !=|platform in \(")


def _sources() -> list[Path]:
    return sorted(path for path in SERVICE.rglob("*.py") if path != ENUM)


def test_no_comparison_of_a_platform_in_the_service():
    found = [f"{path.relative_to(SERVICE.parent)}:{number}: {line.strip()}"
             for path in _sources() for number, line in enumerate(path.read_text().splitlines(), 1)
             if BRANCH.search(line)]
    assert found == []


def test_no_platform_name_is_written_in_the_service():
    """No `"youtube"` in a comparison, a tuple of platforms, a lookup table or a default argument:
    each would be a rule of one platform living outside its folder."""
    found = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in PLATFORMS:
                found.append(f"{path.relative_to(SERVICE.parent)}:{node.lineno}: {node.value!r}")
    assert found == []


def test_the_checks_would_see_a_branch():
    """The two checks above catch what they look for (so an empty answer means something)."""
    branch = 'if account.platform == "x":\n    pass\nLISTED = ("instagram", "facebook")\n'
    assert BRANCH.search(branch)
    names = [node.value for node in ast.walk(ast.parse(branch))
             if isinstance(node, ast.Constant) and node.value in PLATFORMS]
    assert names == ["x", "instagram", "facebook"]
