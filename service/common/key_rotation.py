"""Re-encrypting what is stored encrypted with the newest secret key (`switchboard secrets rotate`).

Every process reads with any key of `SWITCHBOARD_SECRET_KEY` and writes with the newest
(`kit.crypto`), so once all of them run with the new key first, this rewrites the rest while the
service keeps running: a batch of rows read without a lock, re-encrypted outside any transaction,
then written back in a short transaction, each row only if it still holds what was read (a row a
request changed meanwhile was written with the newest key already, or is read again).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from peewee import Field, Model, Tuple

from kit import crypto
from storage.db import connection, db
from storage.models import Account, ConnectSelection, IdempotencyRecord, WebhookEndpoint

log = logging.getLogger("switchboard.secrets")

# Every column that holds a value encrypted with the secret key (Fernet tokens of JSON).
SEALED: tuple[tuple[type[Model], str], ...] = (
    (Account, "credentials"),
    (ConnectSelection, "choices"),
    (IdempotencyRecord, "body"),  # stored as ASCII text
    (WebhookEndpoint, "secret"),
    (WebhookEndpoint, "previous_secrets"),
)
BATCH = 200
TRIES = 5  # a row changed this often while being rotated is left for the next run, and counted


@dataclass
class Rotated:
    rewritten: int = 0
    already_newest: int = 0
    unreadable: list[str] = field(default_factory=list)  # "table.column key" of rows no key opens
    busy: int = 0  # rows that kept changing under the rotation: run it again

    @property
    def complete(self) -> bool:
        return not self.unreadable and not self.busy


def _keys(model: type[Model]) -> list[Field]:
    meta: Any = model._meta
    primary: Any = meta.primary_key
    return [meta.fields[name] for name in primary.field_names] if hasattr(primary, "field_names") else [primary]


def _as_bytes(value: Any) -> bytes:
    return value.encode("ascii") if isinstance(value, str) else bytes(value)


def rotate(*, batch: int = BATCH, progress: Callable[[str, Rotated], None] | None = None) -> Rotated:
    """Rewrite every encrypted value not yet encrypted with the newest key. Safe to run again (it
    skips what is done) and beside the running service."""
    result = Rotated()
    for model, column in SEALED:
        _rotate_column(model, column, batch, result)
        if progress is not None:
            progress(f"{model._meta.table_name}.{column}", result)
    return result


def _rotate_column(model: type[Model], column: str, batch: int, result: Rotated) -> None:
    keys = _keys(model)
    sealed: Field = getattr(model, column)
    is_text = isinstance(sealed.db_value("probe"), str)
    after: tuple[Any, ...] | None = None
    while True:
        with connection():
            query = model.select(*keys, sealed).where(sealed.is_null(False))
            if after is not None:
                query = query.where(Tuple(*keys) > Tuple(*after))
            rows: list[tuple[Any, ...]] = list(query.order_by(*keys).limit(batch).tuples())  # type: ignore[arg-type]
        if not rows:
            return
        after = rows[-1][: len(keys)]
        for row in rows:
            _rotate_row(model, keys, sealed, is_text, row[: len(keys)], row[-1], result)


def _rotate_row(model: type[Model], keys: list[Field], sealed: Field, is_text: bool, key: tuple[Any, ...],
                value: Any, result: Rotated) -> None:
    where = [k == v for k, v in zip(keys, key, strict=True)]
    for _ in range(TRIES):
        if value is None:
            return  # erased meanwhile (a disconnected account, a used selection)
        blob = _as_bytes(value)
        if crypto.sealed_with_newest(blob):
            result.already_newest += 1
            return
        try:
            fresh = crypto.reseal(blob)
        except ValueError:
            where_text = ", ".join(str(v) for v in key)
            result.unreadable.append(f"{model._meta.table_name}.{sealed.name} {where_text}")
            return
        new_value: Any = fresh.decode("ascii") if is_text else fresh
        with connection(), db.atomic():
            changed = model.update({sealed: new_value}).where(*where, sealed == value).execute()
        if changed:
            result.rewritten += 1
            return
        with connection():  # changed by a request meanwhile: look again
            value = model.select(sealed).where(*where).scalar()
    result.busy += 1
