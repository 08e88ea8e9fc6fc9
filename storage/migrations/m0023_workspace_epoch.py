"""A counter that moves whenever a workspace or one of its profiles is made, changed or deleted (as
`api_key_epoch` does for API keys, migration 15).

Processes keep the workspaces (with their profiles) they have read in memory and trust an entry only
while this counter reads as it did when the entry was made (`service.identity.workspaces`). It is
read in the same statement as the key epoch (`storage.hot.epochs`), which every request already
reads, so a workspace served from memory costs no round trip of its own. Triggers move it in the
transaction of the change itself: no code path (a rename, a profile made or deleted, a statement
typed at a SQL prompt) can change what `GET /v1/workspaces` answers without every process
noticing at its next request.
"""

from peewee import Database

from storage.db import is_postgres

_TABLES = ("workspace", "profile")


def _sqlite() -> list[str]:
    statements = [
        "CREATE TABLE IF NOT EXISTS workspace_epoch (id INTEGER PRIMARY KEY, value INTEGER NOT NULL)",
        "INSERT OR IGNORE INTO workspace_epoch (id, value) VALUES (1, 0)",
    ]
    bump = "BEGIN UPDATE workspace_epoch SET value = value + 1 WHERE id = 1; END"
    for table in _TABLES:
        statements += [
            f"CREATE TRIGGER IF NOT EXISTS {table}_epoch_inserted AFTER INSERT ON {table} {bump}",
            f"CREATE TRIGGER IF NOT EXISTS {table}_epoch_updated AFTER UPDATE ON {table} {bump}",
            f"CREATE TRIGGER IF NOT EXISTS {table}_epoch_deleted AFTER DELETE ON {table} {bump}",
        ]
    return statements


def _postgres() -> list[str]:
    statements = [
        "CREATE TABLE IF NOT EXISTS workspace_epoch (id INTEGER PRIMARY KEY, value BIGINT NOT NULL)",
        "INSERT INTO workspace_epoch (id, value) VALUES (1, 0) ON CONFLICT (id) DO NOTHING",
        "CREATE OR REPLACE FUNCTION workspace_epoch_bump() RETURNS trigger LANGUAGE plpgsql AS"
        " $$ BEGIN UPDATE workspace_epoch SET value = value + 1 WHERE id = 1; RETURN NULL; END $$",
    ]
    for table in _TABLES:
        statements += [
            f"DROP TRIGGER IF EXISTS {table}_epoch_changed ON {table}",
            f"CREATE TRIGGER {table}_epoch_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table}"
            " FOR EACH STATEMENT EXECUTE FUNCTION workspace_epoch_bump()",
        ]
    return statements


def apply(database: Database) -> None:
    for statement in _postgres() if is_postgres() else _sqlite():
        database.execute_sql(statement)
