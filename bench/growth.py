"""Benchmark: how each operation's cost grows with the history every workspace leaves behind.

    python bench/growth.py [--sizes 1e4,1e5,1e6] [--repeat 15] [--seconds 3] [--json] [--only sqlite|postgresql]
                           [--ops tick,poll_round,...] [--unfenced]

Each setup (SQLite; PostgreSQL + Redis when SWITCHBOARD_DATABASE_URL and SWITCHBOARD_QUEUE_URL are
set: a fresh database of its own is made on that server and dropped after, the queue is that Redis
database) is loaded in bulk, not through the API, to each size of history in turn: messages,
conversations, outbox events, webhook deliveries, posts and their targets (finished work rows, and
future posts the scheduler waits on), audit rows, spread over 200 workspaces and over time. The
measured workspace's own data (its conversations, posts, accounts, endpoint) is made first and is
the same at every size. At each size the same operations are timed, each its median over
`--repeat` runs, and its CPU time (every process counted) over at least `--seconds` of runs; on
SQLite the WAL is folded into the file before each count and again inside it, at its end, so that
each operation pays for folding its own writes and no other's (`--unfenced`: not, as before):

- `control`: the baseline, hashing 2 MB in this process (no data): how the machine's load moved;
- `dm_send`: a DM queued and sent through the engine (claim, pace, the emulator's Telegram, finish);
- `webhook`: an event emitted, dispatched to the workspace's endpoint and delivered (a local receiver);
- `inbox_list`, `inbox_search`: `GET /v1/conversations` without and with `q`;
- `posts_month`: `GET /v1/posts?from=&to=` over this month (the calendar's month);
- `tick`: the scheduler's tick with nothing due, all history's future posts waiting;
- `broadcast_fanout`: a broadcast to 100 conversations created, started and fanned out;
- `poll_round`: 10 YouTube channels' inbox polls through the engine (the emulator's YouTube);
- `workspaces`: `GET /v1/workspaces`.

After each load the retention jobs remove what of the history is already past its retention
(`drain_retention`), as a deployment's would have. On PostgreSQL the history goes in with `COPY`
(`copy_rows`), and the server's autovacuum is set to docs/operations.md's settings for the run
(`deployment_autovacuum`: `ALTER SYSTEM`, the previous values put back after); after each load the
benchmark waits for autovacuum to analyse the loaded tables and go quiet (`await_autovacuum`), as a
deployment would be a minute after such a load (a server that refuses `ALTER SYSTEM` gets a `VACUUM
ANALYZE` by hand instead). Prints, per operation and setup, the cost at each size and the growth
(largest size / smallest), then the rows by table after the retention jobs ran with the clock moved
past every retention; `--json` prints the same as one object. `BENCH_TRACE=1` (SQLite) also prints
each operation's costliest statements at the largest size; `BENCH_KEEP=1` keeps the PostgreSQL
database (its name printed) as it was measured, without the retention jobs' run, to look into after.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import datetime as dt
import hashlib
import http.server
import io
import json
import os
import random
import shutil
import sqlite3
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx2

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import CpuMeter, embedded_env, free_port, process, temp_dir  # noqa: E402

WORKSPACES = 200
# The history's mix, by share of its rows.
MIX = {"message": 0.40, "conversation": 0.05, "event": 0.15, "webhook_delivery": 0.12, "post": 0.08,
       "post_target": 0.12, "audit_entry": 0.08}
CONTROL_BYTES = bytes(range(256)) * 8192  # 2 MB: a few ms of hashing
OWN_CONVERSATIONS = 500
OWN_POSTS = 120
POLLED = 10
FANOUT = 100
TABLES = ("message", "conversation", "event", "webhook_delivery", "post", "post_target", "audit_entry",
          "broadcast_recipient", "inbox_poll", "account_chore", "idempotency_record", "rate_limit_counter")


def size_label(value: int) -> str:
    return f"1e{len(str(value)) - 1}" if str(value).strip("0") == "1" else str(value)


def parse_sizes(text: str) -> list[int]:
    return sorted(int(float(part)) for part in text.split(",") if part.strip())


# --- the history, loaded in bulk ---------------------------------------------------------------------


class History:
    """Rows of 200 other workspaces, added in steps up to each size; ids numbered, times spread."""

    def __init__(self, now: dt.datetime, event_days: float = 28) -> None:
        self.now = now
        # Within the default 30 days' outbox retention by default (the tick's job keeps them); longer,
        # and the retention has rows to remove under load (bench/soak.py's preload).
        self.event_days = event_days
        self.rng = random.Random(53)
        self.loaded = 0
        self.counters: dict[str, int] = {}
        self.workspaces: list[tuple[str, str, str, str]] = []  # workspace, profile, account, endpoint
        self.conversations: list[tuple[str, int]] = []  # id, workspace index
        self.events: list[tuple[str, int, dt.datetime]] = []
        self.posts: list[tuple[str, int, bool, dt.datetime]] = []  # id, workspace index, future, when

    def _id(self, prefix: str, at: dt.datetime) -> str:
        from kit import ids

        number = self.counters[prefix] = self.counters.get(prefix, 0) + 1
        stem = ids.first_at(prefix, at.replace(tzinfo=dt.UTC).timestamp())
        return f"{stem[:-10]}{number:010d}"

    def _past(self, days: float) -> dt.datetime:
        return self.now - dt.timedelta(seconds=self.rng.uniform(60, days * 86400))

    def setup(self) -> None:
        from service.webhooks import signing
        from storage.models import Account, Profile, WebhookEndpoint, Workspace

        moment = self.now - dt.timedelta(days=400)
        rows_w, rows_p, rows_a, rows_e = [], [], [], []
        for n in range(WORKSPACES):
            ids_ = (f"ws_hist{n:05d}", f"prof_hist{n:05d}", f"acc_hist{n:05d}", f"wh_hist{n:05d}")
            self.workspaces.append(ids_)
            rows_w.append({"id": ids_[0], "name": f"History {n}", "created_at": moment, "updated_at": moment})
            rows_p.append({"id": ids_[1], "workspace": ids_[0], "name": "Main", "created_at": moment,
                           "updated_at": moment})
            # Disconnected: their accounts' chores (follower snapshots) would be due work in every tick.
            rows_a.append({"id": ids_[2], "workspace": ids_[0], "profile": ids_[1], "platform": "telegram",
                           "status": "disconnected", "disconnected_at": moment,
                           "platform_account_id": f"hist-{n}", "username": f"hist{n}", "connected_at": moment,
                           "created_at": moment, "updated_at": moment})
            rows_e.append({"id": ids_[3], "workspace": ids_[0], "url": "https://hooks.example.com/in",
                           "events": [], "secret": signing.seal(signing.new_secret()), "created_at": moment,
                           "updated_at": moment})
        for model, rows in ((Workspace, rows_w), (Profile, rows_p), (Account, rows_a), (WebhookEndpoint, rows_e)):
            model.insert_many(rows).execute()

    def grow_to(self, size: int) -> float:
        """Add rows until the history holds `size`; seconds taken."""
        from storage.db import db

        started = time.perf_counter()
        add = size - self.loaded
        counts = {table: round(add * share) for table, share in MIX.items()}
        self.events = []  # deliveries go to this step's events: the retention may have taken older ones
        with db.atomic():
            self._conversations(counts["conversation"])
            self._messages(counts["message"])
            self._events(counts["event"])
            self._deliveries(counts["webhook_delivery"])
            self._posts(counts["post"])
            self._targets(counts["post_target"])
            self._audit(counts["audit_entry"])
        self.loaded = size
        return time.perf_counter() - started

    @staticmethod
    def _insert(model: Any, rows: Iterator[dict[str, Any]]) -> None:
        if _pg():
            copy_rows(model, rows)
            return
        batch: list[dict[str, Any]] = []
        for row in rows:
            batch.append(row)
            if len(batch) == 500:
                model.insert_many(batch).execute()
                batch = []
        if batch:
            model.insert_many(batch).execute()

    def _conversations(self, count: int) -> None:
        from storage.models import Conversation

        def rows() -> Iterator[dict[str, Any]]:
            for _ in range(count):
                index = self.rng.randrange(WORKSPACES)
                workspace, profile, account, _ = self.workspaces[index]
                at = self._past(90)
                conversation_id = self._id("conv", at)
                self.conversations.append((conversation_id, index))
                yield {"id": conversation_id, "workspace": workspace, "profile": profile, "account": account,
                       "platform": "telegram", "contact_handle": conversation_id, "contact_name": "Someone",
                       "external_conversation_id": conversation_id, "last_message_at": at, "last_inbound_at": at,
                       "activity_at": at, "created_at": at, "updated_at": at}

        self._insert(Conversation, rows())

    def _messages(self, count: int) -> None:
        from storage.models import Message

        def rows() -> Iterator[dict[str, Any]]:
            for n in range(count):
                conversation_id, _ = self.conversations[self.rng.randrange(len(self.conversations))]
                at = self._past(90)
                inbound = n % 2 == 0
                yield {"id": self._id("msg", at), "conversation": conversation_id,
                       "direction": "inbound" if inbound else "outbound", "text": f"history message {n}",
                       "status": "received" if inbound else "sent", "platform_message_id": f"hist-{n}-{self.loaded}",
                       "attempts": 0 if inbound else 1, "created_at": at, "updated_at": at}

        self._insert(Message, rows())

    def _events(self, count: int) -> None:
        from storage.models import Event

        def rows() -> Iterator[dict[str, Any]]:
            for n in range(count):
                index = self.rng.randrange(WORKSPACES)
                at = self._past(self.event_days)
                event_id = self._id("evt", at)
                self.events.append((event_id, index, at))
                yield {"id": event_id, "workspace": self.workspaces[index][0], "type": "message.received",
                       "data": {"n": n}, "created_at": at, "dispatched_at": at}

        self._insert(Event, rows())

    def _deliveries(self, count: int) -> None:
        from storage.models import WebhookDelivery

        def rows() -> Iterator[dict[str, Any]]:
            for _ in range(count):
                event_id, index, at = self.events[self.rng.randrange(len(self.events))]
                yield {"id": self._id("whd", at), "workspace": self.workspaces[index][0],
                       "endpoint": self.workspaces[index][3], "event": event_id, "event_type": "message.received",
                       "status": "DELIVERED", "attempts": 1, "response_status": 200, "delivered_at": at,
                       "created_at": at, "updated_at": at}

        self._insert(WebhookDelivery, rows())

    def _posts(self, count: int) -> None:
        from storage.models import Post

        def rows() -> Iterator[dict[str, Any]]:
            for n in range(count):
                index = self.rng.randrange(WORKSPACES)
                future = n % 2 == 0  # half waiting for their time (up to a year ahead), half published
                when = (self.now + dt.timedelta(seconds=self.rng.uniform(3600, 365 * 86400)) if future
                        else self._past(365))
                created = min(when, self.now) - dt.timedelta(days=1)
                post_id = self._id("post", created)
                self.posts.append((post_id, index, future, when))
                yield {"id": post_id, "workspace": self.workspaces[index][0], "content": f"history post {n}",
                       "status": "scheduled" if future else "published", "scheduled_for": when,
                       "published_at": None if future else when, "created_at": created, "updated_at": created}

        self._insert(Post, rows())

    def _targets(self, count: int) -> None:
        from storage.models import PostTarget

        def rows() -> Iterator[dict[str, Any]]:
            for n in range(count):
                post_id, index, future, when = self.posts[self.rng.randrange(len(self.posts))]
                workspace, profile, account, _ = self.workspaces[index]
                yield {"id": self._id("tgt", when), "post": post_id, "workspace": workspace, "account": account,
                       "profile_id": profile, "platform": "telegram", "position": n,
                       "status": "queued" if future else "published", "next_attempt_at": when,
                       "attempts": 0 if future else 1, "published_at": None if future else when,
                       "platform_post_id": None if future else f"hist-{n}-{self.loaded}",
                       "options": {}, "created_at": when, "updated_at": when}

        self._insert(PostTarget, rows())

    def _audit(self, count: int) -> None:
        from storage.models import AuditEntry

        def rows() -> Iterator[dict[str, Any]]:
            for _ in range(count):
                at = self._past(600)  # a third past the default 400 days' retention
                yield {"id": self._id("aud", at), "workspace": self.workspaces[self.rng.randrange(WORKSPACES)][0],
                       "at": at, "actor_type": "key", "action": "post.created"}

        self._insert(AuditEntry, rows())


def copy_rows(model: Any, rows: Iterator[dict[str, Any]], batch: int = 50_000) -> None:
    """PostgreSQL's bulk load (`COPY ... FROM STDIN`) of rows given as `insert_many` takes them: by
    field name, the model's defaults filled in and each value turned into its column's form by the
    field itself (JSON as text, a foreign key's id). In the caller's transaction, on its connection.
    One row at a time through `INSERT ... VALUES` lists of 500 loaded some 560 rows a second into
    these tables; COPY sends them as one stream, parsed once."""
    from storage.db import db
    from storage.models.base import JSONField

    meta = model._meta
    defaults = meta.defaults  # field: value, or a callable making it
    names: list[str] = []
    given: list[tuple[str, bool]] = []  # a row's key, and whether its field keeps JSON
    missing: list[tuple[Any, bool]] = []  # a default (a value, or a callable making one), and the same
    buffer = io.StringIO()
    pending = 0

    def flush() -> None:
        nonlocal buffer, pending
        if pending:
            buffer.seek(0)
            columns = ", ".join(f'"{name}"' for name in names)
            db.cursor().copy_expert(f'COPY "{meta.table_name}" ({columns}) FROM STDIN', buffer)
        buffer, pending = io.StringIO(), 0

    for row in rows:
        if not names:
            for name in row:
                field = meta.fields[name]
                names.append(field.column_name)
                given.append((name, isinstance(field, JSONField)))
            for field, default in defaults.items():
                if field.name not in row:
                    names.append(field.column_name)
                    missing.append((default, isinstance(field, JSONField)))
        values = [_copy_text(_to_json(row[name]) if json_ else row[name]) for name, json_ in given]
        for default, json_ in missing:
            value = default() if callable(default) else default
            values.append(_copy_text(_to_json(value) if json_ else value))
        buffer.write("\t".join(values))
        buffer.write("\n")
        pending += 1
        if pending == batch:
            flush()
    flush()


def _to_json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_text(value: Any) -> str:
    """A value in COPY's text format: null as `\\N`, booleans as t/f, instants in ISO form, and in
    text a backslash, tab, newline or carriage return escaped."""
    if value is None:
        return "\\N"
    kind = type(value)
    if kind is str:
        # Most text has none of the four: no copy made (isprintable is False for tab, newline, CR).
        return value if value.isprintable() and "\\" not in value else value.translate(_COPY_ESCAPES)
    if kind is bool:
        return "t" if value else "f"
    if kind is dt.datetime:
        return value.isoformat(sep=" ")
    return str(value).translate(_COPY_ESCAPES)


def preload(env: dict[str, str], size: int, event_days: float = 28) -> float:
    """The migrated database of the service configured by `env` loaded in bulk with `size` rows of
    history, as the benchmark loads it (for bench/soak.py); seconds taken."""
    from kit import settings
    from storage.db import connection, db, initialise

    configured = settings.configure(settings.Settings.from_env(env))
    initialise(configured.database_url)
    history = History(dt.datetime.now(dt.UTC).replace(tzinfo=None), event_days=event_days)
    with connection():
        history.setup()
        took = history.grow_to(size)
    if hasattr(db.obj, "close_all"):
        db.obj.close_all()
    return took


# --- the measured workspace ----------------------------------------------------------------------------


class Receiver:
    """A local HTTP endpoint that answers 204 to every POST: the measured workspace's webhook."""

    def __init__(self) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


class Own:
    """The measured workspace: made once, before any history, through the service's own functions."""

    def __init__(self, base: str, receiver: Receiver, now: dt.datetime) -> None:
        from service.accounts import ops as accounts
        from service.identity import bootstrap
        from service.identity.auth import Actor
        from service.webhooks import signing
        from storage.db import connection, db
        from storage.models import Account, Conversation, Message, Post, PostTarget, WebhookEndpoint
        from switchboard.sandbox_seed import connect

        with connection(), db.atomic():
            self.tenant = bootstrap.bootstrap(email=f"growth-{uuid.uuid4().hex[:8]}@example.com",
                                              password="bench-password")
        workspace, profile = self.tenant["workspaceId"], self.tenant["profileId"]
        self.actor = Actor(workspace_id=workspace, permission="read-write", profile_ids=None, credential_id="bench")
        self.http = httpx2.Client(base_url=base, timeout=60,
                                  headers={"Authorization": f"Bearer {self.tenant['apiKey']}"})
        # Telegram bots with a chat each, for the DMs (Telegram paces a bot at 30 messages a second).
        self.chats: list[tuple[Any, Any]] = []
        for n in range(20):
            bot = connect(self.http, api_key=self.tenant["apiKey"], profile_id=profile, platform="telegram")
            said = {"accountId": bot["id"], "from": {"id": str(7000 + n)}, "text": "hi"}
            self.http.post("/sandbox/telegram/inbound-message", json=said).raise_for_status()
            with connection():
                account = Account.get_by_id(bot["id"])
                self.chats.append((Conversation.get(Conversation.account == account.id), account))
        # An account of its own history: conversations for the inbox and the broadcast's audience.
        with connection(), db.atomic():
            made = accounts.connect(workspace_id=workspace, profile_id=profile, platform="telegram",
                                    platform_account_id="own-history", username="own", display_name="Own",
                                    credentials={"botToken": "1:own"})
            self.account_id = made.id
            conversations, messages = [], []
            for n in range(OWN_CONVERSATIONS):
                at = now - dt.timedelta(minutes=n * 7)
                conversation_id = f"conv_own{n:022d}"
                conversations.append({"id": conversation_id, "workspace": workspace, "profile": profile,
                                      "account": made.id, "platform": "telegram", "contact_handle": f"own{n}",
                                      "contact_name": f"Customer {n}", "external_conversation_id": f"own-{n}",
                                      "last_message_at": at, "last_inbound_at": at, "activity_at": at,
                                      "created_at": at, "updated_at": at})
                for j in range(5):
                    messages.append({"id": f"msg_own{n:016d}{j:06d}", "conversation": conversation_id,
                                     "direction": "inbound", "text": f"order {n} question {j}", "status": "received",
                                     "created_at": at, "updated_at": at})
            for start in range(0, len(conversations), 200):
                Conversation.insert_many(conversations[start:start + 200]).execute()
            for start in range(0, len(messages), 500):
                Message.insert_many(messages[start:start + 500]).execute()
            db.execute_sql("DELETE FROM conversation_count WHERE workspace_id = ?" if not _pg() else
                           "DELETE FROM conversation_count WHERE workspace_id = %s", (workspace,))
            db.execute_sql(
                "INSERT INTO conversation_count (account_id, workspace_id, profile_id, platform, total) SELECT "
                "account_id, workspace_id, profile_id, platform, COUNT(*) FROM conversation WHERE workspace_id = "
                + ("%s" if _pg() else "?") + " GROUP BY account_id, workspace_id, profile_id, platform", (workspace,))
            # Posts of its own: this month's and the months around it, published and scheduled.
            month = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
            for n in range(OWN_POSTS):
                when = month + dt.timedelta(hours=(n - OWN_POSTS // 3) * 18)
                live = when < now
                post_id = f"post_own{n:022d}"
                Post.insert(id=post_id, workspace=workspace, content=f"own post {n}",
                            status="published" if live else "scheduled", scheduled_for=when,
                            published_at=when if live else None, created_at=when - dt.timedelta(days=2),
                            updated_at=when).execute()
                PostTarget.insert(id=f"tgt_own{n:023d}", post=post_id, workspace=workspace, account=made.id,
                                  profile_id=profile, platform="telegram", status="published" if live else "queued",
                                  next_attempt_at=when, published_at=when if live else None, options={},
                                  created_at=when, updated_at=when).execute()
            self.endpoint = WebhookEndpoint.create(id=f"wh_own{uuid.uuid4().hex[:12]}", workspace=workspace,
                                                   url=receiver.url, events=["account.connected"],
                                                   secret=signing.seal(signing.new_secret()))
        # YouTube channels whose inboxes are polled.
        self.channels: list[str] = []
        for n in range(POLLED):
            body = self.http.post("/sandbox/youtube/accounts", json={"username": f"@growth{n}"}).json()
            with connection(), db.atomic():
                channel = accounts.connect(workspace_id=workspace, profile_id=profile, platform="youtube",
                                           platform_account_id=body["platformAccountId"], username=body["username"],
                                           display_name=body["displayName"], credentials=body["credentials"])
            self.channels.append(channel.id)
        self.month = (month.strftime("%Y-%m-%dT%H:%M:%SZ"),
                      (month + dt.timedelta(days=32)).replace(day=1).strftime("%Y-%m-%dT%H:%M:%SZ"))
        self.sent = 0


def _pg() -> bool:
    from storage.db import is_postgres

    return is_postgres()


# --- the operations --------------------------------------------------------------------------------------


def operations(own: Own, settings: Any) -> dict[str, Callable[[], None]]:
    from kit import clock
    from service.broadcasts import completion
    from service.broadcasts import ops as broadcasts
    from service.broadcasts import work as broadcast_work
    from service.common import events
    from service.inbox import outbound, polling, polls
    from service.inbox import work as inbox_work
    from service.webhooks import work as webhook_work
    from storage.db import connection, db
    from storage.models import AccountChore, BroadcastRecipient, Message, WebhookDelivery
    from tasks import scheduler

    def dm_send() -> None:
        conversation, account = own.chats[own.sent % len(own.chats)]
        own.sent += 1
        with connection(), db.atomic():
            message = outbound.queue_outbound(conversation, account, text=f"growth {own.sent}", nudge=False)
        inbox_work.send(message.id)
        with connection():
            status = Message.get_by_id(message.id).status
        if status != "sent":
            raise RuntimeError(f"a DM ended {status}")

    def webhook() -> None:
        with connection():
            with db.atomic():
                events.emit(workspace_id=own.tenant["workspaceId"], type="account.connected", data={"id": "x"})
            with db.atomic():
                dispatched = webhook_work.dispatch_pending()
            made = list(WebhookDelivery.select(WebhookDelivery.id, WebhookDelivery.endpoint, WebhookDelivery.event_type)
                        .where(WebhookDelivery.id.in_(dispatched.deliveries)).tuples()) if dispatched.deliveries else []
            for delivery_id, endpoint_id, event_type in made:
                if endpoint_id != own.endpoint.id:
                    # Another workspace's event was waiting (twice seen at 10^6 on PostgreSQL, cause
                    # not found): its endpoint is not a real one; named at the end of the run.
                    FOREIGN_DELIVERIES[event_type] += 1
                    continue
                webhook_work.deliver(delivery_id)
                delivery = WebhookDelivery.get_by_id(delivery_id)
                if delivery.status != "DELIVERED":
                    raise RuntimeError(f"a delivery ended {delivery.status} ({delivery.response_status}: "
                                       f"{delivery.last_error})")

    def get(path: str, **params: str) -> Callable[[], None]:
        def run() -> None:
            own.http.get(path, params=params).raise_for_status()
        return run

    def broadcast() -> None:
        with connection():
            with db.atomic():
                made = broadcasts.create(actor=own.actor, account_id=own.account_id, name="growth",
                                         text="Hello from the bench")
            with db.atomic():
                broadcasts.send_now(actor=own.actor, broadcast_id=made.id)
        broadcast_work.start(made.id)
        # Its messages as a worker would leave them once sent: queued ones that no worker runs here
        # would pile up as due work in the engine's index, which no deployment sees. Found by the
        # broadcast's recipients: by `source` and `status` the update read every message (no index
        # has them), which no worker does and which grew with the history.
        with connection(), db.atomic():
            Message.update(status="sent", next_attempt_at=None, nudged_at=None).where(
                Message.id.in_(BroadcastRecipient.select(BroadcastRecipient.message_id).where(
                    BroadcastRecipient.broadcast == made.id)), Message.status == "pending").execute()
            BroadcastRecipient.update(status="sent").where(BroadcastRecipient.broadcast == made.id,
                                                           BroadcastRecipient.status == "pending").execute()
        with connection():
            completion.complete_if_done(made.id)

    quick = replace(settings, inbox_poll_seconds=0.001)

    def poll_round() -> None:
        polls.settings.configure(quick)
        polling.settings.configure(quick)
        try:
            from service.engine import core as engine

            with connection(), db.atomic():
                # Every channel's chore due now (each poll set its next one a moment on), then armed.
                AccountChore.update(next_attempt_at=clock.now()).where(
                    AccountChore.chore == "inbox_poll", AccountChore.status == "idle").execute()
                engine.sweep(inbox_work.POLL_WORK)
            with connection():  # with those a measured tick armed and handed to the queue (no consumer here)
                armed = [row.id for row in AccountChore.select(AccountChore.id).where(
                    AccountChore.chore == "inbox_poll", AccountChore.status == "due")]
            read = [polling.run(chore_id) for chore_id in armed]
            if read.count("read") != len(own.channels):
                raise RuntimeError(f"{read.count('read')} of {len(own.channels)} polls read")
        finally:
            polls.settings.configure(settings)
            polling.settings.configure(settings)

    def control() -> None:
        # The baseline: fixed work of this process's own, touching no data. Its CPU time moves only
        # with the machine (other processes' load slows every core's caches); each operation's
        # growth is also given divided by this one's.
        hashlib.sha256(CONTROL_BYTES).digest()

    return {
        "control": control,
        "dm_send": dm_send,
        "webhook": webhook,
        "inbox_list": get("/v1/conversations"),
        "inbox_search": get("/v1/conversations", q="question 3"),
        "posts_month": get("/v1/posts", **{"from": own.month[0], "to": own.month[1]}),
        "tick": scheduler.tick,
        "broadcast_fanout": broadcast,
        "poll_round": poll_round,
        "workspaces": get("/v1/workspaces"),
    }


def fold_wal(database_url: str) -> None:
    """SQLite: fold the WAL into the database file now, as the API process's checkpoint thread
    does every 0.5 s (`storage.db.WalCheckpoints`), so that no operation's measure takes in the
    folding of the writes of the one measured before it (`measure`). Nothing on PostgreSQL."""
    if database_url.startswith("postgres"):
        return
    from storage.db import db

    connection = sqlite3.connect(db.obj.database, isolation_level=None)
    try:
        connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    finally:
        connection.close()


def measure(ops: dict[str, Callable[[], None]], repeat: int, meter: Any, pids: dict[str, int], seconds: float,
            fold: Callable[[], None] | None = None) -> tuple[dict[str, float], dict[str, float]]:
    """Each operation's CPU time in µs, every process counted (this one, the API's, the database's
    backends, Redis): what the machine's other load moves least. And its median wall time, the
    operations interleaved so that all see the same machine.

    `fold` (SQLite: `fold_wal`) runs before each operation's CPU count, outside it, and again at its
    end, inside it: each operation is charged the folding of its own writes into the database file,
    all of it, and none of the operation's before it (without it, a read measured after a write
    paid for the tail of the write's folding, which grows with the tables)."""
    samples: dict[str, list[float]] = {name: [] for name in ops}
    for op in ops.values():  # a warm-up
        for _ in range(2):
            op()
    for _ in range(repeat):
        for name, op in ops.items():
            began = time.perf_counter()
            op()
            samples[name].append((time.perf_counter() - began) * 1e6)
    cpu: dict[str, float] = {}
    for name, op in ops.items():
        # Runs enough for a CPU count in clock ticks (10 ms) to be exact to a few per cent; this
        # process's own time from its precise clock.
        if fold is not None:
            fold()
        meter.start(pids)
        began, ours, runs = time.perf_counter(), time.process_time(), 0
        while runs < repeat or time.perf_counter() - began < seconds:
            op()
            runs += 1
        if fold is not None:
            fold()
        ours = time.process_time() - ours
        spent = meter.stop(pids)
        cpu[name] = round((spent["own"] - spent["bench"] + ours) / runs * 1e6, 1)
        VACUUMED[name] = round(spent.get("autovacuum", 0.0) / runs * 1e6, 1)
    return cpu, {name: round(statistics.median(values), 1) for name, values in samples.items()}


# Deliveries the `webhook` operation's dispatch made for other workspaces' events, by event type.
FOREIGN_DELIVERIES: collections.Counter[str] = collections.Counter()
# The autovacuum workers' CPU in µs a run, of each operation's last count (`CpuMeter`: not in its figure).
VACUUMED: dict[str, float] = {}


# --- a setup's run ---------------------------------------------------------------------------------------


@contextlib.contextmanager
def fresh_postgres(url: str) -> Iterator[str]:
    """A database of its own on the server of `url`, dropped after."""
    import psycopg2

    server = url.rsplit("/", 1)[0]
    name = f"switchboard_growth_{uuid.uuid4().hex[:8]}"
    admin = psycopg2.connect(server + "/postgres")
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{server}/{name}"
    finally:
        if os.environ.get("BENCH_KEEP"):  # kept to look into (EXPLAIN) after the run
            print(f"kept: {server}/{name}", file=sys.stderr)
        else:
            with admin.cursor() as cursor:
                cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


# docs/operations.md's recommended server settings, which the PostgreSQL part runs with.
AUTOVACUUM = {"autovacuum": "on", "autovacuum_naptime": "15s", "autovacuum_vacuum_cost_limit": "2000",
              "autovacuum_vacuum_scale_factor": "0.05", "autovacuum_analyze_scale_factor": "0.02"}
HISTORY_TABLES = tuple(MIX)
AUTOVACUUM_LOCK = 5_300_053  # the advisory lock a run holds while the server has its settings


@contextlib.contextmanager
def deployment_autovacuum(url: str) -> Iterator[bool]:
    """The server's autovacuum as docs/operations.md recommends it, for the block: `ALTER SYSTEM` and a
    reload (a superuser's), and after, even on failure, each setting as it was (set again to its
    previous value in postgresql.auto.conf, or reset when it was not there). Yields False, changing
    nothing, when the server refuses (not a superuser): the run then vacuums itself (`vacuum`).
    Another run already holding the settings (an advisory lock, for as long as it runs) leaves them
    to it: this one yields whether autovacuum is on and restores nothing (the first to start restores,
    when it ends, even if this one still runs)."""
    import psycopg2

    admin = psycopg2.connect(url.rsplit("/", 1)[0] + "/postgres")
    admin.autocommit = True
    before: dict[str, str] | None = None
    try:
        with admin.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", (AUTOVACUUM_LOCK,))
            if cursor.fetchone()[0]:
                cursor.execute("SELECT name, setting FROM pg_file_settings WHERE sourcefile LIKE %s "
                               "AND name = ANY(%s) AND applied", ("%postgresql.auto.conf", list(AUTOVACUUM)))
                before = dict(cursor.fetchall())
                for name, value in AUTOVACUUM.items():
                    cursor.execute(f"ALTER SYSTEM SET {name} = %s", (value,))
                cursor.execute("SELECT pg_reload_conf()")
            # The reload is a signal each backend takes in its own time: a `SHOW` at once could still
            # answer the old setting (runs took the vacuum-by-hand path with autovacuum on).
            waited_until = time.monotonic() + (10 if before is not None else 0)
            while True:
                cursor.execute("SHOW autovacuum")
                on = cursor.fetchone()[0] == "on"
                if on or time.monotonic() >= waited_until:
                    break
                time.sleep(0.05)
    except psycopg2.Error:
        on = False
    try:
        yield on
    finally:
        if before is not None:
            with admin.cursor() as cursor:
                for name in AUTOVACUUM:
                    if name in before:
                        cursor.execute(f"ALTER SYSTEM SET {name} = %s", (before[name],))
                    else:
                        cursor.execute(f"ALTER SYSTEM RESET {name}")
                cursor.execute("SELECT pg_reload_conf()")
        admin.close()


def await_autovacuum(database_url: str, since: dt.datetime, timeout: float = 600) -> float:
    """Wait for the server's autovacuum to analyse every history table after a load (what gives the
    planner its statistics) and to finish whatever vacuum it started in this database, then one more
    nap with none starting: the state a deployment is in a minute or so after the same load.
    Seconds waited; on a timeout, `VACUUM ANALYZE` by hand and the timeout."""
    import psycopg2

    connection = psycopg2.connect(database_url)
    connection.autocommit = True
    began = time.monotonic()
    quiet_since: float | None = None
    try:
        with connection.cursor() as cursor:
            while time.monotonic() - began < timeout:
                cursor.execute("SELECT count(*) FROM pg_stat_user_tables WHERE relname = ANY(%s) AND "
                               "coalesce(greatest(last_autoanalyze, last_analyze), '-infinity') < %s",
                               (list(HISTORY_TABLES), since))
                unanalysed = cursor.fetchone()[0]
                cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' "
                               "AND datname = current_database()")
                busy = cursor.fetchone()[0]
                if unanalysed or busy:
                    quiet_since = None
                elif quiet_since is None:
                    quiet_since = time.monotonic()
                elif time.monotonic() - quiet_since > 20:  # a nap (15 s) and a little more without work
                    return time.monotonic() - began
                time.sleep(1)
    finally:
        connection.close()
    vacuum(database_url)
    return timeout


def vacuum(database_url: str) -> None:
    """What autovacuum does after a bulk load (docs/operations.md's settings): visibility map and
    statistics up to date. SQLite gets its statistics (`ANALYZE`) as `PRAGMA optimize` would."""
    if database_url.startswith("postgres"):
        import psycopg2

        connection = psycopg2.connect(database_url)
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
        connection.close()
    else:
        from storage.db import connection as db_connection
        from storage.db import db

        with db_connection():
            db.execute_sql("ANALYZE")
            db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")  # as a running service folds its WAL


def rows_by_table() -> dict[str, int]:
    from storage.db import connection, db

    with connection():
        present = set(db.get_tables())
        return {table: int(db.execute_sql(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
                for table in TABLES if table in present}


def drain_retention() -> None:
    """The retention jobs until they find nothing, the clock as it is: the history's rows already past
    a retention (a third of its audit rows) go, as a deployment's jobs removed each within a minute
    of its day. Left in, they were the tick's work: its job deleted 1,000 audit rows a tick while a
    look found a whole batch, and the idle tick measured 26-65x at 10^6 in the runs where that
    backlog met its count (PostgreSQL's log: 120 `DELETE ... LIMIT 1000` in one run)."""
    from service.identity import audit_log
    from service.inbox import inbound
    from service.webhooks import retention
    from storage.db import connection

    with connection():
        for forget in (retention.forget_old_events, audit_log.forget_old, inbound.forget_old):
            while forget(limit=5000):
                pass


def run_retention() -> None:
    """The retention jobs (the outbox's, the audit log's in the minute's housekeeping) until they find
    nothing left, the clock 31 days on (past the outbox's default retention)."""
    from kit import clock
    from service.identity import audit_log
    from service.webhooks import retention
    from storage.db import connection
    from tasks import scheduler

    clock.advance(31 * 86400)
    with connection():
        while retention.forget_old_events(limit=5000):
            pass
        scheduler._ticks = 0
        scheduler.housekeeping()
        while audit_log.forget_old(limit=5000):
            pass


def poll_cpu(poll_round: Callable[[], None], settings: Any, emulator_pid: int, rounds: int = 30) -> dict[str, float]:
    """The CPU one inbox poll costs, in ms: this process (the worker's side: the sweep, the claim,
    the platform call's client, the read's transaction), the database's backends and Redis (`own`),
    and apart the emulator that stands for the platform (its own server's work, not the service's)."""
    meter = CpuMeter(database_url=settings.database_url, queue_url=settings.queue_url)
    pids = {"worker": os.getpid(), "emulator": emulator_pid}
    meter.start(pids)
    for _ in range(rounds):
        poll_round()
    spent = meter.stop(pids)
    polls = rounds * POLLED
    return {"own": round((spent["own"] - spent["emulator"]) / polls * 1000, 2),
            "worker": round(spent["worker"] / polls * 1000, 2), "database": round(spent["postgres"] / polls * 1000, 2),
            "redis": round(spent["redis"] / polls * 1000, 2), "emulator": round(spent["emulator"] / polls * 1000, 2)}


STATEMENTS: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0])  # SQL: [runs, seconds]


def time_statements() -> None:
    """With BENCH_TRACE, on SQLite: every connection opened from now on times each statement it
    runs in this process, into `STATEMENTS`."""
    import sqlite3

    class TimedCursor(sqlite3.Cursor):
        def execute(self, sql: str, parameters: Any = ()) -> Any:  # type: ignore[override]
            began = time.perf_counter()
            try:
                return super().execute(sql, parameters)
            finally:
                STATEMENTS[sql][0] += 1
                STATEMENTS[sql][1] += time.perf_counter() - began

    class TimedConnection(sqlite3.Connection):
        def cursor(self, factory: Any = TimedCursor) -> Any:  # type: ignore[override]
            return super().cursor(factory)

        def execute(self, sql: str, parameters: Any = ()) -> Any:  # type: ignore[override]
            return self.cursor().execute(sql, parameters)

    opened = sqlite3.connect
    sqlite3.connect = lambda *args, **kwargs: opened(*args, factory=TimedConnection, **kwargs)  # type: ignore[assignment]


def trace(ops: dict[str, Callable[[], None]], own: Own) -> None:
    """With BENCH_TRACE (SQLite): each operation's costliest statements, where its time goes."""
    from service.posts import listing
    from storage.db import connection

    def month() -> None:
        with connection():
            listing.list_posts(actor=own.actor, from_=own.month[0], to=own.month[1])

    for name, op in {**ops, "posts_month_in_process": month}.items():
        STATEMENTS.clear()
        for _ in range(5):
            op()
        worst = sorted(STATEMENTS.items(), key=lambda item: -item[1][1])[:4]
        print(f"--- {name}", file=sys.stderr)
        for sql, (count, seconds) in worst:
            print(f"  {seconds / 5 * 1e3:7.2f} ms/op x{count / 5:.0f}  {sql[:400]}", file=sys.stderr)


def run_setup(name: str, env: dict[str, str], sizes: list[int], repeat: int, seconds: float,
              log: Callable[[str], None], only_ops: list[str] | None = None, unfenced: bool = False,
              autovacuum: bool = False
              ) -> tuple[dict[str, dict[str, dict[str, float]]], dict[str, int], dict[str, float]]:
    from kit.settings import Settings
    from storage.db import connection, db
    from switchboard.app import prepare

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**env, "SWITCHBOARD_BASE_URL": base, "SWITCHBOARD_SANDBOX": "1", "SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE": "1",
           "SWITCHBOARD_RATE_LIMIT_PER_MINUTE": "100000000", "SWITCHBOARD_YOUTUBE_DAILY_QUOTA": "100000000"}
    settings = Settings.from_env(env)
    if os.environ.get("BENCH_TRACE"):
        time_statements()
    prepare(settings)
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    receiver = Receiver()
    results: dict[str, dict[str, float]] = {}
    walls: dict[str, dict[str, float]] = {}
    with process([sys.executable, "-m", "switchboard", "serve", "--no-worker", "--port", str(port)],
                 f"{base}/v1/health", env=env, timeout=180) as server:
        own = Own(base, receiver, now)
        history = History(now)
        with connection():
            history.setup()
        ops = operations(own, settings)
        if only_ops:
            ops = {op: run for op, run in ops.items() if op == "control" or op in only_ops}
        fold = None if unfenced else (lambda: fold_wal(settings.database_url))
        meter = CpuMeter(database_url=settings.database_url, queue_url=settings.queue_url)
        pids = {"bench": os.getpid(), "api": server.pid}
        for size in sizes:
            loaded_at = dt.datetime.now(dt.UTC)
            with connection():
                took = history.grow_to(size)
            drain_retention()
            if autovacuum:
                waited = await_autovacuum(settings.database_url, loaded_at)
                log(f"{name}: history of {size:,} rows loaded ({took:.0f} s), autovacuum done {waited:.0f} s "
                    "later; measuring")
            else:
                vacuum(settings.database_url)
                log(f"{name}: history of {size:,} rows loaded ({took:.0f} s), vacuumed by hand; measuring")
            results[size_label(size)], walls[size_label(size)] = measure(ops, repeat, meter, pids, seconds, fold)
            log(f"{name} {size_label(size)}: CPU " + ", ".join(f"{op} {us / 1000:.2f} ms"
                                                               for op, us in results[size_label(size)].items()))
            log(f"{name} {size_label(size)}: wall " + ", ".join(f"{op} {us / 1000:.2f} ms"
                                                                for op, us in walls[size_label(size)].items()))
            if any(VACUUMED.values()):
                log(f"{name} {size_label(size)}: autovacuum's CPU while each was counted (not in its figure) "
                    + ", ".join(f"{op} {us / 1000:.2f} ms" for op, us in VACUUMED.items() if us))
        if FOREIGN_DELIVERIES:
            log(f"{name}: the webhook's dispatch also found other workspaces' events: {dict(FOREIGN_DELIVERIES)}")
            FOREIGN_DELIVERIES.clear()
        polls_cpu = poll_cpu(ops["poll_round"], settings, server.pid) if "poll_round" in ops else {}
        log(f"{name}: CPU a poll {polls_cpu}")
        if os.environ.get("BENCH_TRACE"):
            trace(ops, own)
        if not os.environ.get("BENCH_KEEP"):  # kept as measured, to look into
            run_retention()
        after = rows_by_table()
    if not db.is_closed():
        db.close()
    return {"cpu": results, "wall": walls}, after, polls_cpu


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1e4,1e5,1e6", help="sizes of history, comma-separated (1e4,1e5)")
    parser.add_argument("--repeat", type=int, default=15, help="runs of each operation per size (the median)")
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="at least this long running each operation for its CPU time, per size")
    parser.add_argument("--only", choices=("sqlite", "postgresql"))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--ops", default="", help="only these operations, comma-separated (the control always)")
    parser.add_argument("--unfenced", action="store_true",
                        help="SQLite: no WAL checkpoint around each operation's CPU count (the method before it)")
    args = parser.parse_args()
    sizes = parse_sizes(args.sizes)
    only = [op for op in args.ops.split(",") if op.strip()]
    database_url = os.environ.get("SWITCHBOARD_DATABASE_URL", "")
    queue_url = os.environ.get("SWITCHBOARD_QUEUE_URL", "")
    setups = ["sqlite"]
    if database_url.startswith("postgres") and queue_url:
        setups.append("postgresql")
    if args.only:
        setups = [setup for setup in setups if setup == args.only]

    def log(line: str) -> None:
        print(line, file=sys.stderr if args.json else sys.stdout, flush=True)

    operations_out: dict[str, dict[str, dict[str, Any]]] = {}
    retained: dict[str, dict[str, int]] = {}
    poll_costs: dict[str, dict[str, float]] = {}
    for setup in setups:
        data_dir = str(Path(temp_dir()) / "data")
        if setup == "sqlite":
            results, retained[setup], poll_costs[setup] = run_setup(setup, embedded_env(data_dir), sizes,
                                                                    args.repeat, args.seconds, log, only, args.unfenced)
        else:
            with fresh_postgres(database_url) as fresh, deployment_autovacuum(database_url) as autovacuum:
                log("postgresql: " + ("autovacuum on, with docs/operations.md's settings, for the run" if autovacuum
                                      else "autovacuum left as the server has it; VACUUM ANALYZE after each load"))
                env = embedded_env(data_dir, SWITCHBOARD_DATABASE_URL=fresh, SWITCHBOARD_QUEUE_URL=queue_url)
                results, retained[setup], poll_costs[setup] = run_setup(setup, env, sizes, args.repeat,
                                                                        args.seconds, log, only, args.unfenced,
                                                                        autovacuum)
                from storage.db import db

                if hasattr(db.obj, "close_all"):
                    db.obj.close_all()
        shutil.rmtree(Path(data_dir).parent, ignore_errors=True)  # up to a gigabyte of SQLite at 1e6
        first, last = size_label(sizes[0]), size_label(sizes[-1])
        cpu, wall = results["cpu"], results["wall"]
        for op in cpu[first]:
            entry: dict[str, Any] = operations_out.setdefault(op, {}).setdefault(setup, {})
            for label, values in cpu.items():
                entry[label] = values[op]
            entry["growth"] = round(cpu[last][op] / cpu[first][op], 2)
            # The same, divided by the baseline's growth in this run (the machine's load between sizes).
            entry["growth_vs_control"] = round(entry["growth"] / (cpu[last]["control"] / cpu[first]["control"]), 2)
            entry["wall"] = {label: values[op] for label, values in wall.items()}
            entry["wall"]["growth"] = round(wall[last][op] / wall[first][op], 2)
    report = {"operations": operations_out, "rows_after_retention": retained, "poll_cpu_ms": poll_costs}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    labels = [size_label(size) for size in sizes]
    print(f"\n{'operation':18} {'setup':11} " + " ".join(f"{label:>10}" for label in labels)
          + f" {'growth':>8} {'÷ctl':>6} {'wall':>6}   (CPU µs of every process; growth = {labels[-1]} / "
          f"{labels[0]}, goal <= 1.3; ÷ctl: divided by the baseline's; wall: the median wall time's growth)")
    for op, by_setup in operations_out.items():
        for setup, entry in by_setup.items():
            print(f"{op:18} {setup:11} " + " ".join(f"{entry[label]:10.0f}" for label in labels)
                  + f" {entry['growth']:8.2f} {entry['growth_vs_control']:6.2f} {entry['wall']['growth']:6.2f}")
    print("\nCPU one inbox poll costs, ms (own: worker + database + Redis; the emulator apart; goal own <= 6):")
    for setup, costs in poll_costs.items():
        print(f"  {setup}: " + ", ".join(f"{part} {value}" for part, value in costs.items()))
    print("\nrows by table after retention (the clock 31 days on: events past 30 days, audit past 400 gone):")
    for setup, counts in retained.items():
        print(f"  {setup}: " + ", ".join(f"{table} {count:,}" for table, count in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
