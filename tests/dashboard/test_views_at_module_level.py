"""Every dashboard view can be read and tested alone: each route's endpoint is a function defined at
the top of its module (or a `functools.partial` of one, binding what a shared view acts on), never a
closure made inside a `routes()` function, and no module of the dashboard defines a view inside a
function."""

from __future__ import annotations

import ast
import functools
import inspect
import sys
from pathlib import Path
from typing import Any

from starlette.routing import Route

from dashboard import routes as dashboard
from kit.settings import Settings

DASHBOARD = Path(__file__).resolve().parents[2] / "dashboard"


def _view(endpoint: Any) -> Any:
    while isinstance(endpoint, functools.partial):
        endpoint = endpoint.func
    return endpoint


def _not_at_module_level(endpoint: Any) -> bool:
    module = sys.modules.get(getattr(endpoint, "__module__", ""))
    return (not inspect.isfunction(endpoint) or "<locals>" in endpoint.__qualname__
            or getattr(module, endpoint.__name__, None) is not endpoint)


def test_every_route_names_a_module_level_function_of_the_dashboard(settings: Settings):
    routes = [route for route in dashboard.build_routes(settings) if isinstance(route, Route)]
    views = {route.path: _view(route.endpoint) for route in routes}
    assert len(views) > 50  # the table was read, not an empty list
    assert {path: view for path, view in views.items() if _not_at_module_level(view)} == {}
    assert {path for path, view in views.items() if not view.__module__.startswith("dashboard.")} == set()


def test_no_view_is_defined_inside_a_function():
    """A view is a coroutine function: none is written inside another function."""
    nested = []
    for path in sorted(DASHBOARD.glob("*.py")):
        for outer in ast.walk(ast.parse(path.read_text())):
            if isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)):
                nested += [f"{path.name}:{inner.lineno}: {inner.name} in {outer.name}" for inner in ast.walk(outer)
                           if inner is not outer and isinstance(inner, ast.AsyncFunctionDef)]
    assert nested == []


def test_the_checks_would_see_a_closure():
    def routes() -> Any:
        async def view() -> None: ...
        return view

    assert _not_at_module_level(_view(functools.partial(routes(), thing=None)))
    assert not _not_at_module_level(_view(functools.partial(dashboard.build_routes)))
