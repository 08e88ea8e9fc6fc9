"""The bases of every model: JSON kept as text, one database handle."""

from __future__ import annotations

import json
from typing import Any

from peewee import Model, TextField

from storage.db import db


class JSONField(TextField):
    def db_value(self, value: Any) -> str | None:
        return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    def python_value(self, value: Any) -> Any:
        return None if value is None else json.loads(value)


class BaseModel(Model):
    class Meta:
        database = db
        legacy_table_names = False
