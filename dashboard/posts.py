"""Posts: the list (by status, account and date) with each target's status, a post's page (Retry,
Delete, also from the platforms), the composer (New post) and each account's posting queue.

The composer builds the very body `POST /v1/posts` takes and asks the server to check it as the
person types (`/dashboard/posts/check`, htmx): the same `posts.check` as `/v1`, and each platform's
count from `posts.measure`, the rule the check applies (X's weighted length), never a copy of it in
JavaScript that could drift."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import urlencode

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from dashboard.forms import (
    PER_PAGE,
    account_name,
    account_names,
    account_rows,
    form_key,
    labels,
    number,
    once,
    platform_name,
    scheduled,
    zone_of,
)
from dashboard.views import (
    Seat,
    acting,
    confirm,
    data_of,
    done,
    failure,
    field,
    in_own,
    not_found,
    page,
    refused,
    render,
    seat,
)
from kit import scheduling, shapes
from kit.errors import FieldProblem, ServiceError, ValidationFailed
from oauth.shell import in_db
from service.accounts import ops as accounts
from service.accounts import platforms
from service.identity.auth import Actor
from service.media import library
from service.posts import approvals, publishing, queue
from service.posts import ops as posts
from service.posts.shapes import POST_STATUSES, PostIn, PostQuery, QueueIn
from service.posts.shapes import Post as PostRecord

PAGE = "/dashboard/posts"
MISSING = "No post with that id."
# What a target's status means, and what to do about it.
TARGET_HELP = {
    "queued": "Waiting for its time.",
    "publishing": "Being published now.",
    "published": "Live on the platform.",
    "failed": "The platform refused it. Fix what the reason names, then Retry: targets already live are "
              "never published twice.",
    "unknown": "The service stopped while the platform was publishing it: it may be live. Check the account "
               "on the platform; Retry only if it is not there.",
}
ACTIONS = {"publish": "Publish now", "schedule": "Schedule", "queue": "Add to queue", "draft": "Save draft"}


# -- the composer's body -----------------------------------------------------------------------------
def _options(form: FormData, account: dict[str, Any]) -> dict[str, Any]:
    """The platform options a person sets in the composer, as `targets[].options`: the fields its
    adapter declares (`platforms.post_options`), each read by its kind."""
    options: dict[str, Any] = {}
    for option in platforms.post_options(account["platform"]):
        value = field(form, f"{option.name}-{account['id']}")
        if option.kind == "parts":
            parts = [part.strip() for part in value.replace("\r\n", "\n").split("\n\n")]
            if any(parts):
                options[option.name] = [part for part in parts if part]
        elif value:
            options[option.name] = _instant(value, field(form, "timezone")) if option.kind == "local_time" else value
    return options


def _instant(local: str, zone_name: str) -> str:
    """A `datetime-local` value read in the form's time zone, as the ISO instant YouTube's option takes."""
    return scheduling.local_instant_text(local, zone_name)


def _body(form: FormData, known: list[dict[str, Any]], action: str) -> dict[str, Any]:
    chosen = set(form.getlist("accounts"))
    targets = []
    for account in known:
        if account["id"] not in chosen:
            continue
        target: dict[str, Any] = {"accountId": account["id"]}
        override = form.get(f"content-{account['id']}")
        if isinstance(override, str) and override.strip():
            target["content"] = override
        options = _options(form, account)
        if options:
            target["options"] = options
        targets.append(target)
    for unknown in chosen - {a["id"] for a in known}:
        targets.append({"accountId": unknown})  # the service says it is not an account here
    text = form.get("text")
    body: dict[str, Any] = {"content": text if isinstance(text, str) else "", "targets": targets,
                            "mediaIds": [str(m) for m in form.getlist("mediaIds")]}
    if action == "publish":
        body["publishNow"] = True
    elif action == "queue":
        body["addToQueue"] = True
    elif action == "schedule":
        body |= scheduled(form, "publish")
    return body


def _targets_problem(problem: ValidationFailed, known: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """A refusal in words a person reads: `targets[1].content` becomes the account's name."""
    names = labels(known)
    parts = []
    for detail in problem.details or []:
        where = detail.field
        if where.startswith("targets["):
            index = int(where[8:where.index("]")])
            if index < len(body["targets"]):
                rest = where[where.index("]") + 2:] if "]." in where else "account"
                where = f"{names.get(body['targets'][index]['accountId'], 'an account')} ({rest})"
        parts.append(f"{where}: {detail.message}")
    return "; ".join(parts) or problem.message


def _local(moment: dt.datetime | None, zone_name: str | None) -> str:
    """A stored UTC time as a `datetime-local` value in the post's time zone."""
    if moment is None:
        return ""
    return moment.replace(tzinfo=dt.UTC).astimezone(zone_of(zone_name or "UTC")).strftime("%Y-%m-%dT%H:%M")


def _draft(found: dict[str, Any] | None) -> dict[str, Any]:
    """What the composer shows filled in: nothing for a new post, else the post being edited."""
    if found is None:
        return {"id": None, "content": "", "chosen": set(), "overrides": {}, "options": {}, "publish_at": {},
                "media": set(), "scheduled": "", "timezone": "UTC"}
    zone_name = found["timezone"] or "UTC"
    options = {t["account_id"]: t["options"] for t in found["targets"]}
    publish_at = {}
    for account_id, chosen in options.items():
        if isinstance(chosen.get("publishAt"), str):
            try:
                moment = dt.datetime.fromisoformat(chosen["publishAt"].replace("Z", "+00:00"))
                publish_at[account_id] = _local(moment.astimezone(dt.UTC).replace(tzinfo=None), zone_name)
            except ValueError:
                continue
    return {"id": found["id"], "content": found["content"], "chosen": set(options), "options": options,
            "overrides": {t["account_id"]: t["content"] for t in found["targets"] if t["content"] is not None},
            "publish_at": publish_at, "media": set(found["media_ids"]),
            "scheduled": _local(found["scheduled_for"], zone_name), "timezone": zone_name}


# -- the check as the person types ---------------------------------------------------------------------
def _check(actor: Actor, body: dict[str, Any], known: list[dict[str, Any]]) -> dict[str, Any]:
    """Every chosen account's count and problems, and the post's own, without saving anything."""
    if not body["targets"]:
        return {"counts": [], "general": [], "chosen": False}
    by_id = {a["id"]: a for a in known}
    with_media = bool(body["mediaIds"])
    counts = []
    for target in body["targets"]:
        account = by_id.get(target["accountId"])
        if account is None:
            continue
        text = target.get("content", body["content"])
        measured = posts.measure(platform=account["platform"], text=text, with_media=with_media)
        counts.append({"label": account["label"], "used": measured.used, "limit": measured.limit,
                       "unit": measured.unit, "over": measured.over, "problems": []})
    general: list[str] = []
    try:
        parsed = shapes.parse(PostIn, body)
        posts.check(actor, content=parsed.content, media_ids=list(parsed.media_ids), targets=list(parsed.targets),
                    scheduled_for=parsed.scheduled_for, timezone=parsed.timezone, publish_now=parsed.publish_now)
    except ValidationFailed as problem:
        for detail in problem.details or [FieldProblem("post", problem.message)]:
            if detail.field.startswith("targets[") and "]" in detail.field:
                index = int(detail.field[8:detail.field.index("]")])
                rest = detail.field[detail.field.index("]") + 1:].lstrip(".") or "account"
                if index < len(counts):
                    counts[index]["problems"].append(f"{rest}: {detail.message}")
                    continue
            general.append(f"{detail.field}: {detail.message}")
    except ServiceError as problem:
        general.append(problem.message)
    return {"counts": counts, "general": general, "chosen": bool(body["targets"])}


def check_answer(request: Request, actor: Actor, form: FormData, known: list[dict[str, Any]]) -> Response:
    """The check's fragment (also what the benchmark measures)."""
    try:
        body = _body(form, known, field(form, "action") or "draft")
        result = _check(actor, body, known)
    except ValidationFailed as problem:
        general = [f"{d.field}: {d.message}" for d in problem.details or []] or [problem.message]
        result = {"counts": [], "general": general, "chosen": True}
    return render(request, "composer_check.html", **result)


# -- storage work for the pages ------------------------------------------------------------------------
def _listing(where: Seat, query: dict[str, Any]) -> dict[str, Any]:
    actor = where.actor()
    known = account_rows(actor, connected=False)
    found = posts.list_posts(actor=actor, **{**query, "limit": PER_PAGE})
    names = labels(known)
    items = []
    for post in data_of(found):
        items.append({**post, "targets": [{**t, "label": names.get(t["accountId"], t["platform"])}
                                          for t in post["targets"]]})
    # Owners and admins review members' posts here (the workspace's `postApproval` holds them).
    review = [post.dump() for post in approvals.pending(actor=actor)] if actor.has_role("admin") else None
    return {"posts": items, "total": found.total, "pages": found.pages, "accounts": known, "review": review}


def _composer_data(where: Seat) -> dict[str, Any]:
    actor = where.actor()
    known = [{**a, "fields": platforms.post_options(a["platform"])} for a in account_rows(actor)
             if a["capabilities"].get("publish")]
    slots = {}
    for account in known:
        record = queue.get(actor=actor, account_id=account["id"]).dump()
        if record["nextSlots"]:
            slots[account["id"]] = record["nextSlots"][:3]
    media = data_of(library.list_media(actor=actor, limit=50))
    return {"accounts": known, "slots": slots, "media": media}


def _live_choices(actor: Actor, known: list[dict[str, Any]]) -> dict[str, list[str] | str]:
    """For each account whose platform lists an option's choices live (TikTok's privacy levels),
    those choices, read from the platform (outside any transaction), or why they could not be."""
    found: dict[str, list[str] | str] = {}
    for account in known:
        live = [option for option in platforms.post_options(account["platform"]) if option.kind == "live_select"]
        if not live:
            continue
        try:
            options = accounts.publish_options(actor=actor, account_id=account["id"])
            found[account["id"]] = list(options.get(live[0].live_key) or [])
        except ServiceError as problem:
            found[account["id"]] = f"The choices of {live[0].label} could not be read: {problem.message}"
    return found


def _post_page(where: Seat, post_id: str) -> dict[str, Any]:
    actor = where.actor()
    post = posts.get(actor=actor, post_id=post_id).dump()
    names = account_names(actor)
    targets = [{**t, "label": names.get(t["accountId"], t["platform"]), "help": TARGET_HELP.get(t["status"], ""),
                "platformName": platform_name(t["platform"])} for t in post["targets"]]
    return {"post": {**post, "targets": targets},
            "retryable": any(t["status"] in ("failed", "unknown") for t in targets)}


def _filters(request: Request) -> tuple[dict[str, Any], dict[str, str]]:
    """The list's filters (status, account, a day range) as `/v1`'s query, checked by its shape."""
    params = request.query_params
    chosen = {name: params.get(name, "") for name in ("status", "account", "from", "to", "page")}
    query: dict[str, Any] = {}
    if chosen["status"]:
        query["status"] = chosen["status"]
    if chosen["account"]:
        query["accountId"] = chosen["account"]
    for name in ("from", "to"):
        if chosen[name]:
            try:
                day = dt.date.fromisoformat(chosen[name])
            except ValueError:
                raise ValidationFailed.field(name, "must be a date (YYYY-MM-DD)") from None
            if not dt.date(1970, 1, 1) <= day <= dt.date(9999, 12, 29):
                raise ValidationFailed.field(name, "must lie between 1970-01-01 and 9999-12-29")
            if name == "to":
                day += dt.timedelta(days=1)  # the last day is included
            query[name] = f"{day.isoformat()}T00:00:00Z"
    if chosen["page"]:
        query["page"] = chosen["page"]
    return dict(shapes.parse(PostQuery, query)), chosen  # a bad window: list_posts's 422


async def list_page(request: Request) -> Response:
    try:
        where = await seat(request)
        query, chosen = _filters(request)
        listed = await in_db(_listing, where, query)
    except ServiceError as problem:
        return failure(request, problem, PAGE)
    params = urlencode({k: v for k, v in {**chosen, "workspace": where.workspace_id}.items() if v and k != "page"})
    return page(request, "posts.html", where, title="Posts", nav="posts", chosen=chosen, statuses=POST_STATUSES,
                params=params, current_page=int(query.get("page") or 1), **listed)


async def composer(request: Request) -> Response:
    post_id = request.path_params.get("id")
    try:
        where = await seat(request)
        data = await in_db(_composer_data, where)
        actor = await in_db(where.actor)
        found = await in_db(lambda: posts.editable(actor=actor, post_id=post_id)) if post_id else None
    except ServiceError as problem:
        return refused(request, problem, f"{PAGE}/{post_id}", MISSING)
    levels = await in_own(lambda: _live_choices(actor, data["accounts"]))
    return page(request, "composer.html", where, title="Edit post" if post_id else "New post", nav="posts",
                levels=levels, form_key=form_key(), actions=ACTIONS,
                draft=_draft(found), **data)


async def check(request: Request) -> Response:
    where, form = await acting(request)
    actor = await in_db(where.actor)
    known = await in_db(lambda: account_rows(actor))
    return await in_own(lambda: check_answer(request, actor, form, known))


async def create(request: Request) -> Response:
    post_id = request.path_params.get("id")
    back = f"{PAGE}/{post_id}/edit" if post_id else f"{PAGE}/new"
    where, form = await acting(request)
    action = field(form, "action")
    body: dict[str, Any] = {}
    try:
        actor = await in_db(where.actor)
        if post_id:  # another workspace's post is a 404 before its fields are judged
            await in_db(lambda: posts.get_row(actor=actor, post_id=post_id))
        known = await in_db(lambda: account_rows(actor))
        if action not in ACTIONS:
            raise ValidationFailed.field("action", "choose Publish now, Schedule, Add to queue or Save draft")
        body = _body(form, known, action)
        parsed = shapes.parse(PostIn, body)
        made: PostRecord | None
        if post_id:
            made = await in_own(lambda: posts.update(actor=actor, post_id=post_id, **dict(parsed)))
        else:
            made = await once(request, where, form, lambda actor: posts.create(actor=actor, **dict(parsed)))
    except ValidationFailed as problem:
        readable = ValidationFailed(_targets_problem(problem, known, body)) if body.get("targets") else problem
        return failure(request, readable, f"{back}?workspace={where.workspace_id}")
    except ServiceError as problem:
        return refused(request, problem, f"{back}?workspace={where.workspace_id}", MISSING)
    if made is None:
        return done(request, "This post was saved already (the form was sent twice).", PAGE, where)
    outcome = {"publish": "Publishing now.", "schedule": "Scheduled.", "queue": "Added to the queue.",
               "draft": "Saved as a draft."}[action]
    return done(request, f"{outcome} The post is {made.status}.", f"{PAGE}/{made.id}", where)


async def post_page(request: Request) -> Response:
    try:
        where = await seat(request)
        data = await in_db(_post_page, where, request.path_params["id"])
    except ServiceError:
        return not_found(request, MISSING)
    return page(request, "post.html", where, title="Post", nav="posts", **data)


async def retry(request: Request) -> Response:
    post_id = request.path_params["id"]
    back = f"{PAGE}/{post_id}"
    try:
        where, _form = await acting(request)
        await in_db(lambda: publishing.retry(actor=where.actor(), post_id=post_id))
    except ServiceError as problem:
        return refused(request, problem, back, MISSING)
    return done(request, "Publishing the failed targets again.", back, where)


async def delete(request: Request) -> Response:
    post_id = request.path_params["id"]
    try:
        if request.method == "GET":
            where = await seat(request)
            data = await in_db(_post_page, where, post_id)
            live = data["post"]["status"] in ("published", "partial")
            return confirm(request, where, title="Delete post", question="Delete this post?",
                           detail=("It is live: it is deleted on each platform that lets apps delete posts, "
                                   "and here." if live else "It is deleted here; nothing of it is live."),
                           action=f"{PAGE}/{post_id}/delete" + ("?fromPlatforms=true" if live else ""),
                           button="Delete", cancel=f"{PAGE}/{post_id}?workspace={where.workspace_id}")
        where, _form = await acting(request)
        everywhere = request.query_params.get("fromPlatforms") == "true"
        actor = await in_db(where.actor)
        await in_own(lambda: posts.delete(actor=actor, post_id=post_id, from_platforms=everywhere or None))
    except ServiceError as problem:
        return refused(request, problem, f"{PAGE}/{post_id}", MISSING)
    return done(request, "Deleted the post" + (" here and on the platforms." if everywhere else "."), PAGE, where)


async def move(request: Request) -> Response:
    """A scheduled post moved to another day (the calendar's drag and drop, or the post page's
    form), at the same time of day in its time zone: the post's own body sent back through
    `posts.update` with the new time, so every rule of a change holds."""
    post_id = request.path_params["id"]
    try:
        where, form = await acting(request)
        actor = await in_db(where.actor)
        found = await in_db(lambda: posts.editable(actor=actor, post_id=post_id))
        try:
            day = dt.date.fromisoformat(field(form, "date"))
        except ValueError:
            raise ValidationFailed.field("date", "must be a date (YYYY-MM-DD)") from None
        if found["scheduled_for"] is None:
            raise ValidationFailed.field("date", "only a scheduled post moves; give a draft its time in Edit")
        zone_name = found["timezone"] or "UTC"
        local = found["scheduled_for"].replace(tzinfo=dt.UTC).astimezone(zone_of(zone_name))
        body = shapes.parse(PostIn, {
            "content": found["content"], "mediaIds": found["media_ids"],
            "targets": [{"accountId": t["account_id"],
                         **({"content": t["content"]} if t["content"] is not None else {}),
                         **({"options": t["options"]} if t["options"] else {})} for t in found["targets"]],
            "scheduledFor": f"{day.isoformat()}T{local:%H:%M:%S}", "timezone": zone_name})
        moved = await in_own(lambda: posts.update(actor=actor, post_id=post_id, **dict(body)))
    except ServiceError as problem:
        return refused(request, problem, f"{PAGE}/{post_id}", MISSING)
    return done(request, f"Moved to {day:%A %d %B}: scheduled for {moved.dump()['scheduledFor']}.",
                f"{PAGE}/{post_id}", where)


async def queue_page(request: Request) -> Response:
    account_id = request.path_params["id"]
    back = f"/dashboard/accounts/{account_id}/queue"
    try:
        if request.method == "POST":
            where, form = await acting(request)
            slots = []
            for line in (x.strip() for x in field(form, "slots").splitlines()):
                if line:
                    day, _, at = line.partition(" ")
                    slots.append({"weekday": number(day), "time": at.strip()})
            body = shapes.parse(QueueIn, {"timezone": field(form, "timezone") or "UTC", "slots": slots})
            await in_db(lambda: queue.put(actor=where.actor(), account_id=account_id, **dict(body)))
            return done(request, "Saved the posting queue.", back, where)
        where = await seat(request)
        record = (await in_db(lambda: queue.get(actor=where.actor(), account_id=account_id))).dump()
        account = await in_db(lambda: accounts.get(actor=where.actor(), account_id=account_id).dump())
    except ServiceError as problem:
        return refused(request, problem, back, "No account with that id.")
    label = f"{platform_name(account['platform'])} · {account_name(account)}"
    return page(request, "queue.html", where, title=f"Queue of {label}", nav="accounts", queue=record,
                label=label, account=account)
