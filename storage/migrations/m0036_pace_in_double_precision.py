"""The send pace's instants in double precision on PostgreSQL.

`pace_slot` keeps unix times in seconds (about 1.8e9). Made from a plain float field, its columns
were PostgreSQL's `real`: four bytes, 24 bits of mantissa, so an instant was rounded to the nearest
128 seconds and a reservation could answer "your slot is in 57 s" for an account that had sent
nothing. SQLite's REAL was always eight bytes."""

from peewee import Database

from storage.db import is_postgres


def apply(database: Database) -> None:
    if is_postgres():
        database.execute_sql(
            "ALTER TABLE pace_slot ALTER COLUMN next_slot TYPE DOUBLE PRECISION, "
            "ALTER COLUMN paused_until TYPE DOUBLE PRECISION"
        )
