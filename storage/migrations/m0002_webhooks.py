"""Outbound webhooks: endpoints and the delivery rows that the workers send."""

from peewee import Database

from storage.models import WebhookDelivery, WebhookEndpoint


def apply(database: Database) -> None:
    database.create_tables([WebhookEndpoint, WebhookDelivery], safe=True)
