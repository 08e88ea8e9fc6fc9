"""Settings reach the service from the composition root: `wire()` hands every module that reads them
the service's own, and nothing below it fetches them from the process-wide global."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import service as service_package
from service.common.configured import Configured

ROOT = Path(__file__).resolve().parents[2]
# Where the process-wide settings may be read: the kit that holds them, and the composition root.
ALLOWED = ("kit", "switchboard")
PACKAGES = ("service", "storage", "platforms", "tasks", "http_api", "mcp_server", "oauth", "dashboard")


def _imported(node: ast.AST) -> list[str]:
    """What an import statement names, as `module.name` (or the module, for `import x.y`)."""
    if isinstance(node, ast.ImportFrom):
        return [f"{node.module}.{alias.name}" for alias in node.names]
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    return []


def _fetches_the_global(tree: ast.AST) -> list[int]:
    """Lines that import the settings module itself (to call `current()`), or its `current` or `configure`."""
    fetching = {"kit.settings", "kit.settings.current", "kit.settings.configure"}
    return [node.lineno for node in ast.walk(tree) if fetching & set(_imported(node))]


def test_no_module_below_the_composition_root_fetches_the_settings_global():
    offenders = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            lines = _fetches_the_global(ast.parse(path.read_text(), str(path)))
            offenders += [f"{path.relative_to(ROOT)}:{line}" for line in lines]
    assert offenders == [], f"settings are passed in (wire()), not fetched: {offenders}"
    assert not any(package in ALLOWED for package in PACKAGES)


def test_the_guard_sees_a_module_that_fetches_the_global():
    assert _fetches_the_global(ast.parse("from kit import clock, settings\nsettings.current()\n")) == [1]
    assert _fetches_the_global(ast.parse("from kit.settings import Settings, current\n")) == [1]
    assert _fetches_the_global(ast.parse("from kit.settings import Settings, VERSION\n")) == []


def test_wire_hands_every_module_that_reads_settings_the_services_own(service):
    handles = []
    for info in pkgutil.walk_packages(service_package.__path__, "service."):
        module = importlib.import_module(info.name)
        handles += [(info.name, value) for value in vars(module).values() if isinstance(value, Configured)]
    assert len(handles) >= 10
    for name, handle in handles:
        assert handle() is service, name  # the settings `wire()` was given, not another service's
