"""A change written the way another process, or a person at a SQL prompt, would write it: on a
connection the service does not own, committed at once, never through the service's code."""

import sqlite3
from collections.abc import Callable
from pathlib import Path

import psycopg2


def elsewhere(database_url: str) -> Callable[[str, tuple], None]:
    """Run one statement (`?` placeholders) on a connection of its own, and commit it."""

    def run(statement: str, params: tuple) -> None:
        if database_url.startswith("sqlite"):
            with sqlite3.connect(Path(database_url.removeprefix("sqlite:///"))) as conn:
                conn.execute("PRAGMA foreign_keys = ON")
                conn.execute(statement, params)
        else:
            conn = psycopg2.connect(database_url)
            with conn, conn.cursor() as cursor:
                cursor.execute(statement.replace("?", "%s"), params)
            conn.close()

    return run
