"""Page and limit, the same for every list of /v1 and every MCP list tool."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from peewee import ModelSelect

from kit.errors import ValidationFailed
from kit.shapes import MAX_PAGE, Record, list_adapter

DEFAULT_PAGE = 1
DEFAULT_LIMIT = 20
MAX_LIMIT = 100
__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "MAX_PAGE", "Page", "paginate", "records", "window"]


def window(page: int | None, limit: int | None) -> tuple[int, int, int]:
    """The one rule of every list's `page` and `limit`: `(page, limit, offset of the first row)`.

    A page past the last is an empty page; a page number past `MAX_PAGE` (or under 1) is refused
    naming the field, before any query: an offset past 64 bits is an error in either database.
    Every list goes through here, so /v1, MCP and the dashboard cannot differ."""
    page = DEFAULT_PAGE if page is None else page
    limit = DEFAULT_LIMIT if limit is None else limit
    if not 1 <= page <= MAX_PAGE:
        raise ValidationFailed.field("page", f"must be between 1 and {MAX_PAGE}")
    if not 1 <= limit <= MAX_LIMIT:
        raise ValidationFailed.field("limit", f"must be between 1 and {MAX_LIMIT}")
    return page, limit, (page - 1) * limit



@dataclass(frozen=True)
class Page:
    """One page of records. `/v1` writes it as JSON in one pass of pydantic-core (`json()`); MCP and
    the dashboard take it as plain data (`as_dict()`, `data`)."""

    record: type[Record]
    items: list[Record]
    page: int
    limit: int
    total: int

    @property
    def pages(self) -> int:
        return (self.total + self.limit - 1) // self.limit

    # Both are written around the records' own pass of pydantic-core rather than through the page
    # model (`shapes.page_of`, which stays the declaration: OpenAPI, MCP's outputSchema): building
    # that model, even unchecked, cost more than the empty page's whole dump.
    def json(self) -> bytes:
        return b'{"data":%s,"pagination":{"page":%d,"limit":%d,"total":%d,"pages":%d}}' % (
            list_adapter(self.record).dump_json(self.items, by_alias=True),
            self.page, self.limit, self.total, self.pages)

    def as_dict(self) -> dict[str, Any]:
        return {"data": self.data,
                "pagination": {"page": self.page, "limit": self.limit, "total": self.total, "pages": self.pages}}

    @property
    def data(self) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], list_adapter(self.record).dump_python(self.items, mode="json", by_alias=True))


def records(record: type[Record], rows: list[Any]) -> list[Record]:
    """Rows (Peewee models, or dicts by field name) as records, in one pass of pydantic-core."""
    return list_adapter(record).validate_python(rows, from_attributes=True)


def paginate(query: ModelSelect[Any], *, page: int | None, limit: int | None, record: type[Record]) -> Page:
    """One page of `query`, each row as `record`."""
    page, limit, offset = window(page, limit)
    total = query.order_by().count()
    rows = list(query.paginate(page, limit)) if offset < total else []
    return Page(record, records(record, rows), page, limit, total)
