"""Problems the check finds in requests the adapters send today, each a known adapter defect with
what fixes it. The suite passes them (and counts them); the mutation test holds that each one is
still found, so an entry is removed with its fix rather than outliving it.

Each entry: the platform, a regular expression a problem line (`"<platform> <METHOD> <path>: <problem>"`)
matches, and the defect with the fix it awaits."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Defect:
    platform: str
    problem: re.Pattern[str]
    item: str


def _defect(platform: str, problem: str, item: str) -> Defect:
    return Defect(platform, re.compile(problem), item)


DEFECTS: list[Defect] = [
    # -- adapters (platforms/<name>) --------------------------------------------------------------
    _defect("tiktok", r"/v2/post/publish/video/init/: .*privacy_level: 'EVERYONE' is not one of",
            "the adapter sends a privacy_level TikTok does not have (not among creator_info's "
            "privacy_level_options) instead of refusing it before the call"),
    _defect("whatsapp", r"/messages: sendMessage: body\.interactive\.body\.text: .* is too long",
            "an interactive message's body over 1024 characters is sent and refused, then "
            "falls back to text; the limit is known before the call"),
    _defect("whatsapp", r"/messages: sendMessage: body: Unevaluated properties are not allowed \('interactive'",
            "(the same request as the one above: its interactive part as a whole)"),
    _defect("youtube", r"/upload/youtube/v3/thumbnails/set: youtube\.thumbnails\.set: uploadType None",
            "thumbnails.set sends the image's bytes to the upload URI without uploadType=media"),
    _defect("whatsapp", r": \w+: path [\w-]+: '.*' does not match '\^\[0-9\]\+\$'",
            "a WhatsApp connection's phoneNumberId and wabaId reach Meta unchecked (the fuzz run "
            "of /v1 sends letters); Meta's document takes digits, and the contract a 422 for a malformed one"),
    _defect("whatsapp", r": \w+: header Authorization: .* does not match",
            "a WhatsApp connection's token reaches Meta unchecked (the fuzz run of /v1 sends "
            "characters no Bearer token has)"),
    _defect("x", r"GET /2/dm_events: getDirectMessagesEvents: query pagination_token: .* is too short",
            "an inbox page token given by the caller reaches X unchecked, where X's document "
            "takes 16 characters or more"),
    # -- the emulator's answers (platforms/emulator) ---------------------------------------------
    _defect("x", r": answer (4|5)\d\d: '(code|message)' is a required property",
            "the emulator answers X's errors in the Problem shape with Content-Type "
            "application/json; X's document gives application/problem+json for a Problem"),
    _defect("x", r"GET /2/users/me: getUsersMe: answer 200\.data\.public_metrics: 'post_count' is a required",
            "the emulator's public_metrics has tweet_count where X's document requires post_count"),
    _defect("whatsapp", r"/phone_numbers: .*answer 200\.data\[\d+\]: 'status' is a required property",
            "the emulator's phone numbers lack `status`, which Meta's document requires"),
    _defect("instagram", r"GET /v23\.0/\d+: answer 200: 'caption' was not asked for",
            "the emulator answers a media read with fields not asked for (caption)"),
    _defect("facebook", r"GET /v23\.0/\S+: answer 200: '(name|tasks|category)' was not asked for",
            "the emulator answers reads with fields not asked for (a profile's name, "
            "me/accounts' tasks and category)"),
    _defect("telegram", r"/(getChat|getChatMember): \w+: answer\.result\.",
            "the emulator's getChat/getChatMember results lack fields the Bot API requires "
            "(accent_color_id, max_reaction_count, accepted_gift_types, ChatMember* permissions)"),
]


def known(platform: str, line: str) -> Defect | None:
    return next((d for d in DEFECTS if d.platform == platform and d.problem.search(line)), None)
