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
from starlette.responses import HTMLResponse, Response

from dashboard import refusals
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
    person_zone,
    refused,
    render,
    seat,
)
from kit import scheduling, shapes
from kit.errors import FieldProblem, ServiceError, ValidationFailed
from kit.settings import Settings
from oauth.shell import in_db
from service.accounts import ops as accounts
from service.accounts import platforms
from service.identity.auth import Actor
from service.media import library
from service.media import ops as media_ops
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
# A target not yet taken (`queued`) is waiting for what its post waits for: its time, a publish now
# already under way, an approval, or nothing at all (a draft).
WAITING = {"publishing": ("Going out", "Next in line: it is published in a moment."),
           "scheduled": ("Scheduled", "Waiting for its time."),
           "draft": ("Draft", "Not published: the post is a draft."),
           "pending_approval": ("Awaiting approval", "Published once an owner or an admin approves the post.")}
# Where a post was made, said only when it was not made here.
SOURCES = {"external": "Made on the platform itself, not here."}
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


def _names(body: dict[str, Any], known: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    """The composer's own names of a post's per-target fields: `targets[1].content` is the Text for
    the second chosen account (`content-<id>`), its options the fields of its platform."""
    by_id = {account["id"]: account for account in known}
    named: dict[str, tuple[str, str]] = {}
    for index, target in enumerate(body.get("targets") or []):
        account = by_id.get(target["accountId"])
        label = account["label"] if account else "An account"
        where, box = f"targets[{index}]", f"account-{target['accountId']}"
        named[where] = named[f"{where}.accountId"] = (box, label)
        named[f"{where}.content"] = named[f"{where}.options"] = (f"content-{target['accountId']}",
                                                                  f"Text for {label}")
        for option in platforms.post_options(account["platform"]) if account else ():
            named[f"{where}.options.{option.name}"] = (f"{option.name}-{target['accountId']}",
                                                       f"{option.label} for {label}")
    return named


def _problems(problem: ServiceError, body: dict[str, Any], known: list[dict[str, Any]],
              where: Seat) -> list[refusals.Problem]:
    """A refusal of the composer as its problems; an account without queue slots links to its queue."""
    found = refusals.problems_of(problem, "post", "composer", _names(body, known))
    by_box = {f"account-{a['id']}": a for a in known}
    for index, (item, detail) in enumerate(zip(found, problem.details or [], strict=False)):
        account = by_box.get(item.target)
        if account is not None and detail.message.startswith(queue.NO_FREE_SLOT):
            found[index] = refusals.Problem(
                item.target, f"{account['label']} has no free time in its posting queue, so Add to queue cannot "
                             "place the post.",
                (f"/dashboard/accounts/{account['id']}/queue?workspace={where.workspace_id}",
                 f"Set the posting times of {account['label']}"))
    return found


def _local(moment: dt.datetime | None, zone_name: str | None) -> str:
    """A stored UTC time as a `datetime-local` value in the post's time zone."""
    if moment is None:
        return ""
    return moment.replace(tzinfo=dt.UTC).astimezone(zone_of(zone_name or "UTC")).strftime("%Y-%m-%dT%H:%M")


def _draft(found: dict[str, Any] | None, own_zone: str) -> dict[str, Any]:
    """What the composer shows filled in: nothing for a new post (its time read in the person's
    zone), else the post being edited."""
    if found is None:
        return {"id": None, "content": "", "chosen": set(), "overrides": {}, "options": {}, "publish_at": {},
                "media": set(), "scheduled": "", "timezone": own_zone}
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
def _check(actor: Actor, body: dict[str, Any], known: list[dict[str, Any]], where: Seat) -> dict[str, Any]:
    """Every chosen account's count and problems, and the post's own, without saving anything: the
    rules of the submit (`posts.check`), in the composer's words, and whether Add to queue can place it."""
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
        shown = posts.preview(platform=account["platform"], text=text, options=target.get("options") or {},
                              with_media=with_media)
        free = queue.get(actor=actor, account_id=account["id"]).dump()["nextSlots"]
        counts.append({"label": account["label"], "used": measured.used, "limit": measured.limit,
                       "unit": measured.unit, "over": measured.over, "problems": [], "preview": shown,
                       "queue": None if free else f"/dashboard/accounts/{account['id']}/queue?"
                                                  f"workspace={where.workspace_id}"})
    general: list[str] = []
    image = _first_image(actor, body["mediaIds"])
    try:
        parsed = shapes.parse(PostIn, body)
        posts.check(actor, content=parsed.content, media_ids=list(parsed.media_ids), targets=list(parsed.targets),
                    scheduled_for=parsed.scheduled_for, timezone=parsed.timezone, publish_now=parsed.publish_now)
    except ServiceError as problem:
        general = _sorted_problems(problem, body, known, counts)
    return {"counts": counts, "general": general, "chosen": bool(body["targets"]), "image": image}


def _first_image(actor: Actor, media_ids: list[str]) -> str | None:
    """The address of the post's first media when it is an image (the preview shows it)."""
    found = media_ops.completed(actor.workspace_id, media_ids[:1]) if media_ids else {}
    first = found.get(media_ids[0]) if media_ids else None
    return media_ops.public_url(first.id) if first is not None and str(first.content_type).startswith("image/") \
        else None


def _sorted_problems(problem: ServiceError, body: dict[str, Any], known: list[dict[str, Any]],
                     counts: list[dict[str, Any]]) -> list[str]:
    """Each problem beside its account's count, the post's own (its time, its media) apart."""
    names = _names(body, known)
    general = []
    for detail, said in zip(problem.details or [FieldProblem("", problem.message)],
                            refusals.problems_of(problem, "post", "composer", names), strict=False):
        index = _target_index(detail.field)
        if index is not None and index < len(counts):
            counts[index]["problems"].append(said.message)
        else:
            general.append(said.message)
    return general


def _target_index(name: str) -> int | None:
    if name.startswith("targets[") and "]" in name:
        number = name[8:name.index("]")]
        return int(number) if number.isdigit() else None
    return None


def _check_body(form: FormData, known: list[dict[str, Any]]) -> dict[str, Any]:
    """The body the check judges: the one Schedule sends when a time is given (else a draft's), with
    the time zone judged whenever one is typed, as Schedule would judge it."""
    action = field(form, "action") or ("schedule" if field(form, "scheduledFor") else "draft")
    body = _body(form, known, action)
    if "timezone" not in body and field(form, "timezone"):
        body["timezone"] = field(form, "timezone")
    return body


def check_answer(request: Request, actor: Actor, form: FormData, known: list[dict[str, Any]],
                 where: Seat) -> Response:
    """The check's fragment (also what the benchmark measures)."""
    try:
        body = _check_body(form, known)
        result = _check(actor, body, known, where)
    except ServiceError as problem:
        said = refusals.problems_of(problem, "post", "composer")
        result = {"counts": [], "general": [p.message for p in said], "chosen": True}
    return render(request, "composer_check.html", **result)


# -- storage work for the pages ------------------------------------------------------------------------
def _listing(where: Seat, query: dict[str, Any], sandbox: str | None) -> dict[str, Any]:
    actor = where.actor()
    known = account_rows(actor, connected=False)
    found = posts.list_posts(actor=actor, **{**query, "limit": PER_PAGE})
    names = labels(known)
    items = []
    for post in data_of(found):
        items.append({**post, "targets": [{**t, **_view(t, sandbox), "label": names.get(t["accountId"], t["platform"])}
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


def _sandbox(settings: Settings) -> str | None:
    """Where the sandbox answers, when the service runs on it."""
    return f"{settings.sandbox_base_url}/sandbox" if settings.sandbox else None


def _view(target: dict[str, Any], sandbox: str | None) -> dict[str, str]:
    """Where a published target is seen: the platform's page, or in the sandbox what the emulated
    platform received of the account (the platform's address there names a post that does not exist)."""
    if not target.get("url"):
        return {"viewUrl": "", "viewText": ""}
    if sandbox is not None:
        query = urlencode({"accountId": target["accountId"]})
        return {"viewUrl": f"{sandbox}/{target['platform']}/sent?{query}", "viewText": "View in the sandbox"}
    return {"viewUrl": str(target["url"]), "viewText": f"View on {platform_name(target['platform'])}"}


def _post_page(where: Seat, post_id: str, sandbox: str | None = None) -> dict[str, Any]:
    actor = where.actor()
    post = posts.get(actor=actor, post_id=post_id).dump()
    names = account_names(actor)
    targets = []
    for t in post["targets"]:
        word, meaning = t["status"].capitalize(), TARGET_HELP.get(t["status"], "")
        if t["status"] == "queued":
            word, meaning = WAITING.get(post["status"], (word, meaning))
        targets.append({**t, **_view(t, sandbox), "label": names.get(t["accountId"], t["platform"]), "help": meaning,
                        "statusText": word, "platformName": platform_name(t["platform"])})
    return {"post": {**post, "targets": targets, "sourceText": SOURCES.get(post["source"], "")},
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
            # The day as the person lives it: from midnight in their zone.
            query[name] = scheduling.local_instant_text(f"{day.isoformat()}T00:00", person_zone(request))
    if chosen["page"]:
        query["page"] = chosen["page"]
    return dict(shapes.parse(PostQuery, query)), chosen  # a bad window: list_posts's 422


async def list_page(request: Request, *, settings: Settings) -> Response:
    try:
        where = await seat(request)
        query, chosen = _filters(request)
        listed = await in_db(_listing, where, query, _sandbox(settings))
    except ServiceError as problem:
        return failure(request, problem, PAGE)
    params = urlencode({k: v for k, v in {**chosen, "workspace": where.workspace_id}.items() if v and k != "page"})
    return page(request, "posts.html", where, title="Posts", nav="posts", chosen=chosen, statuses=POST_STATUSES,
                params=params, current_page=int(query.get("page") or 1), **listed)


async def composer(request: Request) -> Response:
    post_id = request.path_params.get("id")
    where = await seat(request)
    return await _composer_page(request, where, post_id)


async def _composer_page(request: Request, where: Seat, post_id: str | None) -> HTMLResponse:
    """The composer, empty or with the post being edited (what a refusal fills in again)."""
    try:
        data = await in_db(_composer_data, where)
        actor = await in_db(where.actor)
        found = await in_db(lambda: posts.editable(actor=actor, post_id=post_id)) if post_id else None
    except ServiceError as problem:
        return refused(request, problem, f"{PAGE}/{post_id}", MISSING)
    levels = await in_own(lambda: _live_choices(actor, data["accounts"]))
    return page(request, "composer.html", where, title="Edit post" if post_id else "New post", nav="posts",
                levels=levels, form_key=form_key(), actions=ACTIONS,
                draft=_draft(found, person_zone(request)), **data)


async def check(request: Request) -> Response:
    where, form = await acting(request)
    actor = await in_db(where.actor)
    known = await in_db(lambda: account_rows(actor))
    return await in_own(lambda: check_answer(request, actor, form, known, where))


async def create(request: Request) -> Response:
    post_id = request.path_params.get("id")
    where, form = await acting(request)
    action = field(form, "action")
    body: dict[str, Any] = {}
    known: list[dict[str, Any]] = []
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
    except ServiceError as problem:
        if problem.status == 404:
            return not_found(request, MISSING)
        again = await _composer_page(request, where, post_id)
        problems = _problems(problem, body, known, where)
        return refusals.again(again, problem.status, form, request.url.path, problems)
    if made is None:
        return done(request, "This post was saved already (the form was sent twice).", PAGE, where)
    outcome = {"publish": "Publishing now.", "schedule": "Scheduled.", "queue": "Added to the queue.",
               "draft": "Saved as a draft."}[action]
    return done(request, f"{outcome} The post is {made.status}.", f"{PAGE}/{made.id}", where)


async def post_page(request: Request, *, settings: Settings) -> Response:
    try:
        where = await seat(request)
        data = await in_db(_post_page, where, request.path_params["id"], _sandbox(settings))
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


WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")  # 1 … 7
QUEUE_ZONE_PROBLEM = "Choose a time zone from the list, such as Europe/Berlin."


def _minutes(value: str) -> str:
    """A time picker that shows seconds sends 09:30:00; the queue keeps minutes."""
    return value[:5] if len(value) == 8 and value.endswith(":00") else value


def _slot_rows(form: FormData) -> list[dict[str, str]]:
    """The queue editor's rows as sent: a day and a time each (a row left without a time is none)."""
    pairs = zip(form.getlist("day"), form.getlist("time"), strict=False)
    rows = [{"weekday": str(day).strip(), "time": _minutes(str(at).strip())} for day, at in pairs]
    return [row for row in rows if row["time"]]


def _queue_problem(problem: ServiceError) -> dict[str, str]:
    """A refused queue in the editor's words, by the field it belongs beside."""
    found: dict[str, str] = {}
    for detail in problem.details or [FieldProblem("slots", problem.message)]:
        if detail.field.startswith("timezone"):
            found["zone"] = QUEUE_ZONE_PROBLEM
        elif detail.field.endswith(".weekday"):
            found.setdefault("slots", "Choose a day for each slot.")
        elif detail.field.endswith(".time"):
            found.setdefault("slots", "Give each slot a time of day, such as 09:30.")
        else:
            found.setdefault("slots", f"{'The slots' if detail.field.startswith('slots') else 'The queue'} "
                                      f"{detail.message}")
    return found


async def queue_page(request: Request) -> Response:
    """An account's weekly slots, one row each (a day and a time picker), in the queue's own zone;
    the next free slots are shown in that zone. A refused queue comes back as it was sent."""
    account_id = request.path_params["id"]
    back = f"/dashboard/accounts/{account_id}/queue"
    problem: dict[str, str] = {}
    sent: dict[str, Any] | None = None
    try:
        if request.method == "POST":
            where, form = await acting(request)
            rows = _slot_rows(form)
            sent = {"slots": rows, "timezone": field(form, "timezone")}
            try:
                body = shapes.parse(QueueIn, {"timezone": sent["timezone"] or person_zone(request),
                                             "slots": [{"weekday": number(r["weekday"]), "time": r["time"]}
                                                       for r in rows]})
                await in_db(lambda: queue.put(actor=where.actor(), account_id=account_id, **dict(body)))
                return done(request, "Saved the posting queue.", back, where)
            except ValidationFailed as refusal:
                problem = _queue_problem(refusal)
                # A wrong zone is said at once too, not only once the slots are right.
                if scheduling.zone(sent["timezone"] or person_zone(request)) is None:
                    problem["zone"] = QUEUE_ZONE_PROBLEM
        else:
            where = await seat(request)
        record = (await in_db(lambda: queue.get(actor=where.actor(), account_id=account_id))).dump()
        account = await in_db(lambda: accounts.get(actor=where.actor(), account_id=account_id).dump())
    except ServiceError as refusal:
        return refused(request, refusal, back, "No account with that id.")
    label = f"{platform_name(account['platform'])} · {account_name(account)}"
    # A queue never set reads its slots in the person's zone, not UTC.
    shown = sent or {"slots": record["slots"],
                     "timezone": record["timezone"] if record["slots"] else person_zone(request)}
    return page(request, "queue.html", where, status=422 if problem else 200, title=f"Queue of {label}",
                nav="accounts", queue=record, shown=shown, problem=problem, weekdays=WEEKDAYS, label=label,
                account=account)
