"""The person's own settings: the time zone every dashboard time is shown in.

A person's zone is first their browser's: the sign-in form sends it, and for a person who signed
in another way (an identity provider, an invitation's sign-up) the frame's script sends it from
the first page (`browser_zone`), which keeps it only while none is set. Here they change it.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from dashboard import views
from kit.errors import ValidationFailed
from oauth.shell import in_db
from service.identity import users

PAGE = "/dashboard/profile"
ZONE_PROBLEM = "Choose a time zone from the list, such as Europe/Lisbon or America/Sao_Paulo."


async def profile_page(request: Request) -> Response:
    user = await views.signed_in(request)
    if request.method == "GET":
        return views.render(request, "profile.html", title="Your profile", nav="profile", email=user[1],
                            zone_value=views.person_zone(request), zone_error=None,
                            flashes=views.take_flashes(request))
    form = await views.checked_form(request)
    chosen = views.field(form, "timeZone")
    try:
        saved = await in_db(lambda: users.set_time_zone(user_id=user[0], name=chosen))
    except ValidationFailed as problem:
        # The page again, with what was typed and the problem beside the field (never a blank form).
        return views.render(request, "profile.html", status=problem.status, title="Your profile", nav="profile",
                            email=user[1], zone_value=chosen, zone_error=ZONE_PROBLEM)
    views.flash(request, f"Saved: times are shown in {saved}.")
    return RedirectResponse(PAGE, status_code=303)


async def browser_zone(request: Request) -> Response:
    """The frame's script: the browser's zone, kept only if the person has none yet."""
    user = await views.signed_in(request)
    form = await views.checked_form(request)
    kept = await in_db(lambda: users.adopt_time_zone(user_id=user[0], name=views.field(form, "timeZone")))
    return JSONResponse({"saved": kept}, headers={"Cache-Control": "no-store"})
