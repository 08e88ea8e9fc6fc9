"""The service and the dashboard never branch on a platform's name: what differs per platform is
declared by its adapter (`platforms/<name>/`: capabilities, rules, webhook methods, its name as a
person reads it, its post options) and they ask for it (the dashboard through the service). A
platform change is then one folder and its tests; these keep it so."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from platforms.base import PLATFORMS

ROOT = Path(__file__).resolve().parents[2]
SERVICE = ROOT / "service"
DASHBOARD = ROOT / "dashboard"
# The one place the names are written: the platform enum of the records' shapes.
ENUM = SERVICE / "accounts" / "shapes.py"
# A platform compared with something (a name, a constant, a tuple), but not with another platform
# variable: "is this account of the platform the path names?" is no rule of one platform.
BRANCH = re.compile(r"platform [=!]= (?!platform\b)|platform in \(")


def _sources() -> list[Path]:
    return sorted(path for folder in (SERVICE, DASHBOARD) for path in folder.rglob("*.py") if path != ENUM)


def test_no_comparison_of_a_platform_in_the_service_or_the_dashboard():
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in _sources() for number, line in enumerate(path.read_text().splitlines(), 1)
             if BRANCH.search(line)]
    assert found == []


def test_no_platform_name_is_written_in_the_service_or_the_dashboard():
    """No `"youtube"` in a comparison, a tuple of platforms, a lookup table or a default argument:
    each would be a rule of one platform living outside its folder."""
    found = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in PLATFORMS:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert found == []


def test_the_checks_would_see_a_branch():
    """The two checks above catch what they look for (so an empty answer means something)."""
    branch = 'if account.platform == "x":\n    pass\nLISTED = ("instagram", "facebook")\n'
    assert BRANCH.search(branch)
    assert BRANCH.search("if account.platform != Platform.X:") and not BRANCH.search("if account.platform != platform:")
    names = [node.value for node in ast.walk(ast.parse(branch))
             if isinstance(node, ast.Constant) and node.value in PLATFORMS]
    assert names == ["x", "instagram", "facebook"]
