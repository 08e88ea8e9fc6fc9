"""Problems the check finds in requests the adapters send today, each a known adapter defect with the
issue item it belongs to. The suite passes them (and counts them); the mutation test holds that each
one is still found, so an entry is removed with its fix rather than outliving it.

Each entry: the platform, a regular expression a problem line (`"<platform> <METHOD> <path>: <problem>"`)
matches, and the issue item (or the first part's finding) that fixes the adapter."""

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
    _defect("tiktok", r"/open_api/v1\.3/.*header access-token must match",
            "issue 48 item 1: Business Messaging is called with the Login Kit token (act.), not a token of "
            "TikTok API for Business's own grant"),
    _defect("tiktok", r"/v2/post/publish/video/init/: .*privacy_level: 'EVERYONE' is not one of",
            "new finding: the adapter sends a privacy_level TikTok does not have (not among creator_info's "
            "privacy_level_options) instead of refusing it before the call"),
    _defect("whatsapp", r"/messages: sendMessage: body\.interactive\.body\.text: .* is too long",
            "new finding: an interactive message's body over 1024 characters is sent and refused, then "
            "falls back to text; the limit is known before the call"),
    _defect("whatsapp", r"/messages: sendMessage: body: Unevaluated properties are not allowed \('interactive'",
            "new finding (the same request as the one above: its interactive part as a whole)"),
    _defect("youtube", r"/upload/youtube/v3/thumbnails/set: youtube\.thumbnails\.set: uploadType None",
            "new finding: thumbnails.set sends the image's bytes to the upload URI without uploadType=media"),
    # -- the emulator's answers (platforms/emulator) ---------------------------------------------
    _defect("x", r": answer (4|5)\d\d: '(code|message)' is a required property",
            "new finding: the emulator answers X's errors in the Problem shape with Content-Type "
            "application/json; X's document gives application/problem+json for a Problem"),
    _defect("x", r"GET /2/users/me: getUsersMe: answer 200\.data\.public_metrics: 'post_count' is a required",
            "new finding: the emulator's public_metrics has tweet_count where X's document requires post_count"),
    _defect("whatsapp", r"/phone_numbers: .*answer 200\.data\[\d+\]: 'status' is a required property",
            "new finding: the emulator's phone numbers lack `status`, which Meta's document requires"),
    _defect("telegram", r"/(getChat|getChatMember): \w+: answer\.result\.",
            "new finding: the emulator's getChat/getChatMember results lack fields the Bot API requires "
            "(accent_color_id, max_reaction_count, accepted_gift_types, ChatMember* permissions)"),
]


def known(platform: str, line: str) -> Defect | None:
    return next((d for d in DEFECTS if d.platform == platform and d.problem.search(line)), None)
