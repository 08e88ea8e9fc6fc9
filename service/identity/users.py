"""People who sign in to the dashboard: e-mail and a password hashed with Argon2id."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from kit import clock, ids, scheduling
from kit.errors import Conflict, NotFound, ValidationFailed
from service.identity import sessions
from storage.db import db
from storage.models import User

_hasher = PasswordHasher()


@functools.cache
def _dummy_hash() -> str:
    """Verifying against this keeps an unknown e-mail as slow as a wrong password. Made on first
    use, not at import: one hash costs a third of a second."""
    return _hasher.hash("not a password anyone has")

MIN_PASSWORD_LENGTH = 8


def normalise_email(email: str) -> str:
    return email.strip().lower()


def hash_password(password: str) -> str:
    """The stored form of a new password. A third of a second by design: call it before opening the
    transaction that stores it (DESIGN rule 15)."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ValidationFailed.field("password", f"must be at least {MIN_PASSWORD_LENGTH} characters long")
    return _hasher.hash(password)


def create_user(*, email: str, password: str | None = None, password_hash: str | None = None,
                email_verified: bool = False) -> User:
    """A new user. Give `password_hash` (from `hash_password`, made before the transaction) where a
    transaction is open; `password` hashes here, for callers that hold none."""
    email = normalise_email(email)
    if "@" not in email or len(email) > 320:
        raise ValidationFailed.field("email", "must be an e-mail address")
    if password is not None:
        password_hash = hash_password(password)
    if User.select().where(User.email == email).exists():
        raise Conflict("A user with that e-mail already exists.")
    moment = clock.now()
    return User.create(
        id=ids.new_id("usr"),
        email=email,
        password_hash=password_hash,
        email_verified=email_verified,
        created_at=moment,
        updated_at=moment,
    )


def verify_password(*, email: str, password: str) -> User | None:
    """The user when the password is right, else None (in the same time either way).

    Call it with no transaction open: the hash takes a third of a second by design, and on SQLite a
    write transaction held meanwhile would stop every writer of the service (DESIGN rule 15). It
    reads, lets go, hashes, and writes an upgraded hash in a short transaction of its own."""
    user = User.get_or_none(User.email == normalise_email(email))
    stored = user.password_hash if user is not None and user.password_hash else _dummy_hash()
    try:
        _hasher.verify(stored, password)
    except (VerificationError, InvalidHashError):
        return None
    if user is None or not user.password_hash:
        return None
    if _hasher.check_needs_rehash(user.password_hash):
        upgraded = _hasher.hash(password)
        with db.atomic():  # only if no one changed the password meanwhile
            User.update(password_hash=upgraded).where(User.id == user.id,
                                                      User.password_hash == user.password_hash).execute()
    return user


def set_password(*, email: str, password: str) -> User:
    """A new password; every dashboard session of the person ends, in every process (a session
    opened with the old password, perhaps by someone else, must not outlive it). Hashes first, then
    writes in a transaction of its own: call it with none open."""
    password_hash = hash_password(password)
    with db.atomic():
        user = User.get_or_none(User.email == normalise_email(email))
        if user is None:
            raise NotFound("No user has that e-mail address.")
        user.password_hash = password_hash
        user.updated_at = clock.now()
        user.save()
        sessions.end_all(user_id=user.id)
    return user


def time_zone_of(user_id: str) -> str | None:
    """The IANA zone this person's times are shown in; None until their browser first told it."""
    found = User.select(User.time_zone).where(User.id == user_id).first()
    return found.time_zone if found is not None else None


def set_time_zone(*, user_id: str, name: str) -> str:
    """The person's choice of zone, kept once it is a real IANA zone; else a 422 naming `timeZone`."""
    name = name.strip()
    if len(name) > 64 or scheduling.zone(name) is None:
        raise ValidationFailed.field("timeZone", "must be an IANA time zone name, e.g. Europe/Lisbon")
    User.update(time_zone=name, updated_at=clock.now()).where(User.id == user_id).execute()
    return name


def adopt_time_zone(*, user_id: str, name: str) -> bool:
    """The zone a browser reports, kept only while the person has none: their own later choice is
    never overwritten by a browser somewhere else. An unknown name is ignored (False)."""
    name = name.strip()
    if len(name) > 64 or scheduling.zone(name) is None:
        return False
    changed = User.update(time_zone=name).where(User.id == user_id, User.time_zone.is_null()).execute()
    return bool(changed)


@dataclass(frozen=True)
class Linked:
    """Who an identity signs in as, or why not (`refusal`: words for the log, never an e-mail)."""

    user: User | None
    refusal: str | None = None
    joined: str | None = None  # the workspace an invitation let them into


def link_identity(*, subject: str, email: str | None, email_verified: bool,
                  invitation: str | None = None, ip: str | None = None) -> Linked:
    """The person this identity signs in as, linking it on first use; `refusal` when refused.

    A first sign-in links through a verified e-mail of an existing user, never creating a second
    one. With a live invitation (`invitation`, its link's token) for that very e-mail, the person
    is made a user (if new) and joins the workspace. Call it inside a transaction."""
    from service.identity import invitations  # the invitations' module signs people up through here

    user = User.get_or_none(User.oidc_subject == subject)
    if user is None:
        if not email:
            return Linked(None, "the identity provider gave no e-mail address")
        if not email_verified:
            return Linked(None, "the identity provider has not verified the e-mail address")
        user = User.get_or_none(User.email == normalise_email(email))
        invited = invitations.invited_email(invitation) if invitation else None
        if user is None and invited != normalise_email(email):
            return Linked(None, "no user has that e-mail address and no invitation for it was presented")
        if user is not None and user.oidc_subject and user.oidc_subject != subject:
            return Linked(None, "the e-mail's user is linked to another identity of the provider")
        if user is None:
            user = create_user(email=email, email_verified=True)
        user.oidc_subject = subject
        user.email_verified = True
        user.updated_at = clock.now()
        user.save()
    joined = None
    if invitation and invitations.invited_email(invitation) == user.email:
        joined = invitations.accept(invitation, user_id=user.id, ip=ip)
    return Linked(user, joined=joined)
