"""axe-core, the accessibility engine (npm, pinned by `tests/support/axe/package.json` and its lock
file), for the dashboard's browser tests: installed once per lock file into a cache directory with
`npm ci` (`make install` does it ahead, so a test run needs no network), injected into every page of
a Playwright context, and run there. The tests that use it skip when npm is missing and it was
never installed."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent / "axe"
CACHE = Path.home() / ".cache" / "switchboard-tests"
# What a person is kept from by a page: axe's two highest impacts.
BLOCKING = ("serious", "critical")


def _target() -> Path:
    lock = (HERE / "package-lock.json").read_bytes()
    return CACHE / f"axe-core-{hashlib.sha256(lock).hexdigest()[:12]}"


def install() -> Path | None:
    """The installed axe-core's folder; None when it is not there and npm is missing."""
    target = _target()
    script = target / "node_modules" / "axe-core" / "axe.min.js"
    if not script.exists():
        if not shutil.which("npm"):
            return None
        target.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy(HERE / name, target / name)
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=target, check=True, capture_output=True,
                       timeout=300)
    return script.parent


def source() -> str:
    """axe.min.js, for `BrowserContext.add_init_script` (run before the page's own scripts and
    outside its Content-Security-Policy, which allows no inline script)."""
    folder = install()
    if folder is None:
        pytest.skip("npm is needed to install axe-core")
    return (folder / "axe.min.js").read_text()


# Each violation as a line a person can act on: the rule, its impact, its help and where it is.
_RUN = """async () => {
  const found = await axe.run(document, {resultTypes: ["violations"]});
  return found.violations.filter(v => ["serious", "critical"].includes(v.impact)).map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    where: v.nodes.slice(0, 3).map(n => n.target.join(" ") + ": " + (n.failureSummary || "").split("\\n").slice(1, 2).join(""))
  }));
}"""


def blocking_violations(page: Any) -> list[dict[str, Any]]:
    """The page's serious and critical violations (empty when there are none)."""
    return list(page.evaluate(_RUN))


if __name__ == "__main__":  # `make install`: fetched ahead, so a test run needs no network
    print("axe-core:", install() or "not installed (npm is missing)")
