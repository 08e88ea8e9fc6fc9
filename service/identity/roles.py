"""A person's role in a workspace, and what each role may do.

`owner` > `admin` > `member` > `viewer`. The service asks `Actor.require_role` where a rule needs more
than the daily work (keys, webhooks, members, connecting accounts, the audit log), and a viewer acts
with read permission, so every write it tries is refused by the same `require_write` that holds a
read key. An API key has no role: it keeps its own scope and permission.
"""

from __future__ import annotations

from typing import Literal

Role = Literal["owner", "admin", "member", "viewer"]
ROLES: tuple[Role, ...] = ("owner", "admin", "member", "viewer")
_RANK = {"viewer": 0, "member": 1, "admin": 2, "owner": 3}

# A member or a viewer may be limited to some profiles; an owner or an admin acts on all of them.
LIMITABLE: frozenset[str] = frozenset({"member", "viewer"})


def at_least(role: str, needed: str) -> bool:
    return _RANK.get(role, -1) >= _RANK[needed]


def permission_of(role: str) -> str:
    """The permission a person's role gives them: a viewer reads, every other role reads and writes."""
    return "read" if role == "viewer" else "read-write"


def refusal(needed: str, role: str, what: str) -> str:
    """The words of a 403 for a role that may not do something: which role it needs."""
    higher = "" if needed == "owner" else f" (or {'owner' if needed == 'admin' else 'admin or owner'})"
    return f"To {what} you need the {needed} role{higher}; your role in this workspace is {role}."
