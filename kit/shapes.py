"""The base classes of every request and record shape, and the one place a shape's refusal becomes
the contract's `validation_failed` envelope.

A shape is a pydantic model: snake_case attributes in Python, the contract's camelCase names on the
wire (`alias_generator`). `/v1`, the OpenAPI document and the MCP tools all read the same model, so
an answer, its schema and a tool's input or output schema cannot drift apart.

- `Body`: a JSON request body or a tool's arguments. Unknown fields are refused (a typo never passes
  silently) and types are exact: JSON's `"5"` is not an integer, `1` is not `true`.
- `Query`: query parameters. They arrive as strings, so an integer is read from its text here (and
  only from digits); the routing layer drops parameters the operation does not know, as the
  contract says.
- `Record`: an answer, built from a storage row (`from_attributes`) or from values, dumped by alias.
"""

from __future__ import annotations

import datetime as dt
import re
from functools import cache
from typing import Annotated, Any, TypeVar

from pydantic import (
    AfterValidator,
    AliasGenerator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    WithJsonSchema,
    create_model,
)
from pydantic.alias_generators import to_camel
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import PydanticCustomError

from kit import urls
from kit.errors import FieldProblem, ValidationFailed

Shape = TypeVar("Shape", bound=BaseModel)


class Body(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", strict=True,
                              frozen=True)


class Query(BaseModel):
    # `forbid` as for bodies: MCP tools take the same model as arguments, where an unknown argument is
    # a mistake; `/v1` hands over only the parameters the model names (the rest are ignored).
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", strict=True,
                              frozen=True)


class Record(BaseModel):
    # Read by attribute name only (a row's `account_id`): looking an attribute up by its camelCase
    # alias first would miss on every field of a Peewee row, and a miss raises, which is slow.
    model_config = ConfigDict(alias_generator=AliasGenerator(serialization_alias=to_camel), from_attributes=True,
                              serialize_by_alias=True)

    def dump(self) -> dict[str, Any]:
        """The record as the contract's JSON object (camelCase, instants as text)."""
        return self.model_dump(mode="json", by_alias=True)


def rule(message: str) -> PydanticCustomError:
    """A refusal whose message is already written for a person (see `_message`)."""
    return PydanticCustomError("rule", message)


# -- field types shared by many shapes ---------------------------------------------------------


def _query_int(value: Any) -> Any:
    # A URL carries text: only plain digits are an integer ("1.5", "1e3", " 1" are not), and no
    # more digits than a 64-bit column holds.
    if isinstance(value, str):
        # ASCII digits only: `\d` would also read "١" (Arabic-Indic) or "１" (full width) as 1.
        if not re.fullmatch(r"-?[0-9]{1,18}", value):
            raise rule("must be an integer")
        return int(value)
    return value


def instant_text(value: Any) -> str | None:
    """A stored naive-UTC moment as `YYYY-MM-DDTHH:MM:SSZ`. Rows read by Peewee carry datetimes;
    rows read by raw SQL on SQLite carry the text Peewee wrote (`YYYY-MM-DD HH:MM:SS[.ffffff]`)."""
    # Text first: it is what a page of raw rows carries. Slicing also keeps an instant already in
    # the contract's form (`2026-11-21T09:30:00Z`) as it is.
    if type(value) is str and len(value) >= 19:
        return f"{value[:10]}T{value[11:19]}Z"
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return f"{value.isoformat(timespec='seconds')}Z"  # half strftime's cost
    raise rule("must be a moment")


# The bounds of every instant and date a caller sends (CONTRACT §1): dates, and instants read in UTC,
# from 1970-01-01 to 9999-12-30. A day of margin below year 10000 leaves room for an offset, a
# bucket's end or "the next day" without Python's datetime overflowing (a 500 otherwise).
EARLIEST_DAY = dt.date(1970, 1, 1)
LATEST_DAY = dt.date(9999, 12, 30)
OUT_OF_BOUNDS = f"must be between {EARLIEST_DAY.isoformat()} and {LATEST_DAY.isoformat()} (UTC)"


def day_in_bounds(day: dt.date) -> bool:
    if isinstance(day, dt.datetime):
        day = day.date()
    return EARLIEST_DAY <= day <= LATEST_DAY


def bounded_utc(moment: dt.datetime) -> dt.datetime | None:
    """An aware moment (or a naive one, read as UTC) as naive UTC, or None when it lies outside the
    bounds: also where the conversion itself would leave the years datetime knows
    (`9999-12-31T23:00:00-05:00`, `0001-01-01T00:00:00+05:00`)."""
    try:
        if moment.tzinfo is not None:
            moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
    except (OverflowError, ValueError):
        return None
    return moment if day_in_bounds(moment) else None


def _https_url(value: str) -> str:
    if not is_https_url(value):
        raise rule("must be an absolute https URL")
    return value


def is_https_url(value: str) -> bool:
    # One reading of a URL for every front door (`kit.urls`): port range, brackets, IDNA.
    return urls.is_valid(value)


# The default of a field that may be left out but not sent as null ("must not be null"), as /v1 has
# always answered: `contact_handle: Text = LEFT_OUT` (typed `Any` so that the annotation stays `str`).
LEFT_OUT: Any = None

Id = Annotated[str, Field(min_length=1, max_length=64)]
HttpsUrl = Annotated[str, AfterValidator(_https_url), Field(json_schema_extra={"format": "uri"})]
Instant = Annotated[str, BeforeValidator(instant_text),
                    WithJsonSchema({"type": "string", "format": "date-time",
                                    "description": "ISO 8601 instant in UTC with Z."})]
NullableInstant = Annotated[str | None, BeforeValidator(instant_text),
                            WithJsonSchema({"type": ["string", "null"], "format": "date-time"})]


class ErrorDetail(Record):
    field: str = Field(description="The field's camelCase path, e.g. `events[1]`; `body` for the body as a whole.")
    message: str


class ErrorInfo(Record):
    code: str
    message: str
    details: list[ErrorDetail] = Field(LEFT_OUT, description="With `validation_failed`: one entry per field.")


# `ServiceError.body()` writes this shape; a test holds the two together.
class Error(Record):
    """Every error answer of /v1, and the structured content of a failed MCP tool call."""

    error: ErrorInfo


# The highest page number any list takes (`kit.pagination.window` holds every list to it): far
# past the last page of any real list, and small enough that the first row's offset stays an exact
# 64-bit integer whatever the limit (SQLite and PostgreSQL refuse a larger OFFSET with an error).
MAX_PAGE = 1_000_000_000


class PageQuery(Query):
    # The constraints come before the text conversion, so that they land on the integer's JSON Schema.
    page: Annotated[int, Field(ge=1, le=MAX_PAGE), BeforeValidator(_query_int)] | None = Field(
        None, description=f"Page number, from 1 (at most {MAX_PAGE}); past the last page, an empty page.")
    limit: Annotated[int, Field(ge=1, le=100), BeforeValidator(_query_int)] | None = Field(
        None, description="Items a page, 1..100 (default 20).")


class Pagination(Record):
    page: int = Field(ge=1)
    limit: int = Field(ge=1, le=100)
    total: int = Field(ge=0)
    pages: int = Field(ge=0)


@cache
def page_of(item: type[Record]) -> type[Record]:
    """The answer of a list: `{"data": [item...], "pagination": {...}}`, named `<Item>Page`."""
    return create_model(f"{item.__name__}Page", __base__=Record, data=(list[item], ...),  # type: ignore[valid-type]
                        pagination=(Pagination, ...))


@cache
def list_adapter(item: type[Record]) -> TypeAdapter[list[Any]]:
    return TypeAdapter(list[item])  # type: ignore[valid-type]


@cache
def page_adapter(item: type[Record]) -> TypeAdapter[Any]:
    return TypeAdapter(page_of(item))


# -- JSON Schema -------------------------------------------------------------------------------


class SchemaGenerator(GenerateJsonSchema):
    """Pydantic's schema without a `title` on every property (the field's name says it)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def default_schema(self, schema: Any) -> Any:
        # A field that may be left out but not sent as null keeps None as its Python default: the
        # document must not show a `default: null` its own type refuses.
        out = super().default_schema(schema)
        if out.get("default", 0) is None and not _allows_null(out):
            del out["default"]
        return out


def _allows_null(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return kind == "null" or (isinstance(kind, list) and "null" in kind) or any(
        _allows_null(option) for option in schema.get("anyOf", []))


REF_TEMPLATE = "#/components/schemas/{model}"


def json_schema(model: type[BaseModel], *, mode: str = "validation", ref_template: str = REF_TEMPLATE
                ) -> dict[str, Any]:
    """The model's JSON Schema, a copy of its own: the caller may change it."""
    schema: dict[str, Any] = _copied(_json_schema(model, mode, ref_template))
    return schema


def _copied(value: Any) -> Any:
    """A copy of a JSON value (dicts, lists and scalars): a few times quicker than `copy.deepcopy`."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return value


@cache
def _json_schema(model: type[BaseModel], mode: str, ref_template: str) -> dict[str, Any]:
    # Worked out once per model: a shape does not change once defined, and every app a process
    # builds (the OpenAPI document, the MCP tools' schemas) asks again for the same few hundred.
    return model.model_json_schema(by_alias=True, ref_template=ref_template,
                                   schema_generator=SchemaGenerator, mode=mode)  # type: ignore[arg-type]


@cache
def aliases(model: type[BaseModel]) -> frozenset[str]:
    return frozenset(field.alias or name for name, field in model.model_fields.items())


# -- the one place a refusal becomes `validation_failed` ---------------------------------------

_TYPE_MESSAGES = {
    "string_type": "must be a string",
    "string_unicode": "must be a string",
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be an integer",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "list_type": "must be an array",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "missing": "is required",
    "extra_forbidden": "is not a known field",
    "string_pattern_mismatch": "has the wrong form",
}


def _message(error: Any) -> str:
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == "rule":
        return str(error["msg"])
    if error.get("input", "") is None and kind.endswith("_type"):
        return "must not be null"
    if kind in _TYPE_MESSAGES:
        return _TYPE_MESSAGES[kind]
    if kind in {"literal_error", "enum"}:
        expected = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        return "must be one of: " + ", ".join(expected)
    # A length limit on a validated string (a URL) reaches pydantic as a generic `too_long`.
    if kind == "string_too_short" or (kind == "too_short" and isinstance(error.get("input"), str)):
        return f"must be at least {ctx['min_length']} character(s) long"
    if kind == "string_too_long" or (kind == "too_long" and isinstance(error.get("input"), str)):
        return f"must be at most {ctx['max_length']} characters long"
    if kind in {"greater_than_equal", "greater_than"}:
        return f"must be at least {ctx.get('ge', ctx.get('gt'))}"
    if kind in {"less_than_equal", "less_than"}:
        return f"must be at most {ctx.get('le', ctx.get('lt'))}"
    if kind == "too_short":
        return f"must have at least {ctx['min_length']} item(s)"
    if kind == "too_long":
        return f"must have at most {ctx['max_length']} items"
    return "is not valid"


def _path(location: tuple[int | str, ...]) -> str:
    """`("events", 1)` → `events[1]`, `("filter", "accountId")` → `filter.accountId`."""
    out = ""
    for part in location:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out or "body"


def validation_failed(error: ValidationError) -> ValidationFailed:
    """A model's refusal in the contract's words: each field by its camelCase path, with a message a
    person understands, never pydantic's text or the input it refused."""
    details = [FieldProblem(_path(problem["loc"]), _message(problem))
               for problem in error.errors(include_url=False, include_context=True, include_input=True)]
    return ValidationFailed("Some fields are not valid.", details=details)


def parse(model: type[Shape], data: Any) -> Shape:
    """`data` (decoded JSON, query parameters or tool arguments) as `model`, or `ValidationFailed`.

    By the wire's names only: `populate_by_name` lets Python build a model by its attribute names,
    but `{"account_id": ...}` in a body is an unknown field, as it always was."""
    nul = _nul_fields(data, ())
    if nul:
        # PostgreSQL's text cannot hold NUL (the driver raises), and no platform takes it either.
        raise ValidationFailed("Some fields are not valid.",
                               details=[FieldProblem(field, "must not contain the NUL character") for field in nul])
    try:
        return model.model_validate(data, by_alias=True, by_name=False)
    except ValidationError as error:
        if not any(problem["type"] in ("int_type", "int_from_float") and type(problem["input"]) is float
                   and problem["input"].is_integer() for problem in error.errors()):
            raise validation_failed(error) from None
    # JSON Schema counts 2003.0 as an integer (a number whose fraction is zero); JSON decoders give a
    # float for it. Read such floats as the integers they are, and try once more.
    try:
        return model.model_validate(_whole_floats_as_ints(data), by_alias=True, by_name=False)
    except ValidationError as error:
        raise validation_failed(error) from None


def _whole_floats_as_ints(value: Any) -> Any:
    if type(value) is float:
        return int(value) if value.is_integer() and abs(value) < 2**63 else value
    if isinstance(value, dict):
        return {key: _whole_floats_as_ints(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_whole_floats_as_ints(item) for item in value]
    return value


def _nul_fields(value: Any, location: tuple[int | str, ...]) -> list[str]:
    if isinstance(value, str):
        return [_path(location)] if "\x00" in value else []
    if isinstance(value, dict):
        return [field for key, item in value.items() for field in _nul_fields(item, (*location, key))]
    if isinstance(value, list):
        return [field for index, item in enumerate(value) for field in _nul_fields(item, (*location, index))]
    return []


def button_problems(label: str | None, url: str | None, *, label_field: str = "buttonLabel",
                    url_field: str = "buttonUrl") -> list[FieldProblem]:
    """The button rule of broadcasts, sequence steps and automations' DMs: a label and an https URL
    together, or neither (naming both fields). A label over the platforms' 20 characters is kept
    whole and cut when shown."""
    if (label is None) != (url is None):
        message = "give buttonLabel and buttonUrl together, or neither"
        return [FieldProblem(label_field, message), FieldProblem(url_field, message)]
    return []
