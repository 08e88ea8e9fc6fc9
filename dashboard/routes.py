"""Every dashboard route in one table: its path, its view (a module-level function; a `partial`
binds what a shared view needs, the `Thing` it acts on or the settings) and its methods.

Each route runs under the session's middleware (`oauth.shell.session_middleware`) and
`NoSeatAnswers`, which answers a view's `NoSeat` with its page. Any other `/dashboard/...` path is
an HTML 404 (`frame.not_found`, listed last). Sign-in and sign-out are oauth's (`oauth.signin`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from dashboard import (
    accounts,
    actions,
    analytics,
    api_keys,
    automations,
    broadcasts,
    calendar,
    connected_apps,
    frame,
    home,
    inbox,
    media,
    members,
    moves,
    posts,
    profile,
    sequences,
    views,
    webhooks,
)
from dashboard.actions import Thing
from dashboard.views import Needs
from kit.page_headers import PageHeaders
from kit.settings import Settings
from oauth.shell import session_middleware
from service.accounts.ops import CONNECT_ACCOUNTS
from service.identity.api_keys import MANAGE_KEYS
from service.identity.audit_log import READ_AUDIT
from service.identity.members import MANAGE_MEMBERS
from service.identity.workspaces import MANAGE_PROFILES
from service.posts.approvals import REVIEW
from service.webhooks.ops import MANAGE_WEBHOOKS

GET, POST, BOTH = ["GET"], ["POST"], ["GET", "POST"]


def _studio(thing: Thing, *, status: bool = True) -> list[tuple[str, Callable[..., Any], list[str]]]:
    """The list, the editor and its save, pause or resume and deletion of one kind of thing."""
    base = thing.base
    return [
        (base, partial(actions.list_page, thing=thing), GET),
        (f"{base}/new", partial(actions.edit_page, thing=thing), GET),
        (f"{base}/new", partial(actions.save, thing=thing), POST),
        (f"{base}/{{id}}", partial(actions.edit_page, thing=thing), GET),
        (f"{base}/{{id}}", partial(actions.save, thing=thing), POST),
        *([(f"{base}/{{id}}/status", partial(actions.pause_or_resume, thing=thing), POST)] if status else []),
    ]


def table(settings: Settings) -> list[tuple[str, Callable[..., Any], list[str]]]:
    """(path, view, methods) of every page and form, in the order the router tries them."""
    return [
        ("/dashboard", home.home, GET),
        ("/dashboard/workspace", frame.switch_workspace, POST),
        (profile.PAGE, profile.profile_page, BOTH),
        (f"{profile.PAGE}/browser-zone", profile.browser_zone, POST),
        ("/dashboard/review/{id}/{decision:str}", home.review, POST),
        # Accounts and profiles.
        (accounts.PAGE, accounts.accounts_page, GET),
        (f"{accounts.PAGE}/connected", accounts.connected, GET),
        (f"{accounts.PAGE}/connect/{{platform}}", partial(accounts.start_connect, settings=settings), POST),
        (f"{accounts.PAGE}/choose", accounts.choose, POST),
        (f"{accounts.PAGE}/{{id}}/disconnect", accounts.disconnect, BOTH),
        (f"{accounts.PAGE}/{{id}}/reconnect", partial(accounts.reconnect, settings=settings), POST),
        (f"{accounts.PAGE}/{{id}}/grants/{{grant}}", partial(accounts.connect_grant, settings=settings), POST),
        ("/dashboard/profiles", accounts.create_profile, POST),
        ("/dashboard/profiles/{id}/rename", accounts.rename_profile, POST),
        # The inbox.
        (inbox.PAGE, inbox.inbox_page, GET),
        (f"{inbox.PAGE}/live", inbox.live_list, GET),
        (f"{inbox.PAGE}/{{id}}", inbox.inbox_page, GET),
        (f"{inbox.PAGE}/{{id}}/live", partial(views.live_partial, live=inbox.THREAD), GET),
        (f"{inbox.PAGE}/{{id}}/reply", inbox.reply, POST),
        (f"{inbox.PAGE}/{{id}}/read", inbox.mark_read, POST),
        (f"{inbox.PAGE}/{{id}}/share", inbox.share, POST),
        (f"{inbox.PAGE}/{{id}}/notes", inbox.add_note, POST),
        # Posts, the composer and the posting queues.
        (posts.PAGE, partial(posts.list_page, settings=settings), GET),
        (f"{posts.PAGE}/new", posts.composer, GET),
        (f"{posts.PAGE}/new", posts.create, POST),
        (f"{posts.PAGE}/check", posts.check, POST),
        (f"{posts.PAGE}/{{id}}", partial(posts.post_page, settings=settings), GET),
        (f"{posts.PAGE}/{{id}}/edit", posts.composer, GET),
        (f"{posts.PAGE}/{{id}}/edit", posts.create, POST),
        (f"{posts.PAGE}/{{id}}/move", moves.move_page, GET),
        (f"{posts.PAGE}/{{id}}/move", moves.move, POST),
        (f"{posts.PAGE}/{{id}}/retry", posts.retry, POST),
        (f"{posts.PAGE}/{{id}}/delete", posts.delete, BOTH),
        (f"{accounts.PAGE}/{{id}}/queue", posts.queue_page, BOTH),
        (calendar.PAGE, calendar.calendar_page, GET),
        # The media library.
        (media.PAGE, media.library_page, GET),
        (f"{media.PAGE}/uploads", media.start_upload, POST),
        (f"{media.PAGE}/uploads/{{id}}/complete", media.complete_upload, POST),
        (f"{media.PAGE}/{{id}}/delete", partial(actions.confirmed_delete, thing=media.MEDIA), BOTH),
        # Broadcasts.
        (broadcasts.PAGE, broadcasts.list_page, GET),
        (f"{broadcasts.PAGE}/new", broadcasts.new_page, GET),
        (f"{broadcasts.PAGE}/new", broadcasts.create, POST),
        (f"{broadcasts.PAGE}/preview", broadcasts.preview, POST),
        (f"{broadcasts.PAGE}/{{id}}", broadcasts.broadcast_page, GET),
        (f"{broadcasts.PAGE}/{{id}}/live", partial(views.live_partial, live=broadcasts.PROGRESS), GET),
        (f"{broadcasts.PAGE}/{{id}}/cancel", broadcasts.act, POST),
        (f"{broadcasts.PAGE}/{{id}}/send", broadcasts.act, POST),
        (f"{broadcasts.PAGE}/{{id}}/delete", broadcasts.act, BOTH),
        # Comment automations and sequences.
        (f"{automations.PAGE}/recent-posts", automations.recent_posts, GET),
        *_studio(automations.AUTOMATIONS),
        (f"{automations.PAGE}/{{id}}/delete", partial(actions.confirmed_delete, thing=automations.AUTOMATIONS), BOTH),
        *_studio(sequences.SEQUENCES),
        (f"{sequences.PAGE}/{{id}}/enroll", sequences.enroll, POST),
        (f"{sequences.PAGE}/{{id}}/delete", partial(actions.confirmed_delete, thing=sequences.SEQUENCES), BOTH),
        # Analytics, API keys, connected apps, webhooks.
        (analytics.PAGE, analytics.analytics_page, GET),
        (api_keys.PAGE, api_keys.api_keys_page, BOTH),
        (f"{api_keys.PAGE}/{{id}}/revoke", api_keys.revoke_key, BOTH),
        ("/dashboard/settings/connected-apps", connected_apps.connected_apps, GET),
        ("/dashboard/settings/connected-apps/revoke", connected_apps.revoke_app, BOTH),
        # Members, invitations and the audit log.
        (members.PAGE, members.members_page, BOTH),
        (f"{members.PAGE}/{{id}}/role", members.change_member, POST),
        (f"{members.PAGE}/{{id}}/remove", members.remove_member, BOTH),
        ("/dashboard/invitations/{id}/revoke", members.revoke_invitation, POST),
        ("/dashboard/invitations/{token}", partial(members.invitation_page, settings=settings), BOTH),
        (members.AUDIT, members.audit_page, GET),
        (webhooks.PAGE, webhooks.list_page, GET),
        (webhooks.PAGE, webhooks.create, POST),
        (f"{webhooks.PAGE}/deliveries/{{id}}/redeliver", webhooks.redeliver, POST),
        (f"{webhooks.PAGE}/{{id}}", webhooks.endpoint_page, GET),
        (f"{webhooks.PAGE}/{{id}}/live", partial(views.live_partial, live=webhooks.LOG), GET),
        (f"{webhooks.PAGE}/{{id}}/{{action:str}}", webhooks.destructive, GET),
        (f"{webhooks.PAGE}/{{id}}/{{action:str}}", webhooks.action, POST),
    ]


# Who may use a route, by method (`views.RoleGate`): a GET is anyone's in the workspace (a viewer reads
# everything a member reads) and a POST the daily work's (`member`), except as listed here. The
# service holds each rule; this answers a refused person with the 403 page before the view runs, and
# the pages hide the links and buttons (`can` in their templates) a role cannot use.
WORK = Needs("member", "change anything")
ANYONE = Needs("viewer", "")
_MANAGE = {
    "/dashboard/accounts/connected": CONNECT_ACCOUNTS,
    f"{accounts.PAGE}/connect/{{platform}}": CONNECT_ACCOUNTS,
    f"{accounts.PAGE}/choose": CONNECT_ACCOUNTS,
    f"{accounts.PAGE}/{{id}}/disconnect": CONNECT_ACCOUNTS,
    f"{accounts.PAGE}/{{id}}/reconnect": CONNECT_ACCOUNTS,
    f"{accounts.PAGE}/{{id}}/grants/{{grant}}": CONNECT_ACCOUNTS,
    "/dashboard/profiles": MANAGE_PROFILES,
    "/dashboard/profiles/{id}/rename": MANAGE_PROFILES,
    "/dashboard/review/{id}/{decision:str}": REVIEW,
    api_keys.PAGE: MANAGE_KEYS,
    f"{api_keys.PAGE}/{{id}}/revoke": MANAGE_KEYS,
    members.PAGE: MANAGE_MEMBERS,
    f"{members.PAGE}/{{id}}/role": MANAGE_MEMBERS,
    f"{members.PAGE}/{{id}}/remove": MANAGE_MEMBERS,
    "/dashboard/invitations/{id}/revoke": MANAGE_MEMBERS,
    members.AUDIT: READ_AUDIT,
    webhooks.PAGE: MANAGE_WEBHOOKS,
    f"{webhooks.PAGE}/deliveries/{{id}}/redeliver": MANAGE_WEBHOOKS,
    f"{webhooks.PAGE}/{{id}}": MANAGE_WEBHOOKS,
    f"{webhooks.PAGE}/{{id}}/live": MANAGE_WEBHOOKS,
    f"{webhooks.PAGE}/{{id}}/{{action:str}}": MANAGE_WEBHOOKS,
}
# Forms that write and pages that exist only to write (an editor, a question before a deletion).
_WORK_PAGES = {f"{posts.PAGE}/new", f"{posts.PAGE}/{{id}}/edit", f"{broadcasts.PAGE}/new", f"{automations.PAGE}/new",
               f"{sequences.PAGE}/new", f"{posts.PAGE}/{{id}}/delete", f"{media.PAGE}/{{id}}/delete",
               f"{broadcasts.PAGE}/{{id}}/delete", f"{automations.PAGE}/{{id}}/delete",
               f"{sequences.PAGE}/{{id}}/delete", f"{posts.PAGE}/{{id}}/move", f"{automations.PAGE}/recent-posts"}
# Forms anyone may post: the workspace switcher, their own connected apps, an invitation's page, their
# own profile (and the time zone their browser reports).
_ANYONE_POSTS = {"/dashboard/workspace", "/dashboard/settings/connected-apps/revoke", "/dashboard/invitations/{token}",
                 profile.PAGE, f"{profile.PAGE}/browser-zone"}


def needs(path: str, method: str) -> Needs:
    """The least role a route's method needs."""
    if path in _MANAGE:
        return Needs("admin", _MANAGE[path])
    if method == "POST":
        return ANYONE if path in _ANYONE_POSTS else WORK
    return WORK if path in _WORK_PAGES else ANYONE


def _gate(path: str, methods: list[str]) -> list[Middleware]:
    gated = {method: needs(path, method) for method in methods if needs(path, method).role != "viewer"}
    return [Middleware(views.RoleGate, needs=gated)] if gated else []


def build_routes(settings: Settings) -> list[BaseRoute]:
    """The dashboard's routes, for the composition root to mount (after oauth's sign-in)."""
    middleware = [*session_middleware(settings), Middleware(views.NoSeatAnswers)]
    routes: list[BaseRoute] = [
        Mount("/dashboard/static", app=StaticFiles(directory=frame.STATIC), name="dashboard-static",
              middleware=[Middleware(PageHeaders)]),
    ]
    routes += [Route(path, view, methods=methods, middleware=[*middleware, *_gate(path, methods)])
               for path, view, methods in table(settings)]
    routes.append(Route("/dashboard/{rest:path}", frame.not_found, methods=["GET", "POST", "HEAD"],
                        middleware=middleware))
    return routes
