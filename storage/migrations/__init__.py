"""Versioned schema migrations, applied in order at start-up so an existing database upgrades in place.

Each migration is `(version, name, apply(database))`, added at the end and never edited once
released. `schema_version` records which have run; every one not recorded runs, in version order.
All pending migrations run in one transaction
under a lock (an advisory lock on PostgreSQL, `BEGIN IMMEDIATE` on SQLite), so processes that start
together apply each migration once.

A migration that introduces a table creates it from the model; a later one that changes the table
uses `playhouse.migrate` guarded by what is there (`has_column`), so replaying the first on a new
database and then the second gives the same schema as upgrading an old one.
"""

from __future__ import annotations

from collections.abc import Callable

from peewee import Database, SqliteDatabase

from kit.clock import now
from storage.db import db, is_postgres
from storage.migrations import (
    m0001_initial,
    m0002_webhooks,
    m0003_platforms,
    m0004_oauth,
    m0005_inbox,
    m0006_engine,
    m0007_sessions,
    m0008_credentials_refresh,
    m0009_message_templates,
    m0010_broadcasts,
    m0011_automations_sequences,
    m0012_posts_media,
    m0013_follower_snapshots,
    m0014_post_first_comment,
    m0015_api_key_epoch,
    m0016_oauth_token_epoch,
    m0017_account_chores,
    m0018_posting_queue,
    m0019_message_media,
    m0020_broadcast_template,
    m0021_connect_choices_contacts,
    m0022_inbox_polls,
    m0023_workspace_epoch,
    m0024_message_claims,
    m0025_event_outbox_unlocked,
    m0026_undispatched_events,
    m0027_confirm_before_reaching_people,
    m0028_teams,
    m0029_message_changes,
    m0030_account_grant_ids,
    m0032_conversation_search,
    m0033_growth_indexes,
    m0035_user_time_zone,
    m0036_pace_in_double_precision,
    m0038_search_appended,
    m0039_search_by_workspace,
)

Migration = tuple[int, str, Callable[[Database], None]]

MIGRATIONS: list[Migration] = [
    (1, "initial", m0001_initial.apply),
    (2, "webhooks", m0002_webhooks.apply),
    (3, "platform connections and inbound events", m0003_platforms.apply),
    (4, "oauth", m0004_oauth.apply),
    (5, "inbox", m0005_inbox.apply),
    (6, "work engine", m0006_engine.apply),
    (7, "dashboard sessions", m0007_sessions.apply),
    (8, "credentials that lapse", m0008_credentials_refresh.apply),
    (9, "template messages", m0009_message_templates.apply),
    (10, "broadcasts", m0010_broadcasts.apply),
    (11, "comment automations and sequences", m0011_automations_sequences.apply),
    (12, "posts and media", m0012_posts_media.apply),
    (13, "follower snapshots", m0013_follower_snapshots.apply),
    (14, "post first comment", m0014_post_first_comment.apply),
    (15, "api key epoch", m0015_api_key_epoch.apply),
    (16, "oauth token epoch", m0016_oauth_token_epoch.apply),
    (17, "account chores and post deletions", m0017_account_chores.apply),
    (18, "posting queue", m0018_posting_queue.apply),
    (19, "message attachments", m0019_message_media.apply),
    (20, "broadcast template", m0020_broadcast_template.apply),
    (21, "connect choices and contact profiles", m0021_connect_choices_contacts.apply),
    (22, "inbox polls and platform quotas", m0022_inbox_polls.apply),
    (23, "workspace epoch", m0023_workspace_epoch.apply),
    (24, "message claims without index writes", m0024_message_claims.apply),
    (25, "event outbox without a row lock on its workspace", m0025_event_outbox_unlocked.apply),
    (26, "undispatched events in dispatch order", m0026_undispatched_events.apply),
    (27, "confirm before reaching people", m0027_confirm_before_reaching_people.apply),
    (28, "teams: roles, invitations, audit log, shared inbox", m0028_teams.apply),
    (29, "message attachments, reactions, edits and deletions", m0029_message_changes.apply),
    (30, "an account's id under a separate grant", m0030_account_grant_ids.apply),
    (32, "search: one document per conversation", m0032_conversation_search.apply),
    (33, "indexes for the tick's probe and the posts' window", m0033_growth_indexes.apply),
    (35, "a person's time zone", m0035_user_time_zone.apply),
    (36, "the send pace's instants in double precision", m0036_pace_in_double_precision.apply),
    (38, "search: a new message's words alone", m0038_search_appended.apply),
    (39, "search: by workspace on PostgreSQL", m0039_search_by_workspace.apply),
]

_LOCK_ID = 7_341_220_001  # any constant shared by every Switchboard process


def has_column(table: str, column: str) -> bool:
    return any(col.name == column for col in db.get_columns(table))


def applied_versions() -> set[int]:
    if "schema_version" not in db.get_tables():
        return set()
    return {int(row[0]) for row in db.execute_sql("SELECT version FROM schema_version").fetchall()}


def current_version() -> int:
    return max(applied_versions(), default=0)


def migrate() -> list[int]:
    """Apply every pending migration; return the versions applied."""
    applied: list[int] = []
    with db.connection_context(), db.atomic():
        if is_postgres():
            db.execute_sql("SELECT pg_advisory_xact_lock(%s)", (_LOCK_ID,))
        db.execute_sql(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            "version INTEGER PRIMARY KEY, name VARCHAR(100) NOT NULL, applied_at VARCHAR(40) NOT NULL)"
        )
        # By set, not by the highest number: a database may have met a later version first
        # (features developed side by side), and the earlier one must still run.
        done = applied_versions()
        for version, name, apply in sorted(MIGRATIONS, key=lambda migration: migration[0]):
            if version in done:
                continue
            apply(db.obj)
            param = "?" if isinstance(db.obj, SqliteDatabase) else "%s"
            db.execute_sql(
                f"INSERT INTO schema_version (version, name, applied_at) VALUES ({param}, {param}, {param})",  # noqa: S608 - placeholders only
                (version, name, now().isoformat()),
            )
            applied.append(version)
    return applied
