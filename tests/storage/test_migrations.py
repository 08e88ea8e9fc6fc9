"""An existing database upgrades in place: data stays, new migrations apply once."""

import threading

from storage import migrations
from storage.db import connection, db
from storage.models import Workspace


def test_upgrade_in_place_keeps_data_and_applies_only_what_is_new(service, monkeypatch):
    with connection():
        db.execute_sql("DELETE FROM schema_version")
        assert migrations.current_version() == 0
    # Pretend the database was made by the first release only.
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:1])
    assert migrations.migrate() == [1]
    with connection(), db.atomic():
        Workspace.create(id="ws_existing", name="Kept")

    added = []

    def add_column(database):
        from peewee import CharField
        from playhouse.migrate import SchemaMigrator, migrate

        if not migrations.has_column("workspace", "note"):
            migrate(SchemaMigrator.from_database(database).add_column("workspace", "note",
                                                                      CharField(null=True, default=None)))
        added.append(True)

    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, (999, "add note", add_column)])
    assert migrations.migrate() == [999]
    assert migrations.migrate() == []
    assert added == [True]
    with connection():
        assert migrations.current_version() == 999
        assert migrations.has_column("workspace", "note")
        row = db.execute_sql("SELECT name, note FROM workspace WHERE id = 'ws_existing'").fetchone()
        assert tuple(row) == ("Kept", None)
        db.execute_sql("DELETE FROM schema_version WHERE version = 999")
    with connection():
        from playhouse.migrate import SchemaMigrator, migrate

        migrate(SchemaMigrator.from_database(db.obj).drop_column("workspace", "note"))


def test_concurrent_start_ups_apply_each_migration_once(service, monkeypatch):
    runs = []

    def slow_migration(database):
        runs.append(threading.get_ident())

    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, (998, "probe", slow_migration)])
    threads = [threading.Thread(target=migrations.migrate) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(runs) == 1
    with connection():
        db.execute_sql("DELETE FROM schema_version WHERE version = 998")


def test_a_migration_numbered_below_the_newest_applied_still_runs(service, monkeypatch):
    """Features built side by side can land out of order: what runs is what is not recorded."""
    ran = []
    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, (997, "late", lambda db_: ran.append(997)),
                                                   (996, "earlier", lambda db_: ran.append(996))])
    with connection():
        db.execute_sql("INSERT INTO schema_version (version, name, applied_at) VALUES (997, 'late', 'x')")
    assert migrations.migrate() == [996]
    assert ran == [996]
    with connection():
        db.execute_sql("DELETE FROM schema_version WHERE version IN (996, 997)")
