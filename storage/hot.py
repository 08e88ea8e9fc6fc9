"""Hand-written SQL for the statements every request or every sent message runs.

Peewee builds its SQL anew on every call, which costs more than running the statement itself
(measured: ~0.3 ms of Python for a ~0.02 ms SQLite lookup). These statements are compiled once per
database and run with `execute_sql`: the key lookup and rate count, `Prepared` queries, and
`by_id` / `insert` for the rows the send path reads and writes. Everything else uses the models.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
from typing import Any, NamedTuple, TypeVar

from peewee import (
    BooleanField,
    DateTimeField,
    Field,
    FloatField,
    ForeignKeyField,
    IntegerField,
    Model,
    ModelDictCursorWrapper,
    ModelTupleCursorWrapper,
    _StringField,
)

from storage.db import NO_FLUSH_WAIT, PostgresPool, db, execute
from storage.models import ApiKey

M = TypeVar("M", bound=Model)


class KeyRow(NamedTuple):
    id: str
    workspace_id: str
    secret_hash: str
    scope: str
    profile_ids: list[str]
    permission: str
    last_used_at: datetime | None
    expires_at: datetime | None
    revoked_at: datetime | None


@lru_cache(maxsize=64)
def _placeholders(template: str, param: str) -> str:
    return template.replace("?", param)


def sql(template: str) -> str:
    """SQL written with `?` placeholders, in the open database's placeholder style."""
    param = db.obj.param  # not `db.param`: the proxy's attribute lookup is slower than the rest
    return template if param == "?" else _placeholders(template, param)


def run(template: str, params: tuple[Any, ...]) -> Any:
    return execute(sql(template), params)


def stamp(value: datetime) -> Any:
    """A datetime parameter used several times in one statement, converted once: on SQLite the text
    sqlite3's own adapter makes of it (`isoformat(" ")`, ~6,000 instructions a conversion)."""
    return value.isoformat(" ") if db.obj.param == "?" else value


def run_fixed(template: str, params: tuple[Any, ...], *, wait_for_flush: bool = True) -> Any:
    """`run` for a statement whose text never changes and that runs on nearly every request: on
    PostgreSQL the server prepares it once per connection (`PostgresPool.execute_prepared`).
    `wait_for_flush=False`: on PostgreSQL its commit does not wait for the disk (`db.NO_FLUSH_WAIT`)."""
    database = db.obj
    if isinstance(database, PostgresPool):
        if database.prepares:
            return database.execute_prepared(template, params, wait_for_flush=wait_for_flush)
        if not wait_for_flush:
            return run(NO_FLUSH_WAIT + template, params)
    return run(template, params)


def find_api_key(secret_hash: str) -> KeyRow | None:
    row = run_fixed(
        "SELECT id, workspace_id, secret_hash, scope, profile_ids, permission, last_used_at, expires_at, revoked_at"
        " FROM api_key WHERE secret_hash = ?",
        (secret_hash,),
    ).fetchone()
    if row is None:
        return None
    return KeyRow(
        id=row[0],
        workspace_id=row[1],
        secret_hash=row[2],
        scope=row[3],
        profile_ids=ApiKey.profile_ids.python_value(row[4]) or [],
        permission=row[5],
        last_used_at=ApiKey.last_used_at.python_value(row[6]),
        expires_at=ApiKey.expires_at.python_value(row[7]),
        revoked_at=ApiKey.revoked_at.python_value(row[8]),
    )


class Epochs(NamedTuple):
    keys: int  # api_key_epoch (migration 15)
    workspaces: int  # workspace_epoch (migration 23)


def epochs() -> Epochs:
    """Both counters that a `/v1` request's memory depends on, in one round trip."""
    row = run_fixed("SELECT k.value, w.value FROM api_key_epoch AS k, workspace_epoch AS w WHERE k.id = 1 AND w.id = 1",
                    ()).fetchone()
    return Epochs(int(row[0]), int(row[1]))


def oauth_token_epoch() -> int:
    """The counter that every change able to end an access token moves (migration 16's triggers)."""
    return int(run_fixed("SELECT value FROM oauth_token_epoch WHERE id = 1", ()).fetchone()[0])


def workspace_with_profiles(workspace_id: str) -> list[tuple[Any, ...]]:
    """A workspace (id, name, created, updated) with each of its profiles (id, name), oldest profile
    first; one row with null profile columns when it has none. Every `GET /v1/workspaces` runs it.
    Instants come as the driver gives them (text on SQLite), which the record shapes read."""
    return list(run_fixed(
        "SELECT w.id, w.name, w.created_at, w.updated_at, p.id, p.name FROM workspace AS w"
        " LEFT OUTER JOIN profile AS p ON p.workspace_id = w.id WHERE w.id = ? ORDER BY p.created_at, p.id",
        (workspace_id,),
    ).fetchall())


def count_request(credential_id: str, window_start: int, tokens: int = 1) -> int:
    """Add `tokens` to this credential's window and return the new count, atomically."""
    row = run_fixed(
        "INSERT INTO rate_limit_counter (key_id, window_start, count) VALUES (?, ?, ?)"
        " ON CONFLICT (key_id, window_start) DO UPDATE SET count = rate_limit_counter.count + excluded.count"
        " RETURNING count",
        (credential_id, window_start, tokens),
    ).fetchone()
    return int(row[0])


class Prepared:
    """A Peewee query built and compiled once, then run many times with new string values.

    `build` receives one placeholder string per named parameter and returns a query; the SQL it
    compiles to is kept per database, and each call swaps the placeholders in the parameter list
    for the real values. Rows come back as running the query would give them: model instances
    (joins included), or dicts and tuples for `.dicts()` and `.tuples()` queries. For those two,
    peewee's row reader is kept from the first run, since it resolves the columns and their
    conversions anew on every run (6 µs, more than a primary-key read on SQLite); its rows depend
    only on the SQL, which does not change.
    """

    def __init__(self, build: Callable[..., Any], *names: str) -> None:
        self.build = build
        self.names = names
        self._compiled: dict[int, tuple[Any, str, list[Any]]] = {}
        self._readers: dict[int, Callable[[tuple[Any, ...]], Any]] = {}

    def _compile(self) -> tuple[Any, str, list[Any]]:
        key = id(db.obj)
        if key not in self._compiled:
            marks = {name: f"\x00:{name}:\x00" for name in self.names}
            query = self.build(**marks)
            sql, params = query.sql()
            lookup = {mark: name for name, mark in marks.items()}
            slots = [_Slot(lookup[p]) if isinstance(p, str) and p in lookup else p for p in params]
            self._compiled[key] = (query, sql, slots)
        return self._compiled[key]

    def __call__(self, **values: str) -> Any:
        query, sql, slots = self._compile()
        params = [values[slot.name] if isinstance(slot, _Slot) else slot for slot in slots]
        cursor = execute(sql, params)
        reader = self._readers.get(id(db.obj))
        if reader is not None:
            return [reader(row) for row in cursor.fetchall()]
        wrapper = query._get_cursor_wrapper(cursor)
        rows = list(wrapper)
        # Kept once it has read a row (an empty answer leaves it uninitialised) and only for dict and
        # tuple rows, whose `process_row` reads nothing but what `initialize` resolved.
        if wrapper.initialized and type(wrapper) in (ModelDictCursorWrapper, ModelTupleCursorWrapper):
            self._readers[id(db.obj)] = wrapper.process_row
        return rows

    def first(self, **values: str) -> Any:
        for row in self(**values):
            return row
        return None


class _Slot(NamedTuple):
    name: str


_by_id: dict[tuple[type[Model], str], str] = {}


def by_id(model: type[M], key: str) -> M | None:
    """`model.get_or_none(id == key)` at a fraction of its cost.

    Peewee builds a query's SQL on every execution (about 0.3 ms for a wide table here) and its
    row wrapper resolves the columns again for every query: together ten times the cost of the
    SELECT itself. Paths that read rows by id many times a second (each outbound message) use the
    SQL built once per model, and make the model from the row with each field's own conversion
    (datetimes, JSON), as peewee would.
    """
    cache_key = (model, db.param)
    sql = _by_id.get(cache_key)
    if sql is None:
        primary: Any = model._meta.primary_key
        columns = ", ".join(f'"{field.column_name}"' for field in model._meta.sorted_fields)
        table = model._meta.table_name
        sql = _by_id[cache_key] = f'SELECT {columns} FROM "{table}" WHERE "{primary.column_name}" = {db.param}'  # noqa: S608
    row = db.execute_sql(sql, (key,)).fetchone()
    if row is None:
        return None
    return from_row(model, row)


_insert_sql: dict[tuple[type[Model], tuple[str, ...], str], str] = {}


def insert(model: type[Model], **values: Any) -> None:
    """`model.insert(**values).execute()` with the SQL built once per model and set of columns (see
    `by_id`); each value goes through its field's conversion, as peewee would."""
    fields = model._meta.fields
    names = tuple(values)
    cache_key = (model, names, db.param)
    sql = _insert_sql.get(cache_key)
    if sql is None:
        columns = ", ".join(f'"{fields[name].column_name}"' for name in names)
        marks = ", ".join([db.param] * len(names))
        sql = f'INSERT INTO "{model._meta.table_name}" ({columns}) VALUES ({marks})'  # noqa: S608 - names from code
        _insert_sql[cache_key] = sql
    db.execute_sql(sql, tuple(fields[name].db_value(value) for name, value in values.items()))


_insert_many_sql: dict[tuple[type[Model], tuple[str, ...], int, str], str] = {}


def insert_many(model: type[Model], rows: list[dict[str, Any]]) -> None:
    """`model.insert_many(rows).execute()` with the SQL built once per model, set of columns and
    number of rows (see `insert`); every row names the same columns."""
    if not rows:
        return
    fields = model._meta.fields
    names = tuple(rows[0])
    cache_key = (model, names, len(rows), db.param)
    sql = _insert_many_sql.get(cache_key)
    if sql is None:
        columns = ", ".join(f'"{fields[name].column_name}"' for name in names)
        one = "(" + ", ".join([db.param] * len(names)) + ")"
        sql = f'INSERT INTO "{model._meta.table_name}" ({columns}) VALUES {", ".join([one] * len(rows))}'  # noqa: S608
        _insert_many_sql[cache_key] = sql
    db.execute_sql(sql, tuple(fields[name].db_value(row[name]) for row in rows for name in names))


_insert_shared_sql: dict[tuple[type[Model], tuple[str, ...], tuple[str, ...], int, str], str] = {}


def insert_shared(model: type[Model], shared: dict[str, Any], names: tuple[str, ...],
                  rows: list[tuple[Any, ...]]) -> None:
    """`insert_many` of rows that differ only in the columns `names` (a tuple of their values per row)
    and share every other value (`shared`): a broadcast's chunk, one text to many conversations. Each
    shared value is converted once, not once a row (see `insert`)."""
    if not rows:
        return
    fields = model._meta.fields
    cache_key = (model, names, tuple(shared), len(rows), db.param)
    sql = _insert_shared_sql.get(cache_key)
    if sql is None:
        columns = ", ".join(f'"{fields[name].column_name}"' for name in (*names, *shared))
        one = "(" + ", ".join([db.param] * (len(names) + len(shared))) + ")"
        sql = f'INSERT INTO "{model._meta.table_name}" ({columns}) VALUES {", ".join([one] * len(rows))}'  # noqa: S608
        _insert_shared_sql[cache_key] = sql
    constant = tuple(fields[name].db_value(value) for name, value in shared.items())
    own = [fields[name].db_value for name in names]
    params: list[Any] = []
    for row in rows:
        params += [convert(value) for convert, value in zip(own, row, strict=True)]
        params += constant
    db.execute_sql(sql, params)


def columns(model: type[Model]) -> tuple[str, ...]:
    """The model's column names in field order: a `RETURNING` list that `from_row` reads back."""
    return tuple(field.column_name for field in model._meta.sorted_fields)


class _Partial(dict):  # type: ignore[type-arg]
    """A partial row's values (`from_row` with `names`) while `strict_partial_rows` is on: reading a
    column the row was not read with raises, where it would otherwise read None without a word."""

    __slots__ = ()

    def __missing__(self, name: str) -> Any:
        # Not a KeyError: peewee's field accessor turns that into None.
        raise LookupError(f"{name!r} was not read with this row (add it to the columns given to from_row)")

    def get(self, name: str, default: Any = None) -> Any:
        return self[name]


_strict_partial = False


def strict_partial_rows(on: bool = True) -> None:
    """Tests: a partial row's missing column raises instead of reading None (see `_Partial`)."""
    global _strict_partial
    _strict_partial = on


def from_row(model: type[M], row: Any, names: tuple[str, ...] | None = None) -> M:
    """The model made from a row of `columns(model)` (or of the columns `names`: the model then has
    only those values, and its other fields read None; in tests, `strict_partial_rows`, they raise),
    each value through its field's conversion, as peewee makes a model from a query's row (nothing
    dirty).

    Built straight into the model's value dictionary, and a value already of its field's type (a
    string for text, a datetime from PostgreSQL) is not converted again: peewee's constructor sets
    every field through its descriptor, and with the conversions it cost 60-80 µs a wide row, a
    tenth of an outbound message's work.
    """
    plan = _plans.get((model, names))
    if plan is None:
        plan = _plans[(model, names)] = _plan(model, names)
    data: dict[str, Any] = _Partial() if names is not None and _strict_partial else {}
    for (name, kind, convert), value in zip(plan, row, strict=True):
        data[name] = value if value is None or type(value) is kind else convert(value)
    made: Any = model.__new__(model)
    made.__data__ = data
    made._dirty = set()
    made.__rel__ = {}
    return made  # type: ignore[no-any-return]


# A field's conversion is skipped for a value of exactly this type: what its `python_value` would
# hand back unchanged. Fields of other classes (JSON, enumerations) always convert.
_NATIVE: tuple[tuple[type[Field], type], ...] = (
    (BooleanField, bool), (_StringField, str), (IntegerField, int), (FloatField, float), (DateTimeField, datetime),
)
_plans: dict[tuple[type[Model], tuple[str, ...] | None],
             tuple[tuple[str, type | None, Callable[[Any], Any]], ...]] = {}


def _plan(model: type[Model], names: tuple[str, ...] | None = None,
          ) -> tuple[tuple[str, type | None, Callable[[Any], Any]], ...]:
    def native(field: Field) -> type | None:
        target = field.rel_field if isinstance(field, ForeignKeyField) else field
        if type(target).python_value is not Field.python_value:
            return None  # a conversion of its own (JSON, say): always run it
        # A subclass with a conversion of its own (`adapt`) is not its base's kind.
        return next((kind for base, kind in _NATIVE
                     if isinstance(target, base) and type(target).adapt is base.adapt), None)

    fields = model._meta.sorted_fields if names is None else [model._meta.columns[name] for name in names]
    return tuple((field.name, native(field), field.python_value) for field in fields)


