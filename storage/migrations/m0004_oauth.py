"""The OAuth authorisation server: registered clients, grants (connected apps), codes, tokens."""

from peewee import Database

from storage.models import OAuthClient, OAuthCode, OAuthGrant, OAuthToken


def apply(database: Database) -> None:
    database.create_tables([OAuthClient, OAuthGrant, OAuthCode, OAuthToken], safe=True)
