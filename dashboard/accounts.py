"""Accounts: the workspace's connected accounts, connecting new ones, reconnecting, disconnecting,
and the profiles they belong to. Every action is the `/v1` operation's service function."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from dashboard import refusals, views
from dashboard.forms import account_name, platform_name
from dashboard.views import Seat, data_of, field, flash
from kit import shapes
from kit.errors import ServiceError, ValidationFailed
from kit.settings import Settings
from oauth.shell import in_db
from service.accounts import choices, connect, grant_connect, platforms
from service.accounts import ops as accounts
from service.analytics import ops as analytics
from service.identity import workspaces
from service.identity.workspace_shapes import CreateProfile, UpdateProfile

KIND_NAMES = {"page": "Page", "ad_account": "Ad account", "organization": "Organization", "member": "Member",
              "channel": "Channel"}
PAGE = "/dashboard/accounts"



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


async def accounts_page(request: Request) -> Response:
    where = await views.seat(request)
    return await _accounts_page(request, where)


async def _accounts_page(request: Request, where: Seat, reconnect: str = "") -> HTMLResponse:
    """The page (also what a refused connection or profile form is filled in again on)."""
    loaded = await in_db(_load, where)
    oauth = [(p, platform_name(p)) for p in connect.OAUTH_PLATFORMS]
    return views.page(request, "accounts.html", where, title="Accounts", nav="accounts", oauth_platforms=oauth,
                      chosen_profile=request.query_params.get("profile", ""),
                      reconnect=reconnect or request.query_params.get("reconnect", ""), **loaded)


async def _again(request: Request, where: Seat, form: Any, problem: ServiceError, form_name: str, top: str,
                 named: dict[str, tuple[str, str]] | None = None) -> Response:
    """A refused form of this page: the page again with the form filled in and its problems."""
    again = await _accounts_page(request, where)
    return refusals.again(again, problem.status, form, request.url.path,
                          refusals.problems_of(problem, form_name, top, named))


async def start_connect(request: Request, *, settings: Settings) -> Response:
    platform = request.path_params["platform"]
    where, form = await views.acting(request)
    if not platforms.known(platform):
        return views.not_found(request, "No such platform.")
    profile_id = field(form, "profileId")
    try:
        if platforms.connects_with_token(platform):
            record = await _connect_with_token(where, platform, profile_id, form)
            return views.done(request, f"Connected {platform_name(platform)} account {account_name(record)}.",
                              PAGE, where)
        # The platform's consent, then /v1's callback, which sends the person back here.
        product = request.query_params.get("product") or None  # LinkedIn organizations: their own app
        started = await in_db(lambda: connect.start_oauth(
            actor=where.actor(), platform=platform, profile_id=profile_id,
            redirect_url=_back_here(settings, where, platform), product=product))
    except ServiceError as problem:
        if platforms.connects_with_token(platform):
            return await _again(request, where, form, problem, "token", f"connect-{platform}",
                                {"profileId": (f"{platform}-profile", "Profile")})
        return await _again(request, where, form, problem, "token", "connect-oauth",
                            {"profileId": ("connect-profile", "Profile")})
    return RedirectResponse(started.auth_url, status_code=303)


async def connected(request: Request) -> Response:
    where = await views.seat(request)
    if request.query_params.get("selection"):
        return await _choice_page(request, where)
    account_id = request.query_params.get("accountId", "")
    record = await _account(request, where, account_id)
    if request.query_params.get("grant") == "messaging":
        return views.done(request, f"Connected messaging for {platform_name(record['platform'])} account "
                                   f"{account_name(record)}.", PAGE, where)
    return views.done(request, f"Connected {platform_name(record['platform'])} account {account_name(record)}.",
                      PAGE, where)


async def connect_grant(request: Request, *, settings: Settings) -> Response:
    """A separate grant of a connected account (TikTok messaging): the platform's second consent."""
    where, _form = await views.acting(request)
    record = await _account(request, where, request.path_params["id"])
    grant = request.path_params["grant"]
    try:
        started = await in_db(lambda: grant_connect.start_grant(
            actor=where.actor(), platform=record["platform"], account_id=record["id"], grant=grant,
            redirect_url=_back_here(settings, where, record["platform"])))
    except ServiceError as problem:
        return views.failure(request, problem, PAGE)
    return RedirectResponse(started.auth_url, status_code=303)


async def choose(request: Request) -> Response:
    """The choice page's form: each checked Page, ad account, organization or channel connects."""
    where, form = await views.acting(request)
    platform, selection = field(form, "platform"), field(form, "selection")
    picked = [str(value) for value in form.getlist("ids") if isinstance(value, str)]
    if platform not in connect.OAUTH_PLATFORMS:
        return views.failure(request, ValidationFailed.field("platform", "is not a platform connected by OAuth"),
                             f"{PAGE}?workspace={where.workspace_id}")
    if not picked:
        flash(request, "Choose at least one to connect.")
        again = urlencode({"workspace": where.workspace_id, "platform": platform, "selection": selection})
        return RedirectResponse(f"{PAGE}/connected?{again}", status_code=303)
    try:
        actor = await in_db(where.actor)
        chosen = await views.in_own(lambda: choices.choose(actor=actor, platform=platform, selection=selection,
                                                           ids=picked))
    except ServiceError as problem:
        return views.failure(request, problem, f"{PAGE}?workspace={where.workspace_id}")
    names = ", ".join(account_name(record.dump()) for record in chosen.data)
    return views.done(request, f"Connected {platform_name(platform)}: {names}.", PAGE, where)


async def disconnect(request: Request) -> Response:
    account_id = request.path_params["id"]
    where = await views.seated(request)
    record = await _account(request, where, account_id)
    label = f"{platform_name(record['platform'])} account {account_name(record)}"
    if request.method == "GET":
        return views.confirm(request, where, title="Disconnect", question=f"Disconnect the {label}?",
                             detail="Its stored credentials are erased; its history stays. "
                                    "You can connect it again later.",
                             action=f"{PAGE}/{account_id}/disconnect", button="Disconnect",
                             cancel=f"{PAGE}?workspace={where.workspace_id}")
    try:
        await in_db(lambda: accounts.disconnect(actor=where.actor(), account_id=account_id))
    except ServiceError as problem:
        return views.failure(request, problem, PAGE)
    return views.done(request, f"Disconnected the {label}.", PAGE, where)


async def reconnect(request: Request, *, settings: Settings) -> Response:
    """OAuth accounts go through the platform's consent again; token accounts get their form."""
    where, _form = await views.acting(request)
    record = await _account(request, where, request.path_params["id"])
    if platforms.connects_with_token(record["platform"]):
        response = views.back_to(PAGE, where, profile=record["profileId"], reconnect=record["platform"])
        response.headers["location"] += f"#connect-{record['platform']}"
        return response
    try:
        started = await in_db(lambda: connect.start_oauth(
            actor=where.actor(), platform=record["platform"], profile_id=record["profileId"],
            redirect_url=_back_here(settings, where, record["platform"])))
    except ServiceError as problem:
        return views.failure(request, problem, PAGE)
    return RedirectResponse(started.auth_url, status_code=303)


async def create_profile(request: Request) -> Response:
    where, form = await views.acting(request)
    try:
        fields = shapes.parse(CreateProfile, {"name": field(form, "name")})
        made = await in_db(lambda: workspaces.create_profile(actor=where.actor(), **dict(fields)))
    except ServiceError as problem:
        return await _again(request, where, form, problem, "profile", "new-profile")
    return views.done(request, f"Created the profile {made.name}.", PAGE, where)


async def rename_profile(request: Request) -> Response:
    profile_id = request.path_params["id"]
    where, form = await views.acting(request)
    try:
        fields = shapes.parse(UpdateProfile, {"name": field(form, "name")})
        renamed = await in_db(lambda: workspaces.update_profile(
            actor=where.actor(), profile_id=profile_id, **dict(fields)))
    except ServiceError as problem:
        if problem.status == 404:
            return views.not_found(request, "No profile with that id.")
        return await _again(request, where, form, problem, "profile", f"rename-{profile_id}",
                            {"name": (f"rename-{profile_id}", "Name")})
    return views.done(request, f"Renamed the profile to {renamed.name}.", PAGE, where)


async def _account(request: Request, where: Seat, account_id: str) -> dict[str, Any]:
    """The workspace's account (its `/v1` record), or `NoSeat` with the 404 page."""
    try:
        record = await in_db(lambda: accounts.get(actor=where.actor(), account_id=account_id))
    except ServiceError:
        raise views.NoSeat(views.not_found(request, "No account with that id.")) from None
    return dict(record.dump())


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
        return views.done(request, "That choice has expired or was already made; connect again.", PAGE, where)
    items = [{**choice.dump(), "kindName": KIND_NAMES.get(choice.kind, choice.kind)} for choice in offered.data]
    return views.page(request, "accounts_choose.html", where, title="Choose what to connect", nav="accounts",
                platform=platform, platform_name=platform_name(platform), selection=selection,
                      choices=items)


async def _connect_with_token(where: Seat, platform: str, profile_id: str, form: Any) -> dict[str, Any]:
    # The fields its token connection declares: a required one always (its refusal names it), an
    # optional one when filled in.
    body: dict[str, Any] = {"profileId": profile_id}
    body.update({name: field(form, name) for name, required in platforms.token_fields(platform)
                 if required or field(form, name)})
    connection = shapes.parse(platforms.token_shape(platform), body)
    actor = await in_db(where.actor)
    record = await views.in_own(lambda: connect.connect_with_token(actor=actor, platform=platform,
                                                                   connection=connection))
    return record.dump()
