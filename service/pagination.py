"""Page and limit, the same for every list of /v1 and every MCP list tool."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from peewee import ModelSelect

from service.shapes import Record, dump_all

DEFAULT_LIMIT = 20


@dataclass(frozen=True)
class Page:
    data: list[dict[str, Any]]
    page: int
    limit: int
    total: int

    def as_dict(self) -> dict[str, Any]:
        pages = (self.total + self.limit - 1) // self.limit
        return {
            "data": self.data,
            "pagination": {"page": self.page, "limit": self.limit, "total": self.total, "pages": pages},
        }


def paginate(query: ModelSelect[Any], *, page: int | None, limit: int | None, record: type[Record]) -> Page:
    """One page of `query`, each row as `record` (dumped: the page's data is the answer's JSON)."""
    page = page or 1
    limit = limit or DEFAULT_LIMIT
    total = query.order_by().count()
    rows = list(query.paginate(page, limit)) if (page - 1) * limit < total else []
    return Page(dump_all(record, rows), page, limit, total)
