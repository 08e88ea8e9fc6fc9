"""The Messenger Platform that Instagram and Facebook share on the Graph core: DMs within the 24 h
window, button templates (title <= 20, at most 3, public http(s) URLs), private replies (one per
comment, within 7 days; Instagram's take text only), and comments and replies under the account's
own posts."""

from __future__ import annotations

import time
from typing import Any

from starlette.responses import Response

from platforms.emulator_kit.answer import JSONResponse
from platforms.emulator_kit.core import Call, EmulatorBase, bad_button_url
from platforms.emulator_kit.errors import graph_error
from platforms.emulator_kit.state import PRIVATE_REPLY_SECONDS, WINDOW_SECONDS, Account, Contact, random_token
from platforms.graph.emulator import EdgeRoute, as_obj, not_found, on_account, on_comment, on_post

TEXT_LIMITS = {"instagram": 1000, "facebook": 2000}
WINDOW_SUBCODE = {"instagram": 2534022, "facebook": 2018278}


class MessengerEmulator(EmulatorBase):
    def messenger_graph_edges(self) -> list[EdgeRoute]:
        both, ig, fb = ("instagram", "facebook"), ("instagram",), ("facebook",)
        return [
            EdgeRoute(both, "POST", ("messages",), on_account, self._messenger_send),
            EdgeRoute(both, "POST", ("comments",), on_post, self._comment_on_post),
            # A reply under a comment: `/replies` on Instagram, `/comments` on Facebook.
            EdgeRoute(ig, "POST", ("replies",), on_comment, self._comment_reply),
            EdgeRoute(fb, "POST", ("comments",), on_comment, self._comment_reply),
            EdgeRoute(ig, "POST", ("comments",), on_comment, self._other_platforms_reply),
            EdgeRoute(fb, "POST", ("replies",), on_comment, self._other_platforms_reply),
        ]

    @staticmethod
    def _other_platforms_reply(call: Call, account: Account, node: str) -> Response:
        return not_found(node, "post")

    # -- Messenger / Instagram messaging -----------------------------------------------------
    def _messenger_send(self, call: Call, account: Account, node: str) -> Response:
        params = call.params()
        recipient = as_obj(params.get("recipient"))
        message = as_obj(params.get("message"))
        platform = call.platform
        now = time.time()
        if not isinstance(recipient, dict) or not isinstance(message, dict):
            return graph_error(400, 100, "(#100) param recipient and message must be objects", 2018001)
        comment = None
        if "comment_id" in recipient:
            comment = account.comments.get(str(recipient["comment_id"]))
            if comment is None:
                return graph_error(400, 100, "(#100) Invalid comment_id", 2018292)
            if comment.private_replied:
                return graph_error(
                    400, 10, "(#10) A private reply has already been sent for this comment.", 2018108
                )
            if now - comment.created > PRIVATE_REPLY_SECONDS:
                return graph_error(
                    400, 10, "(#10) This message is sent outside of allowed window.", WINDOW_SUBCODE[platform]
                )
            to, contact_id = comment.id, comment.from_id
        else:
            contact_id = str(recipient.get("id", ""))
            contact = account.contacts.get(contact_id)
            if contact is None:
                return graph_error(
                    400, 100, "(#100) No matching user found", 2018001 if platform == "facebook" else 2534014
                )
            if contact.last_inbound is None or now - contact.last_inbound > WINDOW_SECONDS:
                return graph_error(
                    400, 10, "(#10) This message is sent outside of allowed window.", WINDOW_SUBCODE[platform]
                )
            to = contact_id
        text = message.get("text")
        attachment = message.get("attachment")
        if attachment is not None:
            refusal = self._template_refusal(platform, attachment, comment is not None)
            if refusal is not None:
                return graph_error(400, 100, refusal)
            text = attachment["payload"]["text"]
        elif not isinstance(text, str) or not text:
            return graph_error(400, 100, "(#100) The parameter message[text] is required", 2018001)
        if len(text) > TEXT_LIMITS[platform]:
            return graph_error(
                400,
                100,
                f"(#100) Length of param message[text] must be less than or equal to {TEXT_LIMITS[platform]}",
                2018001,
            )
        mid = ("aWdfZAG1" if platform == "instagram" else "m_") + random_token(40)
        kind = "dm"
        if comment is not None:
            comment.private_replied = True
            self.state.touch_comment(account, comment.id)
            kind = "private_reply"
            contact = account.contacts.setdefault(contact_id, Contact(contact_id, comment.from_handle))
        self._touch(account, contact_id)
        self.record(call, kind, to, text, mid, call.body_json() if call.raw else call.params())
        return JSONResponse({"recipient_id": contact_id, "message_id": mid})

    @staticmethod
    def _template_refusal(platform: str, attachment: Any, private_reply: bool) -> str | None:
        if not isinstance(attachment, dict) or attachment.get("type") != "template":
            return "(#100) Unsupported attachment type"
        if platform == "instagram" and private_reply:
            return "(#100) Templates are not supported in private replies: send text"
        payload = attachment.get("payload") or {}
        if payload.get("template_type") != "button" or not isinstance(payload.get("text"), str):
            return "(#100) param message[attachment][payload] must be a button template with text"
        if len(payload["text"]) > 640:
            return "(#100) param message[attachment][payload][text] must be at most 640 characters"
        buttons = payload.get("buttons")
        if not isinstance(buttons, list) or not 1 <= len(buttons) <= 3:
            return "(#100) param message[attachment][payload][buttons] must have 1 to 3 buttons"
        for i, button in enumerate(buttons):
            if not isinstance(button, dict) or button.get("type") != "web_url":
                return f"(#100) param message[attachment][payload][buttons][{i}][type] must be web_url"
            title = button.get("title")
            if not isinstance(title, str) or not 1 <= len(title) <= 20:
                return (
                    f"(#100) param message[attachment][payload][buttons][{i}][title] "
                    "must be at most 20 characters"
                )
            if bad_button_url(button.get("url")):
                return f"(#100) param message[attachment][payload][buttons][{i}][url] is not a valid URL"
        return None

    def _touch(self, account: Account, contact_id: str) -> None:
        contact = account.contacts.get(contact_id)
        if contact is not None:
            contact.updated = time.time()
            if not contact.conversation_id:
                contact.conversation_id = "aWdfZAG06" + random_token(24)
            self.state.touch_contact(account, contact_id)

    def _comment_on_post(self, call: Call, account: Account, post_id: str) -> Response:
        """`POST /{media-or-post-id}/comments`: a comment of the account under its own post."""
        text = call.params().get("message")
        if not isinstance(text, str) or not text.strip():
            return graph_error(400, 100, "(#100) The parameter message is required", 2018001)
        limit = 2200 if call.platform == "instagram" else 8000
        if len(text) > limit:
            return graph_error(400, 100, f"(#100) A comment is at most {limit} characters", 2207010)
        comment_id = f"{17800000000000000 + self.state.serial()}"
        if call.platform == "facebook":
            comment_id = f"{post_id.split('_')[-1]}_{comment_id}"
        self.record(call, "comment", post_id, text, comment_id)
        return JSONResponse({"id": comment_id})

    def _comment_reply(self, call: Call, account: Account, comment_id: str) -> Response:
        text = call.params().get("message")
        if not isinstance(text, str) or not text:
            return graph_error(400, 100, "(#100) The parameter message is required", 2018001)
        reply_id = f"{self.state.serial()}{int(time.time())}"
        if call.platform == "facebook":
            reply_id = f"{account.comments[comment_id].media_id.split('_')[-1]}_{reply_id}"
        self.record(call, "public_reply", comment_id, text, reply_id)
        return JSONResponse({"id": reply_id})
