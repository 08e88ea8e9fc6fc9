"""Posts imported from a CSV file: every row checked first, then all of them saved, or none.

A row is one post: `content`, `accounts` (account ids separated by spaces: its targets),
`scheduledFor` and `timezone` (as on `POST /v1/posts`; neither: a draft), `mediaUrls` (https URLs
separated by spaces, imported into the media library) and `firstComment` (each target's
`options.firstComment`). Rows are numbered from 1, the first row after the header.

Each row passes the same rules as `POST /v1/posts` (the same shape, the same per-platform checks),
with what they need loaded once for the whole file: the accounts, their channels, TikTok's options.
A dry run judges a media URL's kind by its extension and fetches nothing; the import then fetches
each URL once (outside any transaction), checks the rows again with the types read from the bytes,
and writes every post in one transaction, or removes what it fetched and saves nothing.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import io
from dataclasses import dataclass, field
from typing import Any

from kit import clock, ids, scheduling
from kit.errors import FieldProblem, ValidationFailed
from kit.shapes import is_https_url, parse
from service.common import audit, idempotency
from service.identity.auth import Actor
from service.media import library
from service.media import ops as media
from service.posts import checks, records
from service.posts.shapes import MAX_MEDIA, ImportCreated, ImportOutcome, ImportReport, PostIn
from storage import hot
from storage.db import connection, db, reading
from storage.models import Account, Media, Post, PostTarget

MAX_ROWS = 1000
CHUNK = 100  # rows an INSERT
COLUMNS = ("content", "accounts", "scheduledFor", "timezone", "mediaUrls", "firstComment")
VIDEO_EXTENSIONS = (".mp4", ".m4v", ".mov", ".webm")


class ImportRefused(ValidationFailed):
    """422 with the per-row report: `details` in the contract's envelope and `errors` by row."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__(f"{len({e['row'] for e in errors})} row(s) are not valid; nothing was imported.",
                         details=[FieldProblem(f"rows[{e['row']}].{e['field']}", e["message"]) for e in errors[:100]])
        self.errors = errors

    def body(self) -> dict[str, object]:
        out = super().body()
        out["error"]["errors"] = self.errors  # type: ignore[index]
        return out


@dataclass
class _Row:
    number: int
    values: dict[str, str]
    account_ids: list[str] = field(default_factory=list)
    media_urls: list[str] = field(default_factory=list)
    post: PostIn | None = None
    due: dt.datetime | None = None


def _file_problem(message: str) -> ValidationFailed:
    return ValidationFailed(message, details=[FieldProblem("body", message)])


def read_rows(raw: bytes | str) -> list[_Row]:
    """The file's rows by column name; a file that is not a CSV of these columns → 422 as a whole."""
    try:
        text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw.removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise _file_problem("The file is not UTF-8 text.") from None
    if "\x00" in text:
        raise _file_problem("The file holds a NUL character.")
    # The csv module refuses a cell over its field limit (128 KiB by default, one setting for the whole
    # process) as a parse error, which read as "not valid CSV": a cell may be as long as the file,
    # and a too-long value is the column's own rule to name (X's 280 characters, ...).
    if csv.field_size_limit() <= len(text):
        csv.field_size_limit(len(text) + 1)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise _file_problem("The file is empty: a header row (content, accounts, ...) is needed.")
        names = [name.strip() for name in header]
        unknown = [name for name in names if name not in COLUMNS]
        if unknown or len(set(names)) != len(names) or "content" not in names or "accounts" not in names:
            raise _file_problem("The header must name the columns content and accounts, and may name scheduledFor, "
                                "timezone, mediaUrls, firstComment (each once)"
                                + (f"; unknown: {', '.join(unknown[:5])}" if unknown else "") + ".")
        rows: list[_Row] = []
        for number, cells in enumerate(reader, start=1):
            if not any(cell.strip() for cell in cells):
                continue  # a blank line
            if len(rows) == MAX_ROWS:
                raise _file_problem(f"A file holds at most {MAX_ROWS} rows.")
            if len(cells) > len(names):
                rows.append(_Row(number, {"": "has more cells than the header has columns"}))
                continue
            rows.append(_Row(number, dict(zip(names, cells, strict=False))))
    except csv.Error:
        raise _file_problem("The file is not valid CSV (an unclosed quote?).") from None
    if not rows:
        raise _file_problem("The file has a header and no rows.")
    return rows


def _column_of(field_path: str) -> str:
    """A post's field (`targets[1].options.firstComment`) as the CSV column that holds it."""
    if field_path.endswith(".firstComment"):
        return "firstComment"
    if (field_path.startswith("targets") and field_path.endswith(".content")) or field_path == "content":
        return "content"
    if field_path.startswith("mediaIds"):
        return "mediaUrls"
    if field_path in ("scheduledFor", "timezone"):
        return field_path
    return "accounts"


def _shape(row: _Row, errors: list[dict[str, Any]]) -> None:
    """The row as a `PostIn` (the same rules as the API's body), or its errors."""
    def refuse(column: str, message: str) -> None:
        errors.append({"row": row.number, "field": column, "message": message})

    if "" in row.values:
        refuse("content", row.values[""])
        return
    values = row.values
    row.account_ids = values.get("accounts", "").split()
    row.media_urls = values.get("mediaUrls", "").split()
    if not row.account_ids:
        refuse("accounts", "name at least one account id")
    for url in row.media_urls:
        if not is_https_url(url) or len(url) > 2048:
            refuse("mediaUrls", f"{url[:80]!r} is not an absolute https URL")
    if len(row.media_urls) > MAX_MEDIA:
        refuse("mediaUrls", f"at most {MAX_MEDIA} URLs")
    comment = values.get("firstComment") or None
    body: dict[str, Any] = {
        "content": values.get("content", ""),
        "targets": [{"accountId": a, **({"options": {"firstComment": comment}} if comment else {})}
                    for a in row.account_ids[:posts_limit()]],
    }
    for name in ("scheduledFor", "timezone"):
        if values.get(name):
            body[name] = values[name]
    try:
        row.post = parse(PostIn, body)
    except ValidationFailed as refused:
        for problem in refused.details:
            refuse(_column_of(problem.field), problem.message)


def posts_limit() -> int:
    from service.posts.shapes import MAX_TARGETS

    return MAX_TARGETS


@dataclass
class _Guessed:
    """A media as a dry run imagines it from its URL (the import reads the real bytes)."""

    content_type: str
    size: int = 1


def _guess(url: str) -> _Guessed:
    path = url.split("?", 1)[0].lower()
    return _Guessed("video/mp4" if path.endswith(VIDEO_EXTENSIONS) else "image/jpeg")


class _Accounts:
    """The file's accounts, loaded once, with what each platform's check reads live (once each)."""

    def __init__(self, actor: Actor, rows: list[_Row]) -> None:
        wanted = sorted({a for row in rows for a in row.account_ids})
        with reading():
            self.by_id = {a.id: a for a in Account.select().where(Account.id.in_(wanted),
                                                                  Account.workspace == actor.workspace_id)}
        for account in self.by_id.values():
            actor.require_profile(account.profile_id)
        self.live: dict[str, dict[str, Any] | None] = {}

    def live_options(self, account: Account) -> dict[str, Any] | None:
        if account.id not in self.live:
            self.live[account.id] = checks.live_options(account)
        return self.live[account.id]


def _check_row(row: _Row, accounts: _Accounts, items: list[Any], errors: list[dict[str, Any]]) -> None:
    post = row.post
    assert post is not None
    due, problems = scheduling.due_at(post.scheduled_for, post.timezone)
    row.due = due
    seen: set[str] = set()
    for index, target in enumerate(post.targets):
        account = accounts.by_id.get(target.account_id)
        if account is None or account.status != "connected":
            what = "is not an account of this workspace" if account is None else "is disconnected"
            problems.append(FieldProblem(f"targets[{index}].accountId", f"{target.account_id} {what}"))
            continue
        if account.id in seen:
            problems.append(FieldProblem(f"targets[{index}].accountId", f"{account.id} is named twice"))
            continue
        seen.add(account.id)
        text = target.content if target.content is not None else post.content
        options = dict(target.options) if target.options is not None else {}
        for problem in checks.check_target(index, account, text, items, options, accounts.live_options(account)):
            message = problem.message
            if problem.field.startswith("targets") or problem.field == "mediaIds":
                message = f"{account.id} ({account.platform}): {message}"
            problems.append(FieldProblem(problem.field, message))
    for problem in problems:
        errors.append({"row": row.number, "field": _column_of(problem.field), "message": problem.message})


def _validate(actor: Actor, rows: list[_Row], media_of: dict[str, Any] | None) -> list[dict[str, Any]]:
    errors: list[dict[str, Any]] = []
    for row in rows:
        _shape(row, errors)
    accounts = _Accounts(actor, rows)
    for row in rows:
        if row.post is None:
            continue
        items = [media_of[u] if media_of is not None else _guess(u) for u in row.media_urls]
        _check_row(row, accounts, items, errors)
    return errors


def _fetch_all(workspace_id: str, rows: list[_Row]) -> tuple[dict[str, Media], list[dict[str, Any]]]:
    fetched: dict[str, Media] = {}
    errors: list[dict[str, Any]] = []
    for row in rows:
        for url in row.media_urls:
            if url in fetched:
                continue
            try:
                fetched[url] = library.fetch_into_library(workspace_id=workspace_id, url=url, field="mediaUrls")
            except ValidationFailed as refused:
                errors.append({"row": row.number, "field": "mediaUrls", "message": refused.details[0].message})
    return fetched, errors


def _forget(fetched: dict[str, Media]) -> None:
    """An import that saves nothing keeps none of the media it fetched either."""
    with connection(), db.atomic():
        Media.delete().where(Media.id.in_([m.id for m in fetched.values()])).execute()
    for row in fetched.values():
        with contextlib.suppress(FileNotFoundError):
            media.file_path(row.id).unlink()


def _with_defaults(model: type[Post] | type[PostTarget], values: dict[str, Any]) -> dict[str, Any]:
    """The model's Python-side defaults for the columns not given (a built INSERT skips peewee's)."""
    for name, column in model._meta.fields.items():
        if name not in values and column.default is not None:
            values[name] = column.default() if callable(column.default) else column.default
    return values


def _write(actor: Actor, rows: list[_Row], media_of: dict[str, Media]) -> list[str]:
    moment = clock.now()
    post_rows: list[dict[str, Any]] = []
    target_rows: list[dict[str, Any]] = []
    scheduled: set[str] = set()
    with reading():
        accounts = {a.id: a for a in Account.select().where(
            Account.id.in_(sorted({a for row in rows for a in row.account_ids})))}
    for offset, row in enumerate(rows):
        post = row.post
        assert post is not None
        post_id = ids.new_id("post")
        status = "scheduled" if row.due is not None else "draft"
        # One microsecond apart: the rows keep the file's order, and a retry under the same
        # Idempotency-Key finds the whole batch from its first post (`created_by_import`).
        created = moment + dt.timedelta(microseconds=offset)
        post_rows.append(_with_defaults(Post, {"id": post_id, "workspace": actor.workspace_id, "content": post.content,
                          "media_ids": [media_of[u].id for u in row.media_urls], "status": status,
                          "scheduled_for": row.due, "timezone": post.timezone, "source": "service",
                          "created_at": created, "updated_at": created}))
        for position, target in enumerate(post.targets):
            account = accounts[target.account_id]
            target_rows.append(_with_defaults(PostTarget, {
                "id": ids.new_id("pt"), "post": post_id, "workspace": actor.workspace_id, "account": account.id,
                "profile_id": account.profile_id, "platform": account.platform, "position": position,
                "content": None, "options": dict(target.options) if target.options is not None else {},
                "status": "queued", "next_attempt_at": row.due, "attempts": 0, "created_at": created,
                "updated_at": created}))
        if status == "scheduled":
            scheduled.add(post_id)
    with db.atomic():
        # Built SQL, cached per chunk size (peewee's own INSERT builder cost seconds for a 1,000-row file).
        for start in range(0, len(post_rows), CHUNK):
            hot.insert_many(Post, post_rows[start:start + CHUNK])
        for start in range(0, len(target_rows), CHUNK):
            hot.insert_many(PostTarget, target_rows[start:start + CHUNK])
        # The events carry GET's shape, made from the rows just written (not read back).
        by_post: dict[str, list[PostTarget]] = {}
        for values in target_rows:
            by_post.setdefault(values["post"], []).append(PostTarget(**values))
        for values in post_rows:
            if values["id"] in scheduled:
                records.emit(Post(**values), "post.scheduled", by_post.get(values["id"], []))
        idempotency.attach(post_rows[0]["id"])
        # One row for the import, naming its first post (the others follow it in order).
        audit.record(actor, "posts.imported", target=("post", post_rows[0]["id"]), details={"posts": len(post_rows)})
    return [str(row["id"]) for row in post_rows]


def import_csv(*, actor: Actor, csv_text: bytes | str, dry_run: bool | None = None) -> ImportReport | ImportCreated:
    """Check every row; a dry run answers the report and saves nothing; an import saves every row
    as a post (drafts, or scheduled at `scheduledFor`) or, if any row fails, nothing (422)."""
    if not dry_run:
        actor.require_write()
    rows = read_rows(csv_text)
    errors = _validate(actor, rows, None)
    if dry_run:
        bad = {e["row"] for e in errors}
        return ImportReport.model_validate(dict(rows=len(rows), valid=len(rows) - len(bad), errors=errors))
    if errors:
        raise ImportRefused(errors)
    fetched, errors = _fetch_all(actor.workspace_id, rows)
    if not errors and fetched:
        errors = _validate(actor, rows, fetched)  # again, with the types the bytes proved
    if errors:
        _forget(fetched)
        raise ImportRefused(errors)
    with connection():
        return ImportCreated(created=_write(actor, rows, fetched))


def created_by_import(*, actor: Actor, first_post_id: str) -> ImportCreated:
    """The posts an import made, from its first one (a retry of a request that died after saving)."""
    first = records.get_row(actor=actor, post_id=first_post_id)
    batch = (Post.select(Post.id).where(Post.workspace == actor.workspace_id, Post.created_at >= first.created_at,
                                        Post.created_at < first.created_at + dt.timedelta(microseconds=MAX_ROWS))
             .order_by(Post.created_at))
    return ImportCreated(created=[row.id for row in batch])


def import_for_tool(*, actor: Actor, csv: str, dry_run: bool = False) -> ImportOutcome:
    """`import_posts_csv`: one answer shape for both runs (a tool has one output schema)."""
    result = import_csv(actor=actor, csv_text=csv, dry_run=dry_run)
    if isinstance(result, ImportReport):
        return ImportOutcome.model_validate(dict(rows=result.rows, valid=result.valid, errors=result.errors,
                                                 created=[]))
    return ImportOutcome.model_validate(dict(rows=len(result.created), valid=len(result.created), errors=[],
                                             created=result.created))
