from starlette.responses import RedirectResponse

from http_api.declare import op
from http_api.routing import Call, Reply
from service.accounts import connect
from service.accounts.connect_shapes import (
    CallbackQuery,
    ConnectStart,
    ConnectTelegram,
    ConnectWhatsApp,
    StartConnectQuery,
    WebhookSubscription,
)
from service.accounts.shapes import Account

PLATFORM_PATH = "{platform}"


def start(call: Call) -> ConnectStart:
    return connect.start_oauth(actor=call.actor, platform=call.path["platform"], **dict(call.query))


def telegram(call: Call) -> Reply:
    return Reply(connect.connect_with_token(actor=call.actor, platform="telegram", connection=call.body), status=201)


def whatsapp(call: Call) -> Reply:
    return Reply(connect.connect_with_token(actor=call.actor, platform="whatsapp", connection=call.body), status=201)


def subscribe(call: Call) -> WebhookSubscription:
    return connect.subscribe_webhooks(actor=call.actor, platform=call.path["platform"],
                                      account_id=call.path["accountId"])


def callback(call: Call) -> object:
    finished = connect.finish_oauth(platform=call.path["platform"], **dict(call.query))
    if finished.redirect_to:
        return RedirectResponse(finished.redirect_to, status_code=303)
    return finished.account


OPERATIONS = [
    op("GET", "/connect/{platform}", start, summary="Start connecting an account by OAuth", tag="Connect",
       operation_id="startConnect", answer=ConnectStart, transaction="write", query=StartConnectQuery,
       description="For instagram, facebook, meta_ads, tiktok, youtube, x and linkedin; other platforms → 422. "
                   "`state` is signed, lives 15 minutes and can be used once."),
    op("GET", "/connect/{platform}/callback", callback, summary="The platform's redirect back after consent",
       tag="Connect", operation_id="connectCallback", answer=Account, auth=False, waits=True,
       query=CallbackQuery, errors=(303, 400, 422, 502),
       description="Exchanges `code`, stores the account and redirects (303) to `redirectUrl?accountId=...`, "
                   "or answers 200 with the account when no `redirectUrl` was given. A used, forged or expired "
                   "`state` → 400."),
    op("POST", "/connect/telegram", telegram, summary="Connect a Telegram bot", tag="Connect",
       operation_id="connectTelegram", ok=201, body=ConnectTelegram, answer=Account, waits=True,
       errors=(502,), description="Checks the token with `getMe` and sets the bot's webhook with a secret token. "
                                  "A token the platform refuses → 422 naming `botToken`."),
    op("POST", "/connect/whatsapp", whatsapp, summary="Connect a WhatsApp Business phone number", tag="Connect",
       operation_id="connectWhatsApp", ok=201, body=ConnectWhatsApp, answer=Account, waits=True,
       errors=(502,)),
    op("POST", "/connect/{platform}/{accountId}/subscribe-webhooks", subscribe,
       summary="Re-apply the platform's webhook subscription", tag="Connect", operation_id="subscribeWebhooks",
       answer=WebhookSubscription, waits=True, errors=(409, 502),
       description="facebook, instagram or whatsapp; a path platform that differs from the account's → 422."),
]
