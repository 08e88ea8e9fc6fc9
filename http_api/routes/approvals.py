"""Approvals of members' posts, and the workspace setting that asks for them."""

from typing import Annotated

from pydantic import Field

from http_api.declare import op
from http_api.routing import Call
from kit.shapes import Body, Record
from service.posts import approvals
from service.posts.shapes import Post, RejectPost


class WorkspaceSettings(Record):
    post_approval: bool = Field(description="A member's post to publish waits for an owner's or admin's approval.")


class ChangeSettings(Body):
    post_approval: Annotated[bool, Field(strict=True)]


def approve(call: Call) -> Post:
    return approvals.approve(actor=call.actor, post_id=call.path["id"])


def reject(call: Call) -> Post:
    return approvals.reject(actor=call.actor, post_id=call.path["id"], reason=call.body.reason)


def get_settings(call: Call) -> WorkspaceSettings:
    return WorkspaceSettings.model_validate(approvals.settings_of(actor=call.actor))


def change_settings(call: Call) -> WorkspaceSettings:
    return WorkspaceSettings.model_validate(approvals.set_approval(actor=call.actor,
                                                                   post_approval=call.body.post_approval))


OPERATIONS = [
    op("POST", "/posts/{id}/approve", approve, summary="Approve a post waiting for approval", tag="Posts",
       operation_id="approvePost", answer=Post, errors=(409,),
       description="Owners and admins (and workspace-wide read-write keys). It goes on as it would have: "
                   "published now, or at its time (now if that passed meanwhile). Not `pending_approval` → 409."),
    op("POST", "/posts/{id}/reject", reject, summary="Reject a post waiting for approval, with a reason",
       tag="Posts", operation_id="rejectPost", body=RejectPost, answer=Post, errors=(409,)),
    op("GET", "/settings", get_settings, summary="The workspace's settings", tag="Workspaces",
       operation_id="getSettings", answer=WorkspaceSettings),
    op("PATCH", "/settings", change_settings, summary="Change the workspace's settings (owners and admins)",
       tag="Workspaces", operation_id="updateSettings", body=ChangeSettings, answer=WorkspaceSettings),
]
