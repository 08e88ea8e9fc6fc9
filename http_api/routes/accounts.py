from typing import Any

from http_api.declare import op
from http_api.routing import Call
from kit.pagination import Page
from kit.shapes import page_of
from service.accounts import ops as accounts
from service.accounts.shapes import (
    Account,
    AccountDeleted,
    AccountQuery,
    InstagramConversations,
    PublishOptions,
    Templates,
)


def list_(call: Call) -> Page:
    return accounts.list_accounts(actor=call.actor, **dict(call.query))


def get(call: Call) -> Account:
    return accounts.get(actor=call.actor, account_id=call.path["id"])


def disconnect(call: Call) -> Account:
    return accounts.disconnect(actor=call.actor, account_id=call.path["id"])


def delete_permanently(call: Call) -> AccountDeleted:
    return accounts.delete_permanently(actor=call.actor, account_id=call.path["id"])


def publish_options(call: Call) -> dict[str, Any]:
    return accounts.publish_options(actor=call.actor, account_id=call.path["id"])


def templates(call: Call) -> dict[str, Any]:
    return accounts.templates(actor=call.actor, account_id=call.path["id"])


def ig_conversations(call: Call) -> dict[str, Any]:
    return accounts.instagram_conversations(actor=call.actor, account_id=call.path["id"])


OPERATIONS = [
    op("GET", "/accounts", list_, summary="List connected accounts", tag="Accounts", operation_id="listAccounts",
       query=AccountQuery, answer=page_of(Account)),
    op("GET", "/accounts/{id}", get, summary="Get an account", tag="Accounts", operation_id="getAccount",
       answer=Account),
    op("POST", "/accounts/{id}/disconnect", disconnect, summary="Disconnect an account (idempotent)",
       tag="Accounts", operation_id="disconnectAccount", answer=Account,
       description="Erases the stored credentials; the account's history stays."),
    op("DELETE", "/accounts/{id}/permanent", delete_permanently, summary="Delete a disconnected account for good",
       tag="Accounts", operation_id="deleteAccountPermanently", answer=AccountDeleted, errors=(409,),
       description="Deletes the account with its post targets, conversations and messages. "
                   "A connected account answers 409."),
    op("GET", "/accounts/{id}/publish-options", publish_options, summary="What the platform asks before publishing",
       tag="Accounts", operation_id="getPublishOptions", answer=PublishOptions, waits=True,
       errors=(409, 502)),
    op("GET", "/accounts/{id}/ig-conversations", ig_conversations, summary="Raw Instagram conversations, live",
       tag="Accounts", operation_id="listInstagramConversations", answer=InstagramConversations, waits=True,
       errors=(409, 502), description="A non-Instagram account → 422; a disconnected one → 409."),
    op("GET", "/accounts/{id}/templates", templates, summary="A WhatsApp account's approved message templates",
       tag="Accounts", operation_id="listTemplates", answer=Templates, waits=True, errors=(409, 502),
       description="Live from WhatsApp, approved ones only: each with its language, category and how many body "
                   "parameters it takes. Send one with `POST /v1/conversations/{id}/messages` and `template`: "
                   "the only message that reaches a contact outside the 24 h window. Other platforms → 422."),
]
