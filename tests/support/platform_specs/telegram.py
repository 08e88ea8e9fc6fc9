"""Telegram requests against the Bot API as `aiogram` describes it: one pydantic model per method
(`aiogram.methods`, with `__api_method__` the Bot API's name) whose fields are the method's
parameters and whose types are the Bot API's objects. A request must name a method, give each
required parameter, and every parameter (also inside nested objects: a keyboard's button, an album's
item) must be one the Bot API knows, of its type."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from tests.support.platform_specs import FILE, Seen

PATH = re.compile(r"^/bot[^/]+/(?P<method>[A-Za-z]+)$")


@functools.cache
def methods() -> dict[str, type[BaseModel]]:
    import aiogram.methods

    found = {}
    for name in dir(aiogram.methods):
        model = getattr(aiogram.methods, name)
        api_name = getattr(model, "__api_method__", None)
        if isinstance(model, type) and isinstance(api_name, str):
            found[api_name.lower()] = model  # the Bot API's method names are case-insensitive
    return found


def version() -> str:
    import aiogram

    return f"aiogram {aiogram.__version__} (Bot API {aiogram.__api_version__})"


def _unknown(value: Any, where: str) -> list[str]:
    """Fields the models kept as extras: parameters the Bot API does not have."""
    problems: list[str] = []
    if isinstance(value, BaseModel):
        problems += [f"{where}.{key}: not a field of {type(value).__name__}" for key in (value.model_extra or {})]
        for key in type(value).model_fields:
            problems += _unknown(getattr(value, key, None), f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            problems += _unknown(item, f"{where}[{index}]")
    return problems


def _decoded(fields: dict[str, Any]) -> dict[str, Any]:
    """Form and multipart values are text: objects travel JSON-serialised, files as parts."""
    out: dict[str, Any] = {}
    # A file part another field names (`"media": "attach://file1"` in an album) is no field itself.
    named = {key for key, value in fields.items() if value is FILE
             and any(isinstance(other, str) and f"attach://{key}" in other for other in fields.values())}
    for key, value in fields.items():
        if key in named:
            continue
        if value is FILE:
            out[key] = "attach://" + key
        elif isinstance(value, str) and value[:1] in ("{", "["):
            try:
                out[key] = json.loads(value)
            except ValueError:
                out[key] = value
        else:
            out[key] = value
    return out


def check(seen: Seen) -> list[str]:
    match = PATH.match(seen.path)
    if match is None:
        return [f"{seen.method} {seen.path}: not a Bot API method path"]
    model = methods().get(match["method"].lower())
    if model is None:
        return [f"{match['method']}: no such Bot API method"]
    if "json" in seen.content_type and seen.body:
        data = json.loads(seen.body)
    else:
        data = _decoded({**seen.query, **seen.form()})
    name = model.__api_method__  # type: ignore[attr-defined]
    try:
        parsed = model.model_validate(data)
    except ValidationError as error:
        return [f"{name}: {'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()]
    return [f"{name}: {p}" for p in _unknown(parsed, "body")]
