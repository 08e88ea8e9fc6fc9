"""The media library: list a workspace's media, delete one, and import one from an https URL.

An import is for callers that cannot PUT bytes (an MCP assistant, a CSV row's `mediaUrls`): the
service fetches the URL itself through the outbound-URL guard (`kit.net`: public addresses
only unless the operator allows private ones, no redirects, no proxies), streams at most
`media_max_bytes` to the data dir, and takes the type from the bytes (magic numbers), never from
the URL or the answer's `Content-Type`. No transaction is open while it fetches.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import secrets
import ssl
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

import httpx2

from kit import clock, ids, local_ca, net, tokens
from kit.errors import Conflict, FieldProblem, NotFound, ValidationFailed
from kit.pagination import DEFAULT_LIMIT, Page
from kit.shapes import is_https_url
from service.common import audit, events
from service.common.configured import Configured
from service.identity.auth import Actor
from service.media import ops as media
from service.media.shapes import MediaRecord
from storage.db import connection, db
from storage.models import Media, Post, PostTarget

settings = Configured(__name__)  # handed in by the composition root (wire)

IMPORT_TIMEOUT_SECONDS = 30.0
# Posts that will still fetch their media: a media they name cannot go.
PENDING_POST_STATUSES = ("scheduled", "publishing")


def list_media(*, actor: Actor, page: int | None = None, limit: int | None = None) -> Page:
    query = Media.select().where(Media.workspace == actor.workspace_id, Media.status == "complete")
    page = page or 1
    limit = limit or DEFAULT_LIMIT
    total = query.count()
    rows = list(query.order_by(Media.created_at.desc(), Media.id.desc()).paginate(page, limit))
    return Page(MediaRecord, [media.record(row) for row in rows], page, limit, total)


def _users(workspace_id: str, media_id: str) -> list[str]:
    """Posts not yet live that name the media (in `mediaIds` or as a YouTube thumbnail)."""
    using = []
    for post in Post.select(Post.id, Post.media_ids).where(Post.workspace == workspace_id,
                                                          Post.status.in_(PENDING_POST_STATUSES)):
        if media_id in (post.media_ids or []):
            using.append(post.id)
    thumbnails = (PostTarget.select(PostTarget.post, PostTarget.options).join(Post)
                  .where(PostTarget.workspace == workspace_id, Post.status.in_(PENDING_POST_STATUSES)))
    using += [t.post_id for t in thumbnails if (t.options or {}).get("thumbnailMediaId") == media_id]
    return sorted(set(using))


def delete(*, actor: Actor, media_id: str) -> None:
    """Delete a media and its bytes; 409 while a scheduled (or publishing) post uses it."""
    actor.require_write()
    with db.atomic():
        row = Media.get_or_none(Media.id == media_id, Media.workspace == actor.workspace_id,
                                Media.status == "complete")
        if row is None:
            raise NotFound("No media with that id.")
        using = _users(actor.workspace_id, media_id)
        if using:
            raise Conflict(f"The media is used by a post that is not published yet ({', '.join(using[:5])}); "
                           "delete or change the post first.")
        row.delete_instance()
        audit.record(actor, "media.deleted", target=("media", media_id), details={"filename": row.filename})
    with contextlib.suppress(FileNotFoundError):
        media.file_path(media_id).unlink()


# -- import from a URL -----------------------------------------------------------------------------
def _filename(url: str) -> str:
    name = PurePosixPath(unquote(urlsplit(url).path)).name
    return (name or "imported")[:255]


def _client() -> httpx2.Client:
    current = settings()
    bundle = local_ca.ca_path(current.data_dir) if current.webhook_allow_private else None
    return net.guarded_client(
        timeout=IMPORT_TIMEOUT_SECONDS, allow_private=current.webhook_allow_private,
        extra_ca_bundle=current.webhook_ca_bundle,
        local_ca_bundle=str(bundle) if bundle is not None and bundle.exists() else None,
        user_agent="Switchboard-Media/1.0", max_connections=4)


def _refused(message: str, field: str) -> ValidationFailed:
    return ValidationFailed(f"The media could not be imported: {message}",
                            details=[FieldProblem(field, message)])


def _fetch(url: str, media_id: str, field: str) -> tuple[int, str, str]:
    """Stream the URL's body to the media's part file: (size, sha256, sniffed type)."""
    limit = settings().media_max_bytes
    path = media.part_path(media_id)
    digest = hashlib.sha256()
    size = 0
    head = b""
    try:
        with _client() as client, net.stream_within(client, "GET", url, seconds=IMPORT_TIMEOUT_SECONDS) as answer:
            if answer.status_code != 200:
                raise _refused(f"the URL answered HTTP {answer.status_code}"
                               + (" (redirects are not followed)" if 300 <= answer.status_code < 400 else ""), field)
            declared = answer.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                raise _refused(f"the file is over the {limit}-byte limit", field)
            with path.open("wb") as out:
                for chunk in answer.iter_bytes():
                    size += len(chunk)
                    if size > limit:
                        raise _refused(f"the file is over the {limit}-byte limit", field)
                    if len(head) < 64:
                        head += chunk[:64 - len(head)]
                    digest.update(chunk)
                    out.write(chunk)
    except net.AddressRefused as refused:
        raise _refused(refused.message, field) from None
    except (httpx2.TimeoutException, net.DeadlinePassed):
        raise _refused(f"no complete answer within {IMPORT_TIMEOUT_SECONDS:g} s", field) from None
    except (httpx2.HTTPError, httpx2.InvalidURL, ssl.SSLError, OSError, UnicodeError):
        raise _refused("the URL could not be fetched (connection or TLS failure)", field) from None
    finally:
        if size == 0 or size > limit:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    found = media.sniff(head)
    if found is None or found not in media.ALLOWED_TYPES:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        raise _refused("the bytes are of no supported type (JPEG, PNG, GIF, WebP, MP4, QuickTime, WebM)", field)
    return size, digest.hexdigest(), found


def fetch_into_library(*, workspace_id: str, url: str, field: str = "url", actor: Actor | None = None) -> Media:
    """Fetch `url` (outside any transaction) and store it as a completed media of the workspace;
    `media.uploaded` is written with it, and the audit row of `actor` when one is given (an import
    of posts records its own). Refusals name `field`."""
    if not is_https_url(url) or len(url) > 2048:
        raise _refused("must be an absolute https URL of at most 2048 characters", field)
    media_id = ids.new_id("med")
    size, sha256, content_type = _fetch(url, media_id, field)
    media.part_path(media_id).replace(media.file_path(media_id))
    moment = clock.now()
    with connection(), db.atomic():
        # The token column is unique and an import never had an upload token: the hash of a random one.
        row = Media.create(id=media_id, workspace=workspace_id, token_hash=tokens.sha256_hex(secrets.token_hex(32)),
                           filename=_filename(url), content_type=content_type, size=size, received_bytes=size,
                           sha256=sha256, status="complete", expires_at=moment + dt.timedelta(seconds=1),
                           completed_at=moment, created_at=moment, updated_at=moment)
        events.emit(workspace_id=workspace_id, type="media.uploaded", data=media.record(row).dump())
        if actor is not None:  # the file's name only: a signed URL's query is a secret
            audit.record(actor, "media.imported", target=("media", media_id), details={"filename": row.filename})
    return row


def max_bytes() -> int:
    """The largest file the service takes, by any way in."""
    return settings().media_max_bytes


def store_bytes(*, actor: Actor, filename: str, content_type: str, data: bytes, field: str = "data") -> MediaRecord:
    """A file the caller holds (an MCP assistant's `upload_media`), as a completed media: its type is
    read from the bytes and must be the declared one, as a completed upload's must. The file is
    written before the row's short transaction, never inside it."""
    actor.require_write()
    limit = settings().media_max_bytes
    if len(data) > limit:
        raise _refused(f"the file is over the {limit}-byte limit", field)
    found = media.sniff(data[:64])
    if found is None or found not in media.ALLOWED_TYPES:
        raise _refused("the bytes are of no supported type (JPEG, PNG, GIF, WebP, MP4, QuickTime, WebM)", field)
    if found != content_type:
        raise ValidationFailed("The file does not match what was declared.", details=[
            FieldProblem("contentType", f"{content_type} was declared and the bytes are {found}")])
    media_id = ids.new_id("med")
    path = media.part_path(media_id)
    path.write_bytes(data)
    path.replace(media.file_path(media_id))
    moment = clock.now()
    try:
        with connection(), db.atomic():
            row = Media.create(id=media_id, workspace=actor.workspace_id,
                               token_hash=tokens.sha256_hex(secrets.token_hex(32)), filename=filename,
                               content_type=found, size=len(data), received_bytes=len(data),
                               sha256=hashlib.sha256(data).hexdigest(), status="complete",
                               expires_at=moment + dt.timedelta(seconds=1), completed_at=moment,
                               created_at=moment, updated_at=moment)
            done = media.record(row)
            events.emit(workspace_id=actor.workspace_id, type="media.uploaded", data=done.dump())
            audit.record(actor, "media.uploaded", target=("media", media_id), details={"filename": filename})
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            media.file_path(media_id).unlink()
        raise
    return done


def import_url(*, actor: Actor, url: str) -> MediaRecord:
    actor.require_write()
    return media.record(fetch_into_library(workspace_id=actor.workspace_id, url=url, actor=actor))
