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
from kit.page_headers import PageHeaders
from kit.settings import Settings
from oauth.shell import session_middleware

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


def build_routes(settings: Settings) -> list[BaseRoute]:
    """The dashboard's routes, for the composition root to mount (after oauth's sign-in)."""
    middleware = [*session_middleware(settings), Middleware(views.NoSeatAnswers)]
    routes: list[BaseRoute] = [
        Mount("/dashboard/static", app=StaticFiles(directory=frame.STATIC), name="dashboard-static",
              middleware=[Middleware(PageHeaders)]),
    ]
    routes += [Route(path, view, methods=methods, middleware=middleware) for path, view, methods in table(settings)]
    routes.append(Route("/dashboard/{rest:path}", frame.not_found, methods=["GET", "POST", "HEAD"],
                        middleware=middleware))
    return routes
