"""Accounts: the workspace's connected accounts, connecting new ones, reconnecting, disconnecting,
and the profiles they belong to. Every action is the `/v1` operation's service function."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from kit import shapes
from kit.errors import ServiceError, ValidationFailed
from kit.settings import Settings
from oauth.dashboard.console import (
    NoSeat,
    Seat,
    acting,
    back_to,
    confirm,
    failure,
    field,
    flash,
    in_own,
    not_found,
    page,
    seat,
)
from oauth.dashboard.shell import data_of, in_db
from service.accounts import choices, connect
from service.accounts import ops as accounts
from service.accounts.connect_shapes import ConnectTelegram, ConnectWhatsApp
from service.analytics import ops as analytics
from service.identity import workspaces
from service.identity.workspace_shapes import CreateProfile, UpdateProfile

PLATFORM_NAMES = {
    "instagram": "Instagram", "facebook": "Facebook", "meta_ads": "Meta Ads", "tiktok": "TikTok",
    "youtube": "YouTube", "x": "X", "linkedin": "LinkedIn", "telegram": "Telegram", "whatsapp": "WhatsApp",
}
TOKEN_PLATFORMS = ("telegram", "whatsapp")
KIND_NAMES = {"page": "Page", "ad_account": "Ad account", "organization": "Organization", "member": "Member",
              "channel": "Channel"}
PAGE = "/dashboard/accounts"


def platform_name(platform: str) -> str:
    return PLATFORM_NAMES.get(platform, platform)


def account_name(account: dict[str, Any]) -> str:
    """How a person recognises the account: its display name, else its handle, else the platform's id."""
    if account.get("displayName"):
        return str(account["displayName"])
    if account.get("username"):
        return "@" + str(account["username"]).lstrip("@")
    return str(account.get("platformAccountId") or account["id"])


def _followers(where: Seat) -> dict[str, int | None]:
    try:
        report = analytics.follower_analytics(actor=where.actor()).dump()
    except ServiceError:
        return {}
    return {item["accountId"]: item.get("currentFollowers") for item in report.get("accounts", [])}


def _load(where: Seat) -> dict[str, Any]:
    actor = where.actor()
    profiles = data_of(workspaces.list_profiles(actor=actor, limit=100))
    names = {profile["id"]: profile["name"] for profile in profiles}
    followers = _followers(where)
    rows = []
    for account in data_of(accounts.list_accounts(actor=actor, limit=100)):
        rows.append({**account, "name": account_name(account), "platformName": platform_name(account["platform"]),
                     "profileName": names.get(account["profileId"], ""),
                     "followers": followers.get(account["id"])})
    return {"accounts": rows, "profiles": profiles}


def routes(settings: Settings, middleware: list[Middleware]) -> list[Route]:
    async def accounts_page(request: Request) -> Response:
        try:
            where = await seat(request)
        except NoSeat as no:
            return no.response
        loaded = await in_db(_load, where)
        oauth = [(p, platform_name(p)) for p in connect.OAUTH_PLATFORMS]
        return page(request, "accounts.html", where, title="Accounts", nav="accounts", oauth_platforms=oauth,
                    chosen_profile=request.query_params.get("profile", ""),
                    reconnect=request.query_params.get("reconnect", ""), **loaded)

    async def start_connect(request: Request) -> Response:
        platform = request.path_params["platform"]
        try:
            where, form = await acting(request)
        except NoSeat as no:
            return no.response
        if platform not in PLATFORM_NAMES:
            return not_found(request, "No such platform.")
        profile_id = field(form, "profileId")
        back = f"{PAGE}?workspace={where.workspace_id}"
        try:
            if platform in TOKEN_PLATFORMS:
                record = await _connect_with_token(where, platform, profile_id, form)
                flash(request, f"Connected {platform_name(platform)} account {account_name(record)}.")
                return back_to(PAGE, where)
            # The platform's consent, then /v1's callback, which sends the person back here.
            started = await in_db(lambda: connect.start_oauth(
                actor=where.actor(), platform=platform, profile_id=profile_id,
                redirect_url=_back_here(settings, where, platform)))
        except ServiceError as problem:
            return failure(request, problem, back)
        return RedirectResponse(started.auth_url, status_code=303)

    async def connected(request: Request) -> Response:
        try:
            where = await seat(request)
        except NoSeat as no:
            return no.response
        if request.query_params.get("selection"):
            return await _choice_page(request, where)
        account_id = request.query_params.get("accountId", "")
        try:
            record = (await in_db(lambda: accounts.get(actor=where.actor(), account_id=account_id))).dump()
        except ServiceError:
            return not_found(request, "No account with that id.")
        flash(request, f"Connected {platform_name(record['platform'])} account {account_name(record)}.")
        return back_to(PAGE, where)

    async def choose(request: Request) -> Response:
        """The choice page's form: each checked Page, ad account, organization or channel connects."""
        try:
            where, form = await acting(request)
        except NoSeat as no:
            return no.response
        platform, selection = field(form, "platform"), field(form, "selection")
        picked = [str(value) for value in form.getlist("ids") if isinstance(value, str)]
        if platform not in connect.OAUTH_PLATFORMS:
            return failure(request, ValidationFailed.field("platform", "is not a platform connected by OAuth"),
                           f"{PAGE}?workspace={where.workspace_id}")
        if not picked:
            flash(request, "Choose at least one to connect.")
            again = urlencode({"workspace": where.workspace_id, "platform": platform, "selection": selection})
            return RedirectResponse(f"{PAGE}/connected?{again}", status_code=303)
        try:
            actor = await in_db(where.actor)
            chosen = await in_own(lambda: choices.choose(actor=actor, platform=platform, selection=selection,
                                                         ids=picked))
        except ServiceError as problem:
            return failure(request, problem, f"{PAGE}?workspace={where.workspace_id}")
        names = ", ".join(account_name(record.dump()) for record in chosen.data)
        flash(request, f"Connected {platform_name(platform)}: {names}.")
        return back_to(PAGE, where)

    async def disconnect(request: Request) -> Response:
        account_id = request.path_params["id"]
        try:
            if request.method == "GET":
                where = await seat(request)
            else:
                where, _form = await acting(request)
            record = (await in_db(lambda: accounts.get(actor=where.actor(), account_id=account_id))).dump()
        except NoSeat as no:
            return no.response
        except ServiceError:
            return not_found(request, "No account with that id.")
        label = f"{platform_name(record['platform'])} account {account_name(record)}"
        if request.method == "GET":
            return confirm(request, where, title="Disconnect", question=f"Disconnect the {label}?",
                           detail="Its stored credentials are erased; its history stays. "
                                  "You can connect it again later.",
                           action=f"{PAGE}/{account_id}/disconnect", button="Disconnect",
                           cancel=f"{PAGE}?workspace={where.workspace_id}")
        try:
            await in_db(lambda: accounts.disconnect(actor=where.actor(), account_id=account_id))
        except ServiceError as problem:
            return failure(request, problem, PAGE)
        flash(request, f"Disconnected the {label}.")
        return back_to(PAGE, where)

    async def reconnect(request: Request) -> Response:
        """OAuth accounts go through the platform's consent again; token accounts get their form."""
        account_id = request.path_params["id"]
        try:
            where, _form = await acting(request)
            record = (await in_db(lambda: accounts.get(actor=where.actor(), account_id=account_id))).dump()
        except NoSeat as no:
            return no.response
        except ServiceError:
            return not_found(request, "No account with that id.")
        if record["platform"] in TOKEN_PLATFORMS:
            response = back_to(PAGE, where, profile=record["profileId"], reconnect=record["platform"])
            response.headers["location"] += f"#connect-{record['platform']}"
            return response
        try:
            started = await in_db(lambda: connect.start_oauth(
                actor=where.actor(), platform=record["platform"], profile_id=record["profileId"],
                redirect_url=_back_here(settings, where, record["platform"])))
        except ServiceError as problem:
            return failure(request, problem, PAGE)
        return RedirectResponse(started.auth_url, status_code=303)

    async def create_profile(request: Request) -> Response:
        try:
            where, form = await acting(request)
            fields = shapes.parse(CreateProfile, {"name": field(form, "name")})
            made = await in_db(lambda: workspaces.create_profile(actor=where.actor(), **dict(fields)))
        except NoSeat as no:
            return no.response
        except ServiceError as problem:
            return failure(request, problem, PAGE)
        flash(request, f"Created the profile {made.name}.")
        return back_to(PAGE, where)

    async def rename_profile(request: Request) -> Response:
        profile_id = request.path_params["id"]
        try:
            where, form = await acting(request)
            fields = shapes.parse(UpdateProfile, {"name": field(form, "name")})
            renamed = await in_db(lambda: workspaces.update_profile(
                actor=where.actor(), profile_id=profile_id, **dict(fields)))
        except NoSeat as no:
            return no.response
        except ServiceError as problem:
            if problem.status == 404:
                return not_found(request, "No profile with that id.")
            return failure(request, problem, PAGE)
        flash(request, f"Renamed the profile to {renamed.name}.")
        return back_to(PAGE, where)

    return [
        Route(PAGE, accounts_page, methods=["GET"], middleware=middleware),
        Route(f"{PAGE}/connected", connected, methods=["GET"], middleware=middleware),
        Route(f"{PAGE}/connect/{{platform}}", start_connect, methods=["POST"], middleware=middleware),
        Route(f"{PAGE}/choose", choose, methods=["POST"], middleware=middleware),
        Route(f"{PAGE}/{{id}}/disconnect", disconnect, methods=["GET", "POST"], middleware=middleware),
        Route(f"{PAGE}/{{id}}/reconnect", reconnect, methods=["POST"], middleware=middleware),
        Route("/dashboard/profiles", create_profile, methods=["POST"], middleware=middleware),
        Route("/dashboard/profiles/{id}/rename", rename_profile, methods=["POST"], middleware=middleware),
    ]


def _back_here(settings: Settings, where: Seat, platform: str) -> str:
    """Where the platform's consent returns: `connected`, with the account or the selection to choose from."""
    return f"{settings.base_url}{PAGE}/connected?{urlencode({'workspace': where.workspace_id, 'platform': platform})}"


async def _choice_page(request: Request, where: Seat) -> Response:
    """The grant reached several Pages, ad accounts, organizations or channels: a form with a checkbox each."""
    platform = request.query_params.get("platform", "")
    selection = request.query_params.get("selection", "")
    try:
        offered = await in_db(lambda: choices.list_choices(actor=where.actor(), platform=platform,
                                                           selection=selection))
    except ServiceError:
        flash(request, "That choice has expired or was already made; connect again.")
        return back_to(PAGE, where)
    items = [{**choice.dump(), "kindName": KIND_NAMES.get(choice.kind, choice.kind)} for choice in offered.data]
    return page(request, "accounts_choose.html", where, title="Choose what to connect", nav="accounts",
                platform=platform, platform_name=platform_name(platform), selection=selection, choices=items)


async def _connect_with_token(where: Seat, platform: str, profile_id: str, form: Any) -> dict[str, Any]:
    if platform == "telegram":
        body: dict[str, Any] = {"profileId": profile_id, "botToken": field(form, "botToken")}
        if field(form, "channel"):
            body["channel"] = field(form, "channel")
        connection: Any = shapes.parse(ConnectTelegram, body)
    else:
        connection = shapes.parse(ConnectWhatsApp, {
            "profileId": profile_id, "phoneNumberId": field(form, "phoneNumberId"),
            "wabaId": field(form, "wabaId"), "accessToken": field(form, "accessToken")})
    actor = await in_db(where.actor)
    record = await in_own(lambda: connect.connect_with_token(actor=actor, platform=platform, connection=connection))
    return record.dump()
