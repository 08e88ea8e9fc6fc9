"""The inbox: conversations (one per contact and account), their messages, per-account counts."""

from peewee import Database

from storage.models import Conversation, ConversationCount, Message


def apply(database: Database) -> None:
    database.create_tables([Conversation, Message, ConversationCount], safe=True)
