from dataclasses import replace

import httpx2
from peewee import SqliteDatabase

from storage.db import db
from switchboard.app import create_app
from tests.support.live_server import free_port, live_server


def test_health_reports_a_queue_that_is_down(service):
    closed_port = free_port()
    broken = replace(service, queue_url=f"redis://127.0.0.1:{closed_port}/0")
    with live_server(create_app(broken, worker=False)) as url:
        answer = httpx2.get(url + "/v1/health")
    assert answer.status_code == 503
    assert answer.json() == {"status": "down", "version": "1.0.0", "database": "ok", "queue": "down"}


def test_health_reports_a_database_that_is_down(service, tmp_path):
    with live_server(create_app(service, worker=False)) as url:
        healthy = httpx2.get(url + "/v1/health")
        working = db.obj
        db.initialize(SqliteDatabase(str(tmp_path / "missing-dir" / "x.db")))  # unreachable storage
        try:
            answer = httpx2.get(url + "/v1/health")
        finally:
            db.initialize(working)
    assert healthy.status_code == 200
    assert answer.status_code == 503
    assert answer.json()["database"] == "down"
    assert answer.json()["status"] == "down"


def test_readiness_names_the_part_that_is_down(service):
    with live_server(create_app(service, worker=False)) as url:
        ready = httpx2.get(url + "/v1/health/ready")
    closed_port = free_port()
    broken = replace(service, queue_url=f"redis://127.0.0.1:{closed_port}/0")
    with live_server(create_app(broken, worker=False)) as url:
        answer = httpx2.get(url + "/v1/health/ready")
        alive = httpx2.get(url + "/v1/health")
        spec = httpx2.get(url + "/v1/openapi.json").json()
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "database": "ok", "queue": "ok"}
    assert answer.status_code == 503
    assert answer.json() == {"status": "not_ready", "database": "ok", "queue": "down"}
    assert answer.headers["x-request-id"]
    assert alive.status_code == 503  # the liveness check says the same of the parts
    documented = spec["paths"]["/v1/health/ready"]["get"]["responses"]
    assert set(documented) == {"200", "503"}
    assert documented["503"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Readiness"}
