"""Media uploads: a token, the raw bytes streamed to the data dir, then completion.

1. `create_upload` stores the declared name, type and size with a random token kept only as its
   SHA-256, valid for `upload_ttl_seconds`; the answer's `uploadUrl` carries the token (like a
   pre-signed URL: the token is the credential, so any HTTP client can PUT to it).
2. `receive` (the PUT) streams the bytes to `<data dir>/media/<id>` in chunks, counting and hashing
   as they come, refusing more than `media_max_bytes`; it never holds the file in memory and is not
   subject to the 1 MiB JSON limit.
3. `complete` checks the received size against the declared one and the type read from the bytes
   (magic numbers, never the file's name) against the declared type, then emits `media.uploaded`.
   Completing twice answers the same media; concurrent completions take turns on the row (a lock
   on PostgreSQL, the write lock on SQLite), so the file is moved once and the others read the
   first one's answer.

One PUT at a time per token, across processes: a PUT claims the row (`status` uploading →
receiving, with `updated_at` as its lease, renewed while the bytes come) and writes to a file of its
own, moved into place only if its claim still holds when it ends. A second PUT, or a completion,
meanwhile → 409 `upload_in_progress`. A claim whose process died lapses after `PUT_LEASE`.

A completed media is served at `<base URL>/media/<id>/<signature>`: platforms fetch it from there
(Instagram, TikTok's pull-from-URL, Facebook, Telegram), so the URL needs no key but cannot be
guessed (an HMAC of the id with a key derived from the secret key). Uploads never completed are
removed by a periodic job once they expire.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import hmac
import logging
import secrets
from pathlib import Path

from kit import clock, crypto, files, ids, tokens
from kit.errors import Conflict, FieldProblem, NotFound, PayloadTooLarge, ValidationFailed
from service.common import audit, events
from service.common.configured import Configured
from service.identity.auth import Actor
from service.media.shapes import MediaRecord, Upload
from storage.db import db, is_postgres
from storage.models import Media

settings = Configured(__name__)  # handed in by the composition root (wire)

log = logging.getLogger("switchboard.media")

TOKEN_PREFIX = "upl_"  # noqa: S105 - a prefix, not a secret
ALLOWED_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp",
                 "video/mp4", "video/quicktime", "video/webm")
# The same, as a person names them (a refused upload says what would be taken).
ACCEPTED = "a JPEG, PNG, GIF or WebP image, or an MP4, QuickTime or WebM video"


def sniff(head: bytes) -> str | None:
    """The content type the first bytes of a file prove, or None."""
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head[4:8] == b"ftyp":
        return "video/quicktime" if head[8:12] == b"qt  " else "video/mp4"
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "video/webm"
    return None


def media_dir() -> Path:
    path = settings().data_dir / "media"
    files.private_dir(path, tighten=False)
    return path


def file_path(media_id: str) -> Path:
    return media_dir() / media_id


def signature(media_id: str, secret_key: str | None = None) -> str:
    key = crypto.derive_key(secret_key or settings().secret_key, b"media-url")
    return hmac.new(key, media_id.encode(), hashlib.sha256).hexdigest()[:32]


def public_url(media_id: str) -> str:
    return f"{settings().base_url}/media/{media_id}/{signature(media_id)}"


def record(media: Media) -> MediaRecord:
    return MediaRecord.model_validate(dict(
        id=media.id, media_id=media.id, filename=media.filename, content_type=media.content_type, size=media.size,
        sha256=media.sha256 or "", url=public_url(media.id), created_at=media.created_at))


# -- the three steps -----------------------------------------------------------------------------
def create_upload(*, actor: Actor, filename: str, content_type: str, size: int) -> Upload:
    actor.require_write()
    problems = []
    if content_type not in ALLOWED_TYPES:
        problems.append(FieldProblem("contentType", "must be one of: " + ", ".join(ALLOWED_TYPES)))
    limit = settings().media_max_bytes
    if size > limit:
        problems.append(FieldProblem("size", f"must be at most {limit} bytes"))
    if problems:
        raise ValidationFailed("Some fields are not valid.", details=problems)
    token = TOKEN_PREFIX + secrets.token_hex(32)
    moment = clock.now()
    expires = moment + dt.timedelta(seconds=settings().upload_ttl_seconds)
    Media.create(id=ids.new_id("med"), workspace=actor.workspace_id, token_hash=tokens.sha256_hex(token),
                 filename=filename, content_type=content_type, size=size, expires_at=expires,
                 created_at=moment, updated_at=moment)
    return Upload.model_validate(dict(token=token, expires_at=expires,
                                      upload_url=f"{settings().base_url}/v1/media/uploads/{token}"))


def _by_token(token: str, *, workspace_id: str | None = None) -> Media:
    media = Media.get_or_none(Media.token_hash == tokens.sha256_hex(token)) if token.startswith(TOKEN_PREFIX) else None
    if media is None or (workspace_id is not None and media.workspace_id != workspace_id):
        raise NotFound("No upload with that token.")
    if media.status != "complete" and media.expires_at <= clock.now():
        raise NotFound("The upload has expired; start a new one.")
    return media


def open_upload(token: str) -> Media:
    """The upload a PUT writes to (404 unknown, expired or already completed)."""
    media = _by_token(token)
    if media.status == "complete":
        raise NotFound("This upload is completed; its bytes cannot change.")
    return media


def part_path(media_id: str) -> Path:
    return media_dir() / f"{media_id}.part"


PUT_LEASE = dt.timedelta(seconds=120)
RENEW_EVERY_SECONDS = 30.0


def _in_progress() -> Conflict:
    return Conflict("Another upload of bytes to this token is in progress; wait for it to end.",
                    code="upload_in_progress")


def claim_put(token: str) -> tuple[str, dt.datetime, Path]:
    """Claim the upload for one PUT (in the caller's short transaction): its media id, the claim's
    mark (to renew and finish it with) and the file this PUT writes. 409 while another PUT holds it."""
    media = open_upload(token)
    moment = clock.now()
    claimed = Media.update(status="receiving", updated_at=moment).where(
        Media.id == media.id,
        (Media.status == "uploading") | ((Media.status == "receiving") & (Media.updated_at < moment - PUT_LEASE)),
    ).execute()
    if not claimed:
        raise _in_progress()
    return media.id, moment, media_dir() / f"{media.id}.{secrets.token_hex(8)}.part"


def renew_put(media_id: str, mark: dt.datetime) -> dt.datetime:
    """Extend a PUT's claim while its bytes still come; raises `upload_in_progress` if it lapsed and
    another PUT took the upload meanwhile."""
    moment = clock.now()
    if not Media.update(updated_at=moment).where(Media.id == media_id, Media.status == "receiving",
                                                 Media.updated_at == mark).execute():
        raise _in_progress()
    return moment


def finish_put(media_id: str, mark: dt.datetime, written: Path, *, size: int, sha256: str) -> None:
    """The PUT's bytes become the upload's (in the caller's transaction), if its claim still holds."""
    if not Media.update(status="uploading", received_bytes=size, sha256=sha256, updated_at=clock.now()).where(
            Media.id == media_id, Media.status == "receiving", Media.updated_at == mark).execute():
        raise _in_progress()
    written.replace(part_path(media_id))


def release_put(media_id: str, mark: dt.datetime) -> None:
    """A PUT that failed gives its claim back; the bytes received before it stay as they were."""
    Media.update(status="uploading").where(Media.id == media_id, Media.status == "receiving",
                                           Media.updated_at == mark).execute()


def complete(*, actor: Actor, token: str) -> MediaRecord:
    actor.require_write()
    media = _by_token(token, workspace_id=actor.workspace_id)
    if is_postgres():
        # Concurrent completions take turns here; the next one finds the first one's answer.
        media = Media.select().where(Media.id == media.id).for_update().get()
    if media.status == "complete":
        return record(media)
    if media.status == "receiving" and media.updated_at >= clock.now() - PUT_LEASE:
        raise _in_progress()
    path = part_path(media.id)
    problems = []
    if not path.exists() or media.received_bytes != media.size or path.stat().st_size != media.size:
        got = path.stat().st_size if path.exists() else 0
        problems.append(FieldProblem("size", f"{media.size} bytes were declared and {got} received"))
    head = path.read_bytes()[:64] if path.exists() else b""
    found = sniff(head)
    if found != media.content_type:
        problems.append(FieldProblem("contentType", f"{media.content_type} was declared and the bytes are "
                                     f"{found or 'of no supported type'}"))
    if problems:
        raise ValidationFailed("The uploaded file does not match what was declared.", details=problems)
    path.replace(file_path(media.id))
    moment = clock.now()
    media.status = "complete"
    media.completed_at = moment
    media.updated_at = moment
    media.save()
    done = record(media)
    events.emit(workspace_id=media.workspace_id, type="media.uploaded", data=done.dump())
    audit.record(actor, "media.uploaded", target=("media", media.id), details={"filename": media.filename})
    return done


def get(*, actor: Actor, media_id: str) -> MediaRecord:
    media = Media.get_or_none(Media.id == media_id, Media.workspace == actor.workspace_id, Media.status == "complete")
    if media is None:
        raise NotFound("No media with that id.")
    return record(media)


def completed(workspace_id: str, media_ids: list[str]) -> dict[str, Media]:
    rows = Media.select().where(Media.id.in_(media_ids), Media.workspace == workspace_id, Media.status == "complete")
    return {row.id: row for row in rows}


def servable(media_id: str, given: str) -> Media | None:
    """The media a public URL names, if its signature is right (by any of the secret keys: a URL a
    platform was given before a key rotation still serves)."""
    if not any(hmac.compare_digest(signature(media_id, key), given) for key in settings().secret_keys):
        return None
    return Media.get_or_none(Media.id == media_id, Media.status == "complete")


def forget_expired() -> int:
    """Remove uploads that expired before completion, rows and bytes (a periodic job)."""
    with db.atomic():
        moment = clock.now()
        # A PUT still receiving is left its lease's time to finish.
        stale = list(Media.select(Media.id).where(
            ((Media.status == "uploading") & (Media.expires_at <= moment))
            | ((Media.status == "receiving") & (Media.expires_at <= moment - PUT_LEASE))).limit(500))
        if stale:
            Media.delete().where(Media.id.in_([m.id for m in stale])).execute()
    for media in stale:
        for path in [part_path(media.id), *media_dir().glob(f"{media.id}.*.part")]:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    return len(stale)


def check_size(total: int) -> None:
    if total > settings().media_max_bytes:
        raise PayloadTooLarge(f"A media file is at most {settings().media_max_bytes} bytes.")
