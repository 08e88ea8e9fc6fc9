"""Page and limit, the same for every list of /v1 and every MCP list tool."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from peewee import ModelSelect

from service.shapes import Pagination, Record, list_adapter, page_adapter, page_of

DEFAULT_LIMIT = 20


@dataclass(frozen=True)
class Page:
    """One page of records. `/v1` writes it as JSON in one pass of pydantic-core (`json()`); MCP and
    the dashboard take it as plain data (`as_dict()`, `data`)."""

    record: type[Record]
    items: list[Record]
    page: int
    limit: int
    total: int

    def _model(self) -> Record:
        pages = (self.total + self.limit - 1) // self.limit
        # Built from records already validated: nothing to check again.
        return page_of(self.record).model_construct(
            data=self.items, pagination=Pagination.model_construct(page=self.page, limit=self.limit,
                                                                   total=self.total, pages=pages))

    def json(self) -> bytes:
        return page_adapter(self.record).dump_json(self._model(), by_alias=True)

    def as_dict(self) -> dict[str, Any]:
        return self._model().dump()

    @property
    def data(self) -> list[dict[str, Any]]:
        return list_adapter(self.record).dump_python(self.items, mode="json", by_alias=True)


def records(record: type[Record], rows: list[Any]) -> list[Record]:
    """Rows (Peewee models, or dicts by field name) as records, in one pass of pydantic-core."""
    return list_adapter(record).validate_python(rows, from_attributes=True)


def paginate(query: ModelSelect[Any], *, page: int | None, limit: int | None, record: type[Record]) -> Page:
    """One page of `query`, each row as `record`."""
    page = page or 1
    limit = limit or DEFAULT_LIMIT
    total = query.order_by().count()
    rows = list(query.paginate(page, limit)) if (page - 1) * limit < total else []
    return Page(record, records(record, rows), page, limit, total)
