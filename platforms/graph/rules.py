"""The Messenger Platform's inbox rules, which Instagram and Facebook share: its webhooks carry a
contact's scoped id and no name (the profile is looked up), and a contact may reply to a story."""

from __future__ import annotations

from platforms.rules import InboxRules


class MessengerInboxRules(InboxRules):
    looks_up_contacts = True
    story_replies = True
