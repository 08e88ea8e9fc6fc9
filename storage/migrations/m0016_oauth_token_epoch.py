"""A counter that moves whenever an access token, its grant or its person's membership changes in a
way that matters to the MCP token check (as `api_key_epoch` does for API keys, migration 15).

Processes keep the access tokens they have checked in memory and trust an entry only while this
counter reads as it did when the entry was made (`service.identity.oauth_tokens.verify_access_token`).
Triggers move it in the transaction of the change itself, so no code path (a revoked connected app,
a rotated or reused refresh token, a person removed from a workspace, a statement typed at a SQL
prompt) can end a token without every process noticing at its next request. Issuing a token,
adding a member and writing a grant's `last_used_at` do not move it: none of them can end a token.
"""

from peewee import Database

from storage.db import is_postgres

# (table, the columns the token check reads, whose change can end or change a checked token)
_WATCHED = [
    ("o_auth_token", "grant_id, client_id, user_id, workspace_id, scope, resource, access_hash, access_expires_at,"
                     " revoked_at"),
    ("o_auth_grant", "revoked_at"),
    ("membership", "user_id, workspace_id"),
]


def _sqlite() -> list[str]:
    statements = [
        "CREATE TABLE IF NOT EXISTS oauth_token_epoch (id INTEGER PRIMARY KEY, value INTEGER NOT NULL)",
        "INSERT OR IGNORE INTO oauth_token_epoch (id, value) VALUES (1, 0)",
    ]
    bump = "BEGIN UPDATE oauth_token_epoch SET value = value + 1 WHERE id = 1; END"
    for table, columns in _WATCHED:
        statements += [
            f"CREATE TRIGGER IF NOT EXISTS {table}_token_changed AFTER UPDATE OF {columns} ON {table} {bump}",
            f"CREATE TRIGGER IF NOT EXISTS {table}_token_deleted AFTER DELETE ON {table} {bump}",
        ]
    return statements


def _postgres() -> list[str]:
    statements = [
        "CREATE TABLE IF NOT EXISTS oauth_token_epoch (id INTEGER PRIMARY KEY, value BIGINT NOT NULL)",
        "INSERT INTO oauth_token_epoch (id, value) VALUES (1, 0) ON CONFLICT (id) DO NOTHING",
        "CREATE OR REPLACE FUNCTION oauth_token_epoch_bump() RETURNS trigger LANGUAGE plpgsql AS"
        " $$ BEGIN UPDATE oauth_token_epoch SET value = value + 1 WHERE id = 1; RETURN NULL; END $$",
    ]
    for table, columns in _WATCHED:
        statements += [
            f"DROP TRIGGER IF EXISTS {table}_token_changed ON {table}",
            f"CREATE TRIGGER {table}_token_changed AFTER UPDATE OF {columns} ON {table}"
            " FOR EACH STATEMENT EXECUTE FUNCTION oauth_token_epoch_bump()",
            f"DROP TRIGGER IF EXISTS {table}_token_deleted ON {table}",
            f"CREATE TRIGGER {table}_token_deleted AFTER DELETE ON {table}"
            " FOR EACH STATEMENT EXECUTE FUNCTION oauth_token_epoch_bump()",
        ]
    return statements


def apply(database: Database) -> None:
    for statement in _postgres() if is_postgres() else _sqlite():
        database.execute_sql(statement)
