"""Fixtures shared by every test: a real database and queue per test, and the service on a real socket.

The embedded setup (default) gives each test its own SQLite files. With
`SWITCHBOARD_TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/` and
`SWITCHBOARD_TEST_QUEUE_URL=redis://127.0.0.1:6379/15` the same tests run on PostgreSQL and Redis:
one fresh database for the session (dropped after), emptied between tests.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import shutil
import sqlite3
import sys
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx2
import pytest

from kit import clock
from kit.settings import Settings
from platforms.base import PLATFORMS
from service.identity import bootstrap as bootstrap_module
from storage.db import connection, db
from storage.models import ALL_MODELS
from switchboard.app import create_app, prepare
from tasks.queue import huey
from tests.support import platform_specs, waits
from tests.support.live_server import free_port, live_server
from tests.support.platform_specs import tally

pytestmark = pytest.mark.shared_service

PG_BASE = os.environ.get("SWITCHBOARD_TEST_DATABASE_URL")
# Under pytest-xdist (`make test`), each worker process is a session of its own: its own PostgreSQL
# database (`pg_database_url`) and its own Redis database, the given number less the worker's index
# (`gw1` on `.../15` uses 14), as emptying the queue between tests must not empty another worker's.
WORKER_INDEX = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))


def _worker_queue_url(url: str | None) -> str | None:
    if url is None or WORKER_INDEX == 0:
        return url
    base, _, number = url.rstrip("/").rpartition("/")
    return f"{base}/{int(number or 0) - WORKER_INDEX}"


QUEUE_URL = _worker_queue_url(os.environ.get("SWITCHBOARD_TEST_QUEUE_URL"))


@pytest.fixture(scope="session")
def pg_database_url() -> Iterator[str | None]:
    """A PostgreSQL database made for this session when the suite runs on PostgreSQL."""
    if not PG_BASE:
        yield None
        return
    import psycopg2

    name = f"switchboard_test_{uuid.uuid4().hex[:10]}"
    admin = psycopg2.connect(PG_BASE.rstrip("/") + "/postgres")
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    try:
        yield PG_BASE.rstrip("/") + "/" + name
    finally:
        if db.obj is not None:  # a run of modules that never opened the service's storage
            db.close() if not db.is_closed() else None
            if hasattr(db.obj, "close_all"):
                db.obj.close_all()
        with admin.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def _test_settings(data_parent: Path, pg_database_url: str | None) -> Settings:
    port = free_port()
    base = Settings.from_env(
        {
            "SWITCHBOARD_DATA_DIR": str(data_parent / "data"),
            "SWITCHBOARD_BASE_URL": f"http://127.0.0.1:{port}",
            "SWITCHBOARD_SECRET_KEY": "test-secret-key-" + uuid.uuid4().hex,
            "SWITCHBOARD_SANDBOX": "1",
            "SWITCHBOARD_SCHEDULER_TICK_SECONDS": "0.2",
            "SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE": "1",
            # Past follower counts would fill the series the analytics tests build day by day; the
            # modules that test the backfill turn it on.
            "SWITCHBOARD_FOLLOWER_BACKFILL": "0",
        }
    )
    overrides: dict[str, Any] = {}
    if pg_database_url:
        overrides["database_url"] = pg_database_url
    if QUEUE_URL:
        overrides["queue_url"] = QUEUE_URL
    return replace(base, **overrides)


@pytest.fixture
def settings(tmp_path: Path, pg_database_url: str | None) -> Settings:
    return _test_settings(tmp_path, pg_database_url)


@pytest.fixture(scope="session", autouse=True)
def _cheap_password_hashes() -> Iterator[None]:
    """Argon2id at its lowest cost in the test process. At its real cost one hash takes ~0.3 s (more
    on a busy machine) and every new tenant pays two (checking the password, then hashing it): that
    was most of a test's set-up. Hashes carry their parameters, so they still verify anywhere (a
    `switchboard` process started by a test, whose hasher is the real one, upgrades them on sign-in);
    what is hashed, salted and compared is unchanged."""
    from argon2 import PasswordHasher

    from service.identity import users

    real = users._hasher
    users._hasher = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
    users._dummy_hash.cache_clear()
    yield
    users._hasher = real
    users._dummy_hash.cache_clear()


@pytest.fixture(scope="session", autouse=True)
def _one_trust_store() -> Iterator[None]:
    """One TLS context with the system's trust store for every httpx2 client the test process makes.
    httpx2 reads the whole CA bundle again for each new client (some 50 ms of CPU where
    `SSL_CERT_FILE` names the bundle), and the tests make thousands of clients, a few of them each
    poll while waiting for a process to come up. Nothing changes such a context after it is made
    (a private CA is trusted through a context of its own, `kit.net.ssl_context`), so sharing it
    trusts exactly what a new one would."""
    import httpcore2

    made = httpcore2.default_ssl_context
    httpcore2.default_ssl_context = functools.cache(made)
    yield
    httpcore2.default_ssl_context = made


@pytest.fixture(scope="session", autouse=True)
def _partial_rows_read_only_what_they_hold() -> Iterator[None]:
    """The send path reads rows with only the columns it uses (`storage.hot.from_row` with names):
    in tests a column it did not read raises, so code that starts to read one fails here instead of
    reading None in production."""
    from storage import hot

    hot.strict_partial_rows(True)
    yield
    hot.strict_partial_rows(False)


@pytest.fixture(autouse=True)
def _no_waits_in_transactions() -> Iterator[None]:
    """Every test also checks DESIGN rule 15 (`tests/support/waits.py`): whatever it made the service
    do, nothing waited on the network or a password hash while holding a transaction."""
    waits.install()
    with waits.forbidden_waits():
        yield


@pytest.fixture(autouse=True)
def _platform_requests_as_published() -> Iterator[None]:
    """Every request an adapter sends during a test, checked at its end against the platform's own
    published description (`tests/support/platform_specs`): an unknown parameter, a missing required
    one, a value of the wrong type or an endpoint that does not exist fails the test that sent it."""
    with platform_specs.recording() as seen:
        yield
    tally.record(seen)
    problems = platform_specs.problems(seen)
    if problems:
        pytest.fail("requests the platforms' published descriptions refuse:\n" + "\n".join(problems), pytrace=False)


@pytest.fixture(autouse=True)
def _real_clock() -> Iterator[None]:
    """A test that moved the clock (`clock.advance`) leaves it as it found it."""
    yield
    clock.reset()


def _empty_everything() -> None:
    # DELETE in dependency order rather than one TRUNCATE on PostgreSQL: TRUNCATE makes new files
    # for every table (140 ms for all of them), where a test's few rows delete in a few ms.
    with connection():
        tables = [model._meta.table_name for model in ALL_MODELS]
        present = set(db.get_tables())
        with db.atomic():
            for table in reversed(tables):
                if table in present:
                    db.execute_sql(f'DELETE FROM "{table}"')
    huey.storage.flush_all()


@pytest.fixture(scope="session")
def _migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    """On the embedded setup, a database file with every migration applied, made once per session.
    Migrating a new SQLite file is some forty statements of DDL, each committed: 0.4 s a test on a
    busy disk, for the hundreds of tests that get storage of their own."""
    if PG_BASE:
        return None
    template = _test_settings(tmp_path_factory.mktemp("migrated"), None)
    prepare(template)
    path = Path(template.database_url.removeprefix("sqlite:///"))
    with contextlib.closing(sqlite3.connect(path)) as folded:  # the WAL folded into the file copied
        folded.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


def _from_migrated(settings: Settings, request: pytest.FixtureRequest) -> None:
    """A test's new SQLite database starts as a copy of the migrated one; `prepare` then finds nothing
    to apply (the migrations themselves: tests/storage/test_migrations.py)."""
    template: Path | None = request.getfixturevalue("_migrated_sqlite")
    target = Path(settings.database_url.removeprefix("sqlite:///"))
    if template is not None and settings.is_sqlite and not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(template, target)  # its mode too: the file as `prepare` makes it


@pytest.fixture
def service(settings: Settings, request: pytest.FixtureRequest) -> Iterator[Settings]:
    """Storage and queue configured and migrated, empty; no HTTP server."""
    _from_migrated(settings, request)
    prepare(settings)
    _empty_everything()
    yield settings
    prepare(settings)  # a test may have pointed the process-wide handles elsewhere
    _scan_postgres_for_secrets()
    _empty_everything()


def _scan_postgres_for_secrets() -> None:
    if PG_BASE:
        # PostgreSQL is emptied between tests, so each test's rows are scanned before they go (on
        # SQLite, every test's files are scanned at the end of the session).
        from tests.support.secret_scan import database_text, findings

        found = findings(database_text())
        assert not found, f"secrets in the clear in the database: {found}"


def shares_one_service(request: pytest.FixtureRequest) -> bool:
    """Whether the test's module runs on one service (`pytestmark = pytest.mark.shared_service`)."""
    return request.node.get_closest_marker("shared_service") is not None


@pytest.fixture
def server_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """The whole service (API and embedded worker) on a loopback port; its URL."""
    if shares_one_service(request):
        yield request.getfixturevalue("live").url
        return
    service: Settings = request.getfixturevalue("service")
    port = int(service.base_url.rsplit(":", 1)[1])
    with live_server(create_app(service, worker=True), port=port) as url:
        yield url


@pytest.fixture
def client(request: pytest.FixtureRequest, server_url: str) -> Iterator[httpx2.Client]:
    if shares_one_service(request):
        yield request.getfixturevalue("live").client
        return
    with httpx2.Client(base_url=server_url, timeout=30) as http:
        yield http


def _workspace(request: pytest.FixtureRequest, email: str, password: str) -> dict[str, str]:
    if shares_one_service(request):
        return request.getfixturevalue("live").tenant()
    request.getfixturevalue("service")
    with connection():
        return bootstrap_module.bootstrap(email=f"{email}-{uuid.uuid4().hex[:8]}@example.com", password=password)


@pytest.fixture
def tenant(request: pytest.FixtureRequest) -> dict[str, str]:
    """A workspace with a profile, its owner and a full read-write key."""
    return _workspace(request, "owner", "correct horse")


@pytest.fixture
def other_tenant(request: pytest.FixtureRequest) -> dict[str, str]:
    return _workspace(request, "other", "battery staple")


@pytest.fixture
def browser(server_url: str, tenant: dict[str, str]) -> Iterator[httpx2.Client]:
    """A browser signed in to the dashboard as the tenant's owner: its cookies kept between requests."""
    from tests.support.oauth_flow import browser_sign_in, email_of

    with httpx2.Client(base_url=server_url, timeout=30) as http:
        browser_sign_in(http, email_of(tenant["userId"]), "correct horse")
        yield http


# -- one live service per module ---------------------------------------------------------------------
# Starting the service (migrations, consumer, scheduler, uvicorn) costs far more than most tests: a
# module whose tests only need their own tenant shares one server and gives each test a new
# workspace (`live.tenant()`), which isolates it as well as fresh storage does. Such a module says
# `pytestmark = pytest.mark.shared_service`, and then `tenant`, `other_tenant`, `client` and
# `server_url` are the shared service's; it must not also ask for the per-test `service` (which
# empties the storage under it).
@dataclass
class Live:
    settings: Settings
    url: str
    client: httpx2.Client

    def tenant(self) -> dict[str, str]:
        """A new workspace with a profile, its owner and a full read-write key."""
        with connection():
            return bootstrap_module.bootstrap(email=f"owner-{uuid.uuid4().hex[:8]}@example.com",
                                              password="correct horse")


@pytest.fixture(scope="module")
def live_overrides() -> dict[str, Any]:
    """Settings the module's service runs with beyond the tests' defaults (a package's conftest may
    override it, as tests/webhooks does for its short retry delays)."""
    return {}


@pytest.fixture(scope="module")
def module_server(tmp_path_factory: pytest.TempPathFactory, pg_database_url: str | None,
                  live_overrides: dict[str, Any], request: pytest.FixtureRequest) -> Iterator[tuple[Settings, str]]:
    module_settings = replace(_test_settings(tmp_path_factory.mktemp("module"), pg_database_url), **live_overrides)
    _from_migrated(module_settings, request)
    prepare(module_settings)
    _empty_everything()
    port = int(module_settings.base_url.rsplit(":", 1)[1])
    with live_server(create_app(module_settings, worker=True), port=port) as url:
        yield module_settings, url
    prepare(module_settings)
    _scan_postgres_for_secrets()
    _empty_everything()


@pytest.fixture
def live(module_server: tuple[Settings, str]) -> Iterator[Live]:
    """The module's running service, with the sandbox's per-platform latency back to none."""
    module_settings, url = module_server
    with httpx2.Client(base_url=url, timeout=30) as http:
        for platform in PLATFORMS:
            http.post(f"/sandbox/{platform}/latency", json={"milliseconds": 0}).raise_for_status()
        yield Live(module_settings, url, http)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _data_files(root: Path) -> list[Path]:
    """Every test's data directory: its databases, their WAL, the queue, the secret key, and the
    sandbox's own file (`sandbox.db`), which keeps only digests of the tokens it issued."""
    return [path for path in root.rglob("*") if path.is_file()
            and ("data" in path.relative_to(root).parts[:-1] or ".db" in path.name)]


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:  # a WAL or shared-memory file removed as its last connection closed
        return b""


# The modules that take longest, longest first: processes started and stopped, Chromium, the fuzzer,
# retries and leases that run out. Under xdist (`make test`, `--dist loadfile --no-loadscope-reorder`)
# each module goes whole to the next free worker in the order below, so the run ends on short ones;
# started last, a 13 s module kept one worker busy after the other had finished. Every module that
# took 4 s or more in a whole run (the sum of its `--durations`), by that time. A module missing here
# runs no slower, only later.
LONGEST_FIRST = [
    "tests/http_api/test_openapi_fuzz.py",
    "tests/dashboard/test_phone_and_access.py",
    "tests/test_readme_tour.py",
    "tests/dashboard/test_console_browser.py",
    "tests/test_cli_everyday.py",
    "tests/dashboard/test_studio_browser.py",
    "tests/tasks/test_sending_processes.py",
    "tests/test_cli.py",
    "tests/posts/test_publishing_processes.py",
    "tests/dashboard/test_your_time_browser.py",
    "tests/test_cli_sandbox.py",
    "tests/webhooks/test_delivery.py",
    "tests/tasks/test_poll_processes.py",
    "tests/http_api/test_docs_browser.py",
    "tests/dashboard/test_studio_forms.py",
    "tests/dashboard/test_refused_forms_browser.py",
    "tests/oauth/test_sessions.py",
    "tests/http_api/test_inbox_platforms.py",
    "tests/dashboard/test_studio_week_browser.py",
    "tests/dashboard/test_teams_browser.py",
    "tests/webhooks/test_worker_kill.py",
    "tests/test_cli_setup.py",
    "tests/oauth/test_hostile_clients.py",
    "tests/broadcasts/test_processes.py",
    "tests/http_api/test_scale_out.py",
    "tests/test_cli_sandbox_serve.py",
    "tests/oauth/test_oidc_provider_node.py",
    "tests/http_api/test_sequences.py",
    "tests/posts/test_formats_processes.py",
    "tests/dashboard/test_dashboard_browser.py",
    "tests/http_api/test_analytics.py",
    "tests/http_api/test_sending.py",
    "tests/teams/test_role_matrix.py",
    "tests/operations/test_json_logs.py",
    "tests/platforms/test_inbound_corpus.py",
    "tests/http_api/test_connect.py",
    "tests/broadcasts/test_api.py",
    "tests/operations/test_secrets_rotate.py",
    "tests/operations/test_metrics.py",
    "tests/media/test_bulkheads.py",
    "tests/tasks/test_chore_processes.py",
    "tests/service/test_pace_store_outage.py",
    "tests/dashboard/test_refused_forms.py",
    "tests/service/test_engine.py",
]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist, the longest modules first (`LONGEST_FIRST`), then the others by their number of
    tests, most first (what xdist itself does when asked to reorder); within a module, its order."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return
    rank = {path: n for n, path in enumerate(LONGEST_FIRST)}
    sizes = Counter(_module(item) for item in items)
    items.sort(key=lambda item: (rank.get(_module(item), len(rank)), -sizes[_module(item)], _module(item)))


def _module(item: pytest.Item) -> str:
    return item.nodeid.split("::")[0]


def pytest_configure(config: pytest.Config) -> None:
    """At the session's end, how many adapter requests the check saw, by platform."""
    config.pluginmanager.register(tally, "platform-requests-tally")
    _keep_bytecode_outside_the_tree()


def _keep_bytecode_outside_the_tree() -> None:
    """Where the environment says not to write bytecode (`PYTHONDONTWRITEBYTECODE`), the suite keeps
    it all the same, outside the source tree (`PYTHONPYCACHEPREFIX`, in the system's temporary
    directory): the suite starts dozens of Python processes (xdist's workers, the `switchboard`
    processes its tests run), and each compiled the project's modules again from source, 0.4 s of
    a process's start and half of a worker's collection (pytest's rewritten test modules are kept
    the same way). Set here, before xdist starts its workers; each process started from here on
    inherits it."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return
    prefix = os.environ.setdefault("PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / "switchboard-pycache"))
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """After the run, scan what every test left in its data directory for a secret in the clear (an
    `sk_` key, a `whsec_` secret, an OAuth or platform token). Each test has its own data directory
    on the embedded setup, so this covers the whole suite's storage; a finding fails the run."""
    from tests.support.secret_scan import findings

    if hasattr(session.config, "workerinput"):
        return  # an xdist worker: the controller scans every worker's directories, which lie in its own
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None or exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        return
    root = factory.getbasetemp()
    # A connection nobody holds any more closes when collected, and SQLite then folds its WAL into
    # the database and removes the WAL and shared-memory files: collect first, so that happens
    # before the listing rather than between the listing and a read.
    gc.collect()
    found = [f"{path.relative_to(root)}: {finding}" for path in _data_files(root)
             for finding in findings(_read(path))]
    if found:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = ["secrets found in the clear in data directories:", *found[:50]]
        if reporter is not None:
            reporter.write_line("\n".join(lines), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
