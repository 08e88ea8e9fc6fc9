"""Approvals of members' posts (the workspace's `postApproval` setting asks for them)."""



from http_api.declare import op
from http_api.routing import Call
from service.posts import approvals
from service.posts.shapes import Post, RejectPost


def approve(call: Call) -> Post:
    return approvals.approve(actor=call.actor, post_id=call.path["id"])


def reject(call: Call) -> Post:
    return approvals.reject(actor=call.actor, post_id=call.path["id"], reason=call.body.reason)


OPERATIONS = [
    op("POST", "/posts/{id}/approve", approve, summary="Approve a post waiting for approval", tag="Posts",
       operation_id="approvePost", answer=Post, errors=(409,),
       description="Owners and admins (and workspace-wide read-write keys). It goes on as it would have: "
                   "published now, or at its time (now if that passed meanwhile). Not `pending_approval` → 409."),
    op("POST", "/posts/{id}/reject", reject, summary="Reject a post waiting for approval, with a reason",
       tag="Posts", operation_id="rejectPost", body=RejectPost, answer=Post, errors=(409,)),
]
