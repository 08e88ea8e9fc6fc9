"""WhatsApp's rules: a contact is a phone number, its handle stored in E.164."""

from __future__ import annotations

from platforms.rules import InboxRules


class WhatsAppInboxRules(InboxRules):
    phone_handles = True
