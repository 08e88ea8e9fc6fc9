"""`GET /metrics`: the Prometheus text of every process sharing this data dir (`kit.metrics`), and
what is read at the moment of the scrape: the queue's depth and the work engine's rows that are
waiting, in hand or lost, by kind and status.

Present only when `SWITCHBOARD_METRICS_TOKEN` is set, and then only to a Bearer token equal to it.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from kit import metrics
from kit.settings import Settings
from service.engine import core as engine
from storage.db import connection, db
from tasks import queue

log = logging.getLogger("switchboard.metrics")


class _AtScrape:
    """Gauges read when Prometheus asks, not kept by any process."""

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        depth = GaugeMetricFamily("switchboard_queue_depth", "Tasks waiting in the queue (Huey's nudges).")
        try:
            depth.add_metric([], float(queue.huey.storage.queue_size()))
            yield depth
        except Exception:  # the queue is down: the gauge is left out, /v1/health/ready says so
            log.warning("metrics: the queue did not answer")
        rows = GaugeMetricFamily("switchboard_engine_rows", "Rows of durable work waiting, in hand or lost, by "
                                 "kind and status (done rows are not counted).", labels=["kind", "status"])
        try:
            with connection():
                for kind in engine.kinds():
                    for status, count in db.execute_sql(_count_sql(kind)).fetchall():
                        rows.add_metric([kind.name, str(status)], float(count))
            yield rows
        except Exception:
            log.warning("metrics: the database did not answer")


def _count_sql(kind: engine.Kind) -> str:
    statuses = [*kind.ready, *(s for s in (kind.in_flight, kind.lost) if s)]
    listed = ", ".join(f"'{status}'" for status in dict.fromkeys(statuses))
    scope = f" AND {kind.scope}" if kind.scope else ""
    return f"SELECT status, COUNT(*) FROM {kind.table} WHERE status IN ({listed}){scope} GROUP BY status"  # noqa: S608 - names from code


def exposition() -> tuple[bytes, str]:
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
    from prometheus_client.multiprocess import MultiProcessCollector

    metrics.flush()  # this process's latest, as the other processes' are at most a second old
    registry = CollectorRegistry()
    directory = metrics.directory()
    if directory is not None:
        MultiProcessCollector(registry, path=str(directory))
    registry.register(_AtScrape())
    return generate_latest(registry), CONTENT_TYPE_LATEST


def endpoint(settings: Settings) -> Callable[[Request], Awaitable[Response]]:
    expected = f"Bearer {settings.metrics_token}".encode()

    async def scrape(request: Request) -> Response:
        given = request.headers.get("authorization", "").encode()
        if not hmac.compare_digest(given, expected):
            return Response('{"error": {"code": "unauthorized", "message": "The metrics need the metrics token as '
                            'a Bearer token."}}', 401, media_type="application/json",
                            headers={"WWW-Authenticate": "Bearer"})
        body, content_type = await run_in_threadpool(exposition)
        return Response(body, media_type=content_type)

    return scrape
