"""Declarative field specs: one definition validates a request and describes it in OpenAPI.

A spec checks a decoded JSON value and returns it (normalised where that is the rule, e.g. query
strings to integers), or records a `FieldProblem` naming the field's path. `Obj` rejects unknown
fields so that typos never pass silently.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from kit.errors import FieldProblem, ValidationFailed

MISSING: Any = object()


class Problems:
    def __init__(self) -> None:
        self.items: list[FieldProblem] = []

    def add(self, path: str, message: str) -> None:
        self.items.append(FieldProblem(path or "body", message))

    def raise_if_any(self, message: str = "Some fields are not valid.") -> None:
        if self.items:
            raise ValidationFailed(message, details=self.items)


@dataclass
class Spec:
    description: str = ""
    nullable: bool = False

    def check(self, value: Any, path: str, problems: Problems, *, from_query: bool = False) -> Any:
        if value is None:
            if self.nullable:
                return None
            problems.add(path, "must not be null")
            return MISSING
        return self._check(value, path, problems, from_query)

    def _check(self, value: Any, path: str, problems: Problems, from_query: bool) -> Any:
        raise NotImplementedError

    def schema(self) -> dict[str, Any]:
        out = self._schema()
        if self.description:
            out["description"] = self.description
        if self.nullable:
            out["type"] = [out["type"], "null"] if "type" in out else out.get("type")
        return out

    def _schema(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass
class Str(Spec):
    min_length: int | None = None
    max_length: int | None = None
    enum: Sequence[str] | None = None
    pattern: str | None = None
    format: str | None = None

    def _check(self, value: Any, path: str, problems: Problems, from_query: bool) -> Any:
        if not isinstance(value, str):
            problems.add(path, "must be a string")
            return MISSING
        if self.enum is not None and value not in self.enum:
            problems.add(path, "must be one of: " + ", ".join(self.enum))
            return MISSING
        if self.min_length is not None and len(value) < self.min_length:
            problems.add(path, f"must be at least {self.min_length} character(s) long")
            return MISSING
        if self.max_length is not None and len(value) > self.max_length:
            problems.add(path, f"must be at most {self.max_length} characters long")
            return MISSING
        if self.pattern is not None and not re.fullmatch(self.pattern, value):
            problems.add(path, "has the wrong form")
            return MISSING
        if self.format == "https-url" and not is_https_url(value):
            problems.add(path, "must be an absolute https URL")
            return MISSING
        return value

    def _schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "string"}
        if self.enum is not None:
            out["enum"] = list(self.enum)
        if self.min_length is not None:
            out["minLength"] = self.min_length
        if self.max_length is not None:
            out["maxLength"] = self.max_length
        if self.pattern is not None:
            out["pattern"] = f"^{self.pattern}$"
        if self.format == "https-url":
            out["format"] = "uri"
        elif self.format:
            out["format"] = self.format
        return out


@dataclass
class Int(Spec):
    minimum: int | None = None
    maximum: int | None = None

    def _check(self, value: Any, path: str, problems: Problems, from_query: bool) -> Any:
        if from_query and isinstance(value, str):
            # ASCII digits only: `\d` would also read "١" (Arabic-Indic) or "１" (full width) as 1.
            if not re.fullmatch(r"-?[0-9]{1,18}", value):
                problems.add(path, "must be an integer")
                return MISSING
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            problems.add(path, "must be an integer")
            return MISSING
        if self.minimum is not None and value < self.minimum:
            problems.add(path, f"must be at least {self.minimum}")
            return MISSING
        if self.maximum is not None and value > self.maximum:
            problems.add(path, f"must be at most {self.maximum}")
            return MISSING
        return value

    def _schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "integer"}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        return out


@dataclass
class Bool(Spec):
    def _check(self, value: Any, path: str, problems: Problems, from_query: bool) -> Any:
        if from_query and isinstance(value, str) and value in {"true", "false"}:
            return value == "true"
        if not isinstance(value, bool):
            problems.add(path, "must be true or false")
            return MISSING
        return value

    def _schema(self) -> dict[str, Any]:
        return {"type": "boolean"}


@dataclass
class Array(Spec):
    items: Spec = field(default_factory=lambda: Str())
    min_items: int | None = None
    max_items: int | None = None

    def _check(self, value: Any, path: str, problems: Problems, from_query: bool) -> Any:
        if not isinstance(value, list):
            problems.add(path, "must be an array")
            return MISSING
        if self.min_items is not None and len(value) < self.min_items:
            problems.add(path, f"must have at least {self.min_items} item(s)")
            return MISSING
        if self.max_items is not None and len(value) > self.max_items:
            problems.add(path, f"must have at most {self.max_items} items")
            return MISSING
        before = len(problems.items)
        out = [self.items.check(item, f"{path}[{index}]", problems) for index, item in enumerate(value)]
        return MISSING if len(problems.items) > before else out

    def _schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "array", "items": self.items.schema()}
        if self.min_items is not None:
            out["minItems"] = self.min_items
        if self.max_items is not None:
            out["maxItems"] = self.max_items
        return out


@dataclass
class Any_(Spec):
    """A free-form JSON value (only for responses that carry platform data as is)."""

    def _check(self, value: Any, path: str, problems: Problems, from_query: bool) -> Any:
        return value

    def schema(self) -> dict[str, Any]:
        return {"description": self.description} if self.description else {}


@dataclass
class Obj(Spec):
    fields: Mapping[str, Spec] = field(default_factory=dict)
    required: Sequence[str] = ()
    name: str | None = None
    additional: Spec | None = None  # for maps such as {"instagram": "acc_..."}

    def _check(self, value: Any, path: str, problems: Problems, from_query: bool) -> Any:
        if not isinstance(value, dict):
            problems.add(path, "must be an object")
            return MISSING
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = f"{path}.{key}" if path else key
            spec = self.fields.get(key, self.additional)
            if spec is None:
                problems.add(sub, "is not a known field")
                continue
            checked = spec.check(item, sub, problems, from_query=from_query)
            if checked is not MISSING:
                out[key] = checked
        for key in self.required:
            if key not in value:
                problems.add(f"{path}.{key}" if path else key, "is required")
        return out

    def validate(self, value: Any, *, from_query: bool = False) -> dict[str, Any]:
        problems = Problems()
        out = self.check(value, "", problems, from_query=from_query)
        problems.raise_if_any()
        return out

    def _schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "object",
            "properties": {key: spec.schema() for key, spec in self.fields.items()},
        }
        if self.name:
            out["title"] = self.name  # the OpenAPI document names it in `components/schemas`
        if self.additional is not None:
            out["additionalProperties"] = self.additional.schema()
        else:
            out["additionalProperties"] = False
        if self.required:
            out["required"] = list(self.required)
        return out


def is_https_url(value: str) -> bool:
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    # A control character (a tab, a newline) is no part of a URL: urlsplit strips some of them, so
    # the URL stored would not be the URL used.
    return parts.scheme == "https" and bool(parts.hostname) and " " not in value and value.isprintable()


# Shapes used by many records.
ID = Str(min_length=1, max_length=64)
INSTANT = Str(format="date-time", description="ISO 8601 instant in UTC with Z.")
NULLABLE_INSTANT = Str(format="date-time", nullable=True)


def record(name: str, fields: Mapping[str, Spec], description: str = "") -> Obj:
    """A returned record: every listed field is always present."""
    return Obj(fields=fields, required=tuple(fields), name=name, description=description)


def page_of(item: Obj) -> Obj:
    return Obj(
        name=f"{item.name}Page" if item.name else None,
        fields={
            "data": Array(items=item),
            "pagination": Obj(
                fields={
                    "page": Int(minimum=1),
                    "limit": Int(minimum=1, maximum=100),
                    "total": Int(minimum=0),
                    "pages": Int(minimum=0),
                },
                required=("page", "limit", "total", "pages"),
            ),
        },
        required=("data", "pagination"),
    )


PAGE_QUERY = {
    "page": Int(minimum=1, description="Page number, from 1."),
    "limit": Int(minimum=1, maximum=100, description="Items a page, 1..100 (default 20)."),
}
