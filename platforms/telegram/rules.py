"""Telegram's rules: a post goes to a channel the bot administers (`options.chatId`, else the channel
the account was connected with)."""

from __future__ import annotations

from typing import Any

from kit.errors import FieldProblem
from platforms.rules import PostDraft, PostRules


class TelegramPostRules(PostRules):
    publish_options = "credentials"

    def options_from_credentials(self, credentials: dict[str, Any]) -> dict[str, Any] | None:
        return {"chatId": credentials.get("channelId")}

    def option_problems(self, draft: PostDraft) -> list[FieldProblem]:
        live = draft.live_options
        if draft.options.get("chatId") or (live and live.get("chatId")):
            return []
        return [FieldProblem(f"{draft.options_field}.chatId", "a Telegram post needs the channel's chatId "
                             "(@name or -100...), a channel the bot administers")]
