from starlette.responses import RedirectResponse

from http_api.declare import op
from http_api.routing import Call, Reply
from service.accounts import choices, connect, grant_connect
from service.accounts.connect_shapes import (
    CallbackAnswer,
    CallbackQuery,
    Choices,
    ChoicesQuery,
    Choose,
    ChosenAccounts,
    ConnectStart,
    ConnectTelegram,
    ConnectWhatsApp,
    StartConnectQuery,
    StartGrantQuery,
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
    return finished.answer


def start_grant(call: Call) -> ConnectStart:
    return grant_connect.start_grant(actor=call.actor, platform=call.path["platform"],
                                     account_id=call.path["accountId"], grant=call.path["grant"], **dict(call.query))


def grant_callback(call: Call) -> object:
    finished = grant_connect.finish_grant(platform=call.path["platform"], grant=call.path["grant"],
                                          **dict(call.query))
    if finished.redirect_to:
        return RedirectResponse(finished.redirect_to, status_code=303)
    return finished.answer


def list_choices(call: Call) -> Choices:
    return choices.list_choices(actor=call.actor, platform=call.path["platform"], **dict(call.query))


def choose(call: Call) -> Reply:
    body: Choose = call.body
    chosen = choices.choose(actor=call.actor, platform=call.path["platform"], selection=body.selection,
                            ids=list(body.ids))
    return Reply(chosen, status=201)


OPERATIONS = [
    op("GET", "/connect/{platform}", start, summary="Start connecting an account by OAuth", tag="Connect",
       operation_id="startConnect", answer=ConnectStart, transaction="write", query=StartConnectQuery,
       description="For instagram, facebook, meta_ads, tiktok, youtube, x and linkedin; other platforms → 422. "
                   "`state` is signed, lives 15 minutes and can be used once."),
    op("GET", "/connect/{platform}/callback", callback, summary="The platform's redirect back after consent",
       tag="Connect", operation_id="connectCallback", answer=CallbackAnswer, auth=False, waits=True,
       query=CallbackQuery, errors=(303, 400, 422, 502),
       description="Exchanges `code`, stores the account and redirects (303) to `redirectUrl?accountId=...`, "
                   "or answers 200 with the account when no `redirectUrl` was given. A used, forged or expired "
                   "`state` → 400.\n\nWhen the grant reaches several things (Facebook Pages, Meta ad accounts, "
                   "LinkedIn organizations as well as the member, YouTube channels) nothing is connected yet: "
                   "the redirect goes to `redirectUrl?selection=sel_...`, or the answer is 200 "
                   "`{selection, platform, expiresAt, choices: [{id, name, kind}]}` (schema `SelectionOffered`); "
                   "choose with `POST /v1/connect/{platform}/choices`. A grant reaching one thing connects it "
                   "at once."),
    op("GET", "/connect/{platform}/choices", list_choices, summary="What a grant reaches, to choose from",
       tag="Connect", operation_id="listConnectChoices", answer=Choices, query=ChoicesQuery,
       description="`selection`: the token a callback answered. Each choice is `{id, name, kind}` with `kind` "
                   "`page` (Facebook), `ad_account` (Meta Ads), `organization` or `member` (LinkedIn), "
                   "`channel` (YouTube). A selection lives 30 minutes, belongs to the workspace (and profile) "
                   "the connect started in and is spent by the first choice: an unknown, expired, spent or "
                   "other workspace's selection → 404 `not_found` (as Stripe answers for an object it no "
                   "longer offers; never 410)."),
    op("POST", "/connect/{platform}/choices", choose, summary="Connect the chosen Pages, ad accounts, "
       "organizations or channels", tag="Connect", operation_id="chooseConnectChoices", ok=201, body=Choose,
       answer=ChosenAccounts, waits=True, errors=(502,),
       description="Each chosen id becomes an account of its own (a Page is subscribed to the app's webhooks "
                   "as it connects). An id that is not among the choices → 422 naming `ids[n]`; the selection "
                   "is then still usable. An unknown, expired, spent or other workspace's selection → 404. "
                   "The selection is spent by the first success: the platform tokens it held are erased."),
    op("POST", "/connect/telegram", telegram, summary="Connect a Telegram bot", tag="Connect",
       operation_id="connectTelegram", ok=201, body=ConnectTelegram, answer=Account, waits=True,
       errors=(502,), description="Checks the token with `getMe` and sets the bot's webhook with a secret token. "
                                  "A token the platform refuses → 422 naming `botToken`. With `channel` (`@name` or "
                                  "`-100…`): the channel is read (`getChat`) and the bot must be an administrator "
                                  "there with the right to post (`getChatMember`), else 422 naming `channel`; posts "
                                  "then go there unless a target's `options.chatId` says otherwise, and the channel's "
                                  "member count (`getChatMemberCount`) is the account's follower count."),
    op("POST", "/connect/whatsapp", whatsapp, summary="Connect a WhatsApp Business phone number", tag="Connect",
       operation_id="connectWhatsApp", ok=201, body=ConnectWhatsApp, answer=Account, waits=True,
       errors=(502,)),
    op("GET", "/connect/{platform}/{accountId}/grants/{grant}", start_grant,
       summary="Start connecting a separate grant of an account (TikTok messaging)", tag="Connect",
       operation_id="startGrantConnect", answer=ConnectStart, transaction="write", query=StartGrantQuery,
       errors=(409,),
       description="TikTok's Business Messaging takes TikTok API for Business's own authorization, with an app of "
                   "its own (`SWITCHBOARD_TIKTOK_BUSINESS_APP_ID`): `grant` `messaging` of a connected TikTok "
                   "account. A grant the platform does not have → 422 naming `grant`; a disconnected account or "
                   "no business app configured → 409. `state` is signed, lives 15 minutes and can be used once."),
    op("GET", "/connect/{platform}/grants/{grant}/callback", grant_callback,
       summary="The platform's redirect back after a separate grant's consent", tag="Connect",
       operation_id="grantConnectCallback", answer=Account, auth=False, waits=True, query=CallbackQuery,
       errors=(303, 400, 409, 422, 502),
       description="Exchanges `code` (TikTok: `tt_user/oauth2/token/`), checks the grant is of the same platform "
                   "account (else 422 `messaging_grant_refused`) and stores it beside the account's credentials; "
                   "redirects (303) to `redirectUrl?accountId=...&grant=...`, or answers 200 with the account, whose "
                   "`capabilities.grants` then shows it `connected`. A used, forged or expired `state` → 400."),
    op("POST", "/connect/{platform}/{accountId}/subscribe-webhooks", subscribe,
       summary="Re-apply the platform's webhook subscription", tag="Connect", operation_id="subscribeWebhooks",
       answer=WebhookSubscription, waits=True, errors=(409, 502),
       description="facebook, instagram or whatsapp; a path platform that differs from the account's → 422."),
]
