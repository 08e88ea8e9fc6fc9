"""Members, invitations and the audit log of the caller's workspace."""

from http_api.declare import op
from http_api.routing import Call
from kit.pagination import Page
from kit.shapes import PageQuery, page_of
from service.identity import audit_log, invitations, members
from service.identity.audit_shapes import AuditEntry, AuditQuery
from service.identity.member_shapes import (
    ChangeMember,
    CreateInvitation,
    Invitation,
    InvitationCreated,
    Member,
    MemberList,
    MemberRemoved,
)

_WHO = ("Owners and admins manage members (an admin up to `admin`, never an owner); with an API key, a "
        "read-write key of scope `full`. The last owner can be neither demoted nor removed.")


def list_members(call: Call) -> MemberList:
    return members.list_members(actor=call.actor)


def change_member(call: Call) -> Member:
    return members.change(actor=call.actor, user_id=call.path["userId"],
                          **{name: getattr(call.body, name) for name in call.body.model_fields_set})


def remove_member(call: Call) -> MemberRemoved:
    return members.remove(actor=call.actor, user_id=call.path["userId"])


def invite(call: Call) -> InvitationCreated:
    return invitations.invite(actor=call.actor, **dict(call.body))


def list_invitations(call: Call) -> Page:
    return invitations.list_invitations(actor=call.actor, **dict(call.query))


def revoke_invitation(call: Call) -> Invitation:
    return invitations.revoke(actor=call.actor, invitation_id=call.path["id"])


def audit(call: Call) -> Page:
    return audit_log.list_entries(actor=call.actor, **dict(call.query))


OPERATIONS = [
    op("GET", "/members", list_members, summary="List the workspace's members", tag="Members",
       operation_id="listMembers", answer=MemberList,
       description="A key limited to profiles sees the members whose profiles lie within its own."),
    op("PATCH", "/members/{userId}", change_member, summary="Change a member's role or profiles", tag="Members",
       operation_id="updateMember", body=ChangeMember, answer=Member, errors=(409,), description=_WHO),
    op("DELETE", "/members/{userId}", remove_member, summary="Remove a member (their sessions and grants end)",
       tag="Members", operation_id="removeMember", answer=MemberRemoved, errors=(409,), description=_WHO),
    op("POST", "/invitations", invite, summary="Invite someone by e-mail (the link is shown once)", tag="Members",
       operation_id="createInvitation", ok=201, body=CreateInvitation, answer=InvitationCreated, waits=True,
       description="A single-use link valid 7 days, e-mailed when SMTP is configured. " + _WHO),
    op("GET", "/invitations", list_invitations, summary="List invitations", tag="Members",
       operation_id="listInvitations", query=PageQuery, answer=page_of(Invitation)),
    op("DELETE", "/invitations/{id}", revoke_invitation, summary="Withdraw an invitation before it is used",
       tag="Members", operation_id="revokeInvitation", answer=Invitation, errors=(409,)),
    op("GET", "/audit-log", audit, summary="The audit log, newest first", tag="Audit log",
       operation_id="listAuditLog", query=AuditQuery, answer=page_of(AuditEntry),
       description="Every change and every sign-in with who did it. Owners and admins; keys of scope `full`."),
]
