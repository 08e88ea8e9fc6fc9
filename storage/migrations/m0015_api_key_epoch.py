"""A counter that moves whenever an API key changes in a way that matters to authentication.

Processes keep the keys they have checked in memory and trust an entry only while this counter
reads as it did when the entry was made (`service.identity.auth`). Triggers move it, in the transaction of
the change itself, so no code path can revoke, delete, narrow or expire a key without every
process noticing at its next request. Writing `last_used_at` does not move it.
"""

from peewee import Database

from storage.db import is_postgres

_SQLITE = [
    "CREATE TABLE IF NOT EXISTS api_key_epoch (id INTEGER PRIMARY KEY, value INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO api_key_epoch (id, value) VALUES (1, 0)",
    # Every column an `Actor`, or a check before it is built, reads.
    "CREATE TRIGGER IF NOT EXISTS api_key_changed AFTER UPDATE OF"
    " workspace_id, secret_hash, scope, profile_ids, permission, expires_at, revoked_at ON api_key"
    " BEGIN UPDATE api_key_epoch SET value = value + 1 WHERE id = 1; END",
    "CREATE TRIGGER IF NOT EXISTS api_key_deleted AFTER DELETE ON api_key"
    " BEGIN UPDATE api_key_epoch SET value = value + 1 WHERE id = 1; END",
]

_POSTGRES = [
    "CREATE TABLE IF NOT EXISTS api_key_epoch (id INTEGER PRIMARY KEY, value BIGINT NOT NULL)",
    "INSERT INTO api_key_epoch (id, value) VALUES (1, 0) ON CONFLICT (id) DO NOTHING",
    "CREATE OR REPLACE FUNCTION api_key_epoch_bump() RETURNS trigger LANGUAGE plpgsql AS"
    " $$ BEGIN UPDATE api_key_epoch SET value = value + 1 WHERE id = 1; RETURN NULL; END $$",
    "DROP TRIGGER IF EXISTS api_key_changed ON api_key",
    "CREATE TRIGGER api_key_changed AFTER UPDATE OF"
    " workspace_id, secret_hash, scope, profile_ids, permission, expires_at, revoked_at ON api_key"
    " FOR EACH STATEMENT EXECUTE FUNCTION api_key_epoch_bump()",
    "DROP TRIGGER IF EXISTS api_key_deleted ON api_key",
    "CREATE TRIGGER api_key_deleted AFTER DELETE ON api_key FOR EACH STATEMENT EXECUTE FUNCTION api_key_epoch_bump()",
]


def apply(database: Database) -> None:
    for statement in _POSTGRES if is_postgres() else _SQLITE:
        database.execute_sql(statement)
