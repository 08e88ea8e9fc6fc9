"""The shared inbox's search: `GET /v1/conversations?q=...` on 100,000 conversations and 1,000,000
messages, against the plain list (`GET /v1/conversations`) in the same run.

Seeds a fresh database in bulk (one workspace, ten accounts; contact names and message text drawn
from a vocabulary with a long tail, so some words are common and most rare), serves it with
`switchboard serve --no-worker` in its own process and measures, from one keep-alive client and
interleaved so all share the machine's weather, the plain list and a list searched for what a person
types (`queries`).
Goal: p95 of every searched list under 100 ms, on both setups; the ratio to the plain list is shown.

SQLite by default (a temporary data dir). With `SWITCHBOARD_DATABASE_URL` set to a PostgreSQL
server (`postgresql://user@host:port/anything`) the run makes a database of its own on that server
(a unique name, dropped after) and uses `SWITCHBOARD_QUEUE_URL` (default `redis://127.0.0.1:6379/13`).

    python bench/inbox_search.py [--requests 300] [--conversations 100000] [--messages-each 10]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import os
import random
import shutil
import sqlite3
import statistics
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx2
from common import bootstrap, embedded_env, free_port, process, temp_dir

from storage.migrations import m0038_search_appended as conversation_search

PLATFORMS = ("instagram", "whatsapp", "telegram", "facebook", "x", "tiktok", "youtube", "instagram", "whatsapp",
             "telegram")
FIRST = ("Ana", "Zoë", "José", "Mia", "Liam", "Noah", "Emma", "Olivia", "Lucas", "Sofía", "Amélie", "Jonas", "Ines",
         "Mateo", "Chloé", "Yuki", "Omar", "Lea", "Hugo", "Nora")
SYLLABLES = ("ka", "lo", "mi", "ra", "to", "ne", "vi", "sa", "du", "pe", "zo", "qui", "bel", "mor", "tan", "gri",
             "fel", "son", "dor", "wik", "al", "est", "ur", "ion", "ski", "ber", "lin", "ova", "ez", "ach")


def _words(rng: random.Random, count: int, low: int, high: int) -> list[str]:
    seen: dict[str, None] = {}
    while len(seen) < count:
        seen["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(low, high)))] = None
    return list(seen)


class Corpus:
    """Deterministic names and text, and the queries measured against them."""

    def __init__(self, seed: int = 11) -> None:
        self.rng = random.Random(seed)
        self.surnames = _words(self.rng, 3000, 2, 4)
        self.vocabulary = _words(self.rng, 20000, 1, 3)
        # A long tail: the weight of the n-th word is 1/n (Zipf), so a few words are in many messages.
        self.weights = [1 / (n + 1) for n in range(len(self.vocabulary))]
        self.cumulative = list(self._accumulate(self.weights))
        self.seen: list[tuple[str, str]] = []  # (name, handle) of some contacts seeded, to search for
        self.orders: list[int] = []  # some order numbers the messages mention

    @staticmethod
    def _accumulate(values: list[float]) -> Iterator[float]:
        total = 0.0
        for value in values:
            total += value
            yield total

    def sentence(self) -> str:
        words = self.rng.choices(self.vocabulary, cum_weights=self.cumulative, k=self.rng.randint(6, 12))
        if self.rng.random() < 0.05:
            number = self.rng.randrange(100000, 999999)
            words.append(f"order {number}")
            if len(self.orders) < 10:
                self.orders.append(number)
        return " ".join(words).capitalize()

    def name(self) -> str:
        return f"{self.rng.choice(FIRST)} {self.rng.choice(self.surnames).capitalize()}"


def _rows(corpus: Corpus, *, workspace_id: str, profile_id: str, conversations: int,
          messages_each: int) -> Iterator[tuple[list[tuple[object, ...]], list[tuple[object, ...]]]]:
    """Batches of conversation and message rows, as the service stores them."""
    rng = corpus.rng
    now = dt.datetime(2026, 6, 1)
    batch_c: list[tuple[object, ...]] = []
    batch_m: list[tuple[object, ...]] = []
    for i in range(conversations):
        account_n = i % len(PLATFORMS)
        platform = PLATFORMS[account_n]
        last = now - dt.timedelta(seconds=rng.randrange(90 * 24 * 3600))
        name = corpus.name()
        handle = f"+1555{i:07d}" if platform == "whatsapp" else f"{name.split()[1].lower()}_{i}"
        if i % 997 == 1 and platform != "whatsapp":
            corpus.seen.append((name, handle))
        conversation_id = f"conv_{i:026d}"
        batch_c.append((conversation_id, workspace_id, profile_id, f"acc_bench{account_n:021d}", platform, handle,
                        name, f"ext-{i}", last, last, last, rng.randrange(4), "open", last - dt.timedelta(days=3),
                        last))
        for j in range(messages_each):
            at = last - dt.timedelta(minutes=messages_each - j)
            inbound = j % 2 == 0
            batch_m.append((f"msg_{i:020d}{j:06d}", conversation_id, "inbound" if inbound else "outbound",
                            corpus.sentence(), "received" if inbound else "sent", f"pm-{i}-{j}", "inbox", at, at))
        if len(batch_m) >= 100_000 or i == conversations - 1:
            yield batch_c, batch_m
            batch_c, batch_m = [], []


CONVERSATION_COLUMNS = ("id, workspace_id, profile_id, account_id, platform, contact_handle, contact_name,"
                        " external_conversation_id, last_message_at, last_inbound_at, activity_at, unread_count,"
                        " status, created_at, updated_at")
MESSAGE_COLUMNS = "id, conversation_id, direction, text, status, platform_message_id, source, created_at, updated_at"


def _accounts(workspace_id: str, profile_id: str) -> list[tuple[object, ...]]:
    now = dt.datetime(2026, 6, 1)
    return [(f"acc_bench{n:021d}", workspace_id, profile_id, platform, f"bench-{n}", f"brand{n}", f"Brand {n}",
             now, now, now) for n, platform in enumerate(PLATFORMS)]


ACCOUNT_INSERT = ("INSERT INTO account (id, workspace_id, profile_id, platform, platform_account_id, username,"
                  " display_name, status, needs_reauth, credentials, connected_at, disconnected_at, created_at,"
                  " updated_at) VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p}, 'connected', false, NULL, {p}, NULL,"
                  " {p}, {p})")
COUNTS = ("INSERT INTO conversation_count (account_id, workspace_id, profile_id, platform, total)"
          " SELECT account_id, workspace_id, profile_id, platform, COUNT(*) FROM conversation"
          " GROUP BY account_id, workspace_id, profile_id, platform")


def seed_sqlite(db_path: Path, corpus: Corpus, **shape: object) -> float:
    """Bulk inserts in one transaction, with the search index's triggers set aside meanwhile and its
    documents built (and merged) once after: what a bulk load does, the same index in the end."""
    started = time.perf_counter()
    connection = sqlite3.connect(db_path)
    connection.execute("PRAGMA synchronous = OFF")
    triggers = connection.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"
                                  " AND name LIKE 'conversation_search_%'").fetchall()
    with connection:
        for name, _ in triggers:
            connection.execute(f"DROP TRIGGER {name}")
        connection.executemany(ACCOUNT_INSERT.format(p="?"), [tuple(str(v) if isinstance(v, dt.datetime) else v
                                                                    for v in row) for row in
                                                              _accounts(str(shape["workspace_id"]),
                                                                        str(shape["profile_id"]))])
        for conversations, messages in _rows(corpus, **shape):  # type: ignore[arg-type]
            connection.executemany(f"INSERT INTO conversation ({CONVERSATION_COLUMNS}) VALUES ({', '.join('?' * 15)})",
                                   [tuple(str(v) if isinstance(v, dt.datetime) else v for v in row)
                                    for row in conversations])
            connection.executemany(f"INSERT INTO message ({MESSAGE_COLUMNS}, attempts)"
                                   f" VALUES ({', '.join('?' * 9)}, 0)",
                                   [tuple(str(v) if isinstance(v, dt.datetime) else v for v in row)
                                    for row in messages])
        connection.execute(COUNTS)
        for _, sql in triggers:
            connection.execute(sql)
        connection.execute("INSERT INTO conversation_search (conversation_search) VALUES ('delete-all')")
        connection.execute(conversation_search.FILL)
        connection.execute("INSERT INTO conversation_search (conversation_search) VALUES ('optimize')")
    connection.execute("ANALYZE")
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    return time.perf_counter() - started


def _copy(cursor: object, table: str, columns: str, rows: list[tuple[object, ...]]) -> None:
    buffer = io.StringIO()
    for row in rows:
        buffer.write("\t".join("\\N" if v is None else str(v).replace("\\", "\\\\").replace("\t", " ")
                               for v in row) + "\n")
    buffer.seek(0)
    cursor.copy_expert(f"COPY {table} ({columns}) FROM STDIN", buffer)  # type: ignore[attr-defined]


def seed_postgres(url: str, corpus: Corpus, **shape: object) -> float:
    """COPY in bulk, then VACUUM ANALYZE (what autovacuum does after a load: it also moves the GIN
    index's pending entries into the index); the search's documents fill as the rows arrive (the
    triggers run once a COPY, for its rows together)."""
    import psycopg2

    started = time.perf_counter()
    connection = psycopg2.connect(url)
    with connection, connection.cursor() as cursor:
        cursor.executemany(ACCOUNT_INSERT.format(p="%s"), _accounts(str(shape["workspace_id"]),
                                                                    str(shape["profile_id"])))
        for conversations, messages in _rows(corpus, **shape):  # type: ignore[arg-type]
            _copy(cursor, "conversation", CONVERSATION_COLUMNS, conversations)
            _copy(cursor, "message", MESSAGE_COLUMNS + ", attempts", [(*row, 0) for row in messages])
        cursor.execute(COUNTS)
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    connection.close()
    return time.perf_counter() - started


@contextlib.contextmanager
def setup(data_dir: str) -> Iterator[tuple[dict[str, str], str | None]]:
    """(environment, PostgreSQL URL or None): SQLite in the data dir, or a database of our own."""
    given = os.environ.get("SWITCHBOARD_DATABASE_URL", "")
    if not given.startswith("postgres"):
        yield embedded_env(data_dir, SWITCHBOARD_RATE_LIMIT_PER_MINUTE="100000000"), None
        return
    import psycopg2

    parts = urlsplit(given)
    name = f"switchboard_search_{uuid.uuid4().hex[:8]}"
    admin = psycopg2.connect(urlunsplit(parts._replace(path="/postgres")))
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    url = urlunsplit(parts._replace(path=f"/{name}"))
    try:
        yield embedded_env(data_dir, SWITCHBOARD_RATE_LIMIT_PER_MINUTE="100000000", SWITCHBOARD_DATABASE_URL=url,
                           SWITCHBOARD_QUEUE_URL=os.environ.get("SWITCHBOARD_QUEUE_URL")
                           or "redis://127.0.0.1:6379/13"), url
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def queries(corpus: Corpus) -> dict[str, str]:
    """What a person types: a surname, the start of a name, a handle, an order number, a word of
    about one message in two thousand, two words, a word no conversation holds; and, beyond the
    goal, a word in a quarter of all conversations (the worst a search can ask of the index)."""
    rng = random.Random(3)
    name, handle = rng.choice(corpus.seen)
    return {
        "a surname": name.split()[1],
        "the start of a name": name.split()[1][:4],
        "a handle": handle,
        "an order number": f"order {corpus.orders[3]}",
        "a word (1 in 2,000)": corpus.vocabulary[2000],
        "two words": f"{corpus.vocabulary[5]} {corpus.vocabulary[300]}",
        "no match": "xylophone",
        STRESS: corpus.vocabulary[60],
    }


STRESS = "stress: a word in 1 of 4"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=300, help="requests per measured URL")
    parser.add_argument("--conversations", type=int, default=100_000)
    parser.add_argument("--messages-each", type=int, default=10)
    parser.add_argument("--seed-only", metavar="DIR", help="seed SQLite in DIR (made) and stop: to study queries")
    args = parser.parse_args()
    if args.seed_only:
        env = embedded_env(args.seed_only)
        tenant = bootstrap(env)
        took = seed_sqlite(Path(args.seed_only) / "switchboard.db", Corpus(), workspace_id=tenant["workspaceId"],
                           profile_id=tenant["profileId"], conversations=args.conversations,
                           messages_each=args.messages_each)
        print(f"seeded in {took:.1f} s: {args.seed_only}")
        return

    data_dir = temp_dir()
    corpus = Corpus()
    try:
        with setup(data_dir) as (env, postgres):
            tenant = bootstrap(env)  # creates and migrates the database
            shape = {"workspace_id": tenant["workspaceId"], "profile_id": tenant["profileId"],
                     "conversations": args.conversations, "messages_each": args.messages_each}
            took = (seed_postgres(postgres, corpus, **shape) if postgres
                    else seed_sqlite(Path(data_dir) / "switchboard.db", corpus, **shape))
            print(f"{'PostgreSQL' if postgres else 'SQLite'}: seeded {args.conversations:,} conversations and "
                  f"{args.conversations * args.messages_each:,} messages in {took:.1f} s")
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            serve = [sys.executable, "-m", "switchboard", "serve", "--no-worker", "--port", str(port)]
            targets = {"plain list": {}} | {f"q: {label}": {"q": q} for label, q in queries(corpus).items()}
            timings: dict[str, list[float]] = {name: [] for name in targets}
            found: dict[str, int] = {}
            with process(serve, f"{base}/v1/health", env, timeout=180), \
                    httpx2.Client(base_url=base, headers={"Authorization": f"Bearer {tenant['apiKey']}"},
                                  timeout=60) as http:
                for name, params in targets.items():
                    answer = http.get("/v1/conversations", params=params)
                    answer.raise_for_status()
                    found[name] = answer.json()["pagination"]["total"]
                for _ in range(20):  # warm-up
                    for params in targets.values():
                        http.get("/v1/conversations", params=params).raise_for_status()
                for _ in range(args.requests):
                    for name, params in targets.items():
                        started = time.perf_counter()
                        http.get("/v1/conversations", params=params).raise_for_status()
                        timings[name].append((time.perf_counter() - started) * 1000)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)

    plain = statistics.median(timings["plain list"])
    print(f"{'':32} {'found':>8} {'median':>9} {'p95':>9} {'÷ plain':>8}   ({args.requests} requests each)")
    for name, values in timings.items():
        print(f"{name:32} {found[name]:8,} {statistics.median(values):7.2f}ms {percentile(values, 0.95):7.2f}ms "
              f"{statistics.median(values) / plain:8.1f}")
    worst = max(percentile(v, 0.95) for k, v in timings.items() if k.startswith("q:") and STRESS not in k)
    print(f"worst p95 of a searched list: {worst:.2f} ms (goal < 100 ms; the stress line is beyond the goal)")


if __name__ == "__main__":
    main()
