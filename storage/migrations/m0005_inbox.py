"""The inbox: conversations (one per contact and account) and their messages."""

from peewee import Database

from storage.models import Conversation, Message


def apply(database: Database) -> None:
    database.create_tables([Conversation, Message], safe=True)
