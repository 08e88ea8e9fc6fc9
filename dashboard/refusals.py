"""A refused form, answered as the same page again: filled in with what the person sent, an error
summary at the top linking to each field, and each problem beside its field, in the form's own
words. The service names fields as `/v1` does (`botToken`, `targets[1].options.thread`, `mediaIds`);
`FIELDS` is the one place those names become a form's field and label.

How it works: the view renders its page as a GET would, and `refill` rewrites that HTML: the form
that was posted (found by its `action`) gets back the values sent (text, ticks, choices; never a
password or a hidden field), and the problems go in beside the fields they name. So a template
shows its form once, and a refusal needs nothing of it but the ids its labels already use.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape
from starlette.datastructures import FormData
from starlette.responses import HTMLResponse

from kit.errors import FieldProblem, ServiceError
from service.accounts import platforms

# Each form's fields: the service's name of a field → (the field's id on the page, its label).
# Indexed names (`events[2]`) fall back to their list's name (`events`).
FIELDS: dict[str, dict[str, tuple[str, str]]] = {
    "post": {"content": ("post-text", "Text"), "mediaIds": ("media-choices", "Media"),
             "scheduledFor": ("publish-at", "Publish at"), "timezone": ("time-zone", "Time zone"),
             "targets": ("accounts", "Accounts"), "publishNow": ("publish-at", "Publish at"),
             "addToQueue": ("accounts", "Add to queue"), "action": ("composer-actions", "What to do")},
    "broadcast": {"accountId": ("bc-account", "Account"), "name": ("bc-name", "Name"), "text": ("bc-text", "Text"),
                  "buttonLabel": ("bc-button-label", "Button label"), "buttonUrl": ("bc-button-url", "Button URL"),
                  "template": ("bc-template", "WhatsApp template"),
                  "template.name": ("bc-template", "WhatsApp template"),
                  "template.language": ("bc-template", "WhatsApp template"),
                  "template.parameters": ("bc-parameters", "Template parameters"),
                  "audience": ("bc-days", "Audience"),
                  "audience.activeWithinDays": ("bc-days", "Contacts active within"),
                  "audience.conversationIds": ("bc-conversations", "Conversations"),
                  "scheduledFor": ("bc-at", "Send at"), "timezone": ("bc-tz", "Time zone"),
                  "sendNow": ("bc-at", "Send at"), "action": ("bc-actions", "What to do")},
    "webhook": {"url": ("url", "URL"), "description": ("description", "Description"), "events": ("events", "Events")},
    "api_key": {"name": ("name", "Name"), "permission": ("permission", "Permission"), "scope": ("scope", "Scope"),
                "profileIds": ("key-profiles", "Profiles"), "expiresInDays": ("expiresInDays", "Expires after")},
    "invite": {"email": ("invite-email", "E-mail"), "role": ("invite-role", "Role"),
               "profileIds": ("invite-profiles", "Profiles")},
    # Connections by token: the fields its platform's token shape declares, each the input's id.
    "token": {"botToken": ("botToken", "Bot token"), "channel": ("channel", "Channel"),
              "phoneNumberId": ("phoneNumberId", "Phone number ID"),
              "wabaId": ("wabaId", "WhatsApp Business account ID"), "accessToken": ("accessToken", "Access token")},
    "profile": {"name": ("new-profile", "New profile")},
    # A post moved on the calendar: its new day and time, read in the calendar's zone (`tz`).
    "move": {"scheduledFor": ("move-time", "The new time"), "timezone": ("move-time", "The time zone"),
             "date": ("move-date", "The day"), "time": ("move-time", "The time"),
             "tz": ("move-date", "The calendar's time zone")},
    "reply": {"text": ("reply-text", "Message"), "buttonLabel": ("reply-button-label", "Button label"),
              "buttonUrl": ("reply-button-url", "Button URL"), "template": ("reply-template", "Template"),
              "template.parameters": ("reply-parameters", "Template parameters"),
              "savedReplyId": ("reply-saved", "Saved reply")},
    "upload": {"filename": ("upload-file", "The file's name"), "size": ("upload-file", "The file"),
               "contentType": ("upload-file", "The file's type")},
    "sequence": {"accountId": ("seq-account", "Account"), "name": ("seq-name", "Name"),
                 "trigger": ("seq-trigger", "Trigger"), "automationId": ("seq-automation", "Comment automation"),
                 "keywords": ("seq-keywords", "Keywords"), "matchType": ("seq-match", "Match type"),
                 "status": ("seq-status", "Status"), "steps": ("step-1-text", "Steps")},
    "automation": {"accountId": ("ca-account", "Account"), "name": ("ca-name", "Name"),
                   "keywords": ("ca-keywords", "Keywords"), "matchType": ("ca-match", "Match type"),
                   "mediaIds": ("ca-media", "Only on these posts"), "dmText": ("ca-dm", "DM text"),
                   "dmButtonLabel": ("ca-button-label", "DM button label"),
                   "dmButtonUrl": ("ca-button-url", "DM button URL"),
                   "publicReplyText": ("ca-public", "Public reply"), "status": ("ca-status", "Status")},
}
# What a field looks like, said after "has the wrong form" (the shape's words for a pattern it missed).
SHAPES: dict[str, str] = {
    "botToken": "BotFather gives it as digits, a colon, then letters and digits (123456789:AA…)",
    "channel": "a channel's @name, or its id beginning -100",
    "phoneNumberId": "the number's ID from the WhatsApp Manager: digits",
    "wabaId": "the account's ID from the WhatsApp Manager: digits",
}
WRONG_FORM = "has the wrong form"
# A sequence's steps: `steps[0].text` is the first step's "Step 1 text" (`step-1-text`).
_STEP = re.compile(r"^steps\[(\d+)\](?:\.(\w+))?")
_STEP_FIELDS = {"text": ("text", "text"), "delayMinutes": ("delay", "delay"), "buttonLabel": ("label", "button label"),
                "buttonUrl": ("url", "button URL")}
# Messages that are a predicate of the field ("must be…", "is required…") follow its label.
_PREDICATE = re.compile(r"^(must|is|are|has|have|was|weighs|takes|needs|cannot|can|does|do|should|may|only|"
                        r"already|not|contains|lies|looks)\b")


@dataclass(frozen=True)
class Problem:
    """One problem as the page shows it: beside the element `target` (its id) and in the summary,
    linking there; `link` (address, words) where a page elsewhere is the way to fix it."""

    target: str
    message: str
    link: tuple[str, str] | None = None


def sentence(label: str, message: str) -> str:
    """`Bot token` + `has the wrong form` → "Bot token has the wrong form."; a platform's id in the
    message becomes its name ("youtube needs a video" → "YouTube needs a video")."""
    words = _platform_names(message.strip())
    if label and _PREDICATE.match(words):
        text = f"{label} {words}"
    elif label:
        text = f"{label}: {words}"
    else:
        text = words[:1].upper() + words[1:]
    return text if text.endswith((".", "?", "!", ")")) else text + "."


def _platform_names(message: str) -> str:
    def named(match: re.Match[str]) -> str:
        word = match.group(2)
        return match.group(1) + (platforms.display_name(word) if platforms.known(word) else word)
    return re.sub(r"(^|\bon |\bto |\bof )([a-z_]+)\b", named, message)


def field_of(form_name: str, name: str, named: Mapping[str, tuple[str, str]] | None = None
             ) -> tuple[str, str] | None:
    """The page's id and label of a service field of the form `form_name` (or of `named`, the
    page's own names), or None; `options.thread[2]` falls back to `options.thread`."""
    known = {**FIELDS[form_name], **(named or {})}
    step = _STEP.match(name)
    if form_name == "sequence" and step:
        number, part = int(step.group(1)) + 1, _STEP_FIELDS.get(step.group(2) or "text", ("text", "text"))
        return f"step-{number}-{part[0]}", f"Step {number} {part[1]}"
    while name:
        if name in known:
            return known[name]
        trimmed = re.sub(r"(\[\d+\]|\.[^.\[]+)$", "", name)
        if trimmed == name:
            break
        name = trimmed
    return None


def label_anywhere(name: str) -> str:
    """A field's label on whichever form names it first (a refusal outside a form's page), else its
    name spelt as words (`scheduledFor` → "Scheduled for")."""
    for form_name in FIELDS:
        spot = field_of(form_name, name)
        if spot is not None:
            return spot[1]
    last = re.sub(r"\[\d+\]", "", name).rsplit(".", 1)[-1]
    words = re.sub(r"(?<=[a-z0-9])([A-Z])", r" \1", last).lower()
    return words[:1].upper() + words[1:]


def problems_of(problem: ServiceError, form_name: str, top: str,
                named: Mapping[str, tuple[str, str]] | None = None) -> list[Problem]:
    """The service's refusal as the page's problems. `named` adds names only this page knows
    (a composer's `targets[1].content` → the Text for that account); anything unnamed goes at
    the form's top (`top`), its message without a field name."""
    found: list[Problem] = []
    for detail in problem.details or [FieldProblem("", problem.message)]:
        spot = field_of(form_name, detail.field, named) if detail.field else None
        target, label = spot if spot else (top, "")
        message = detail.message
        if message == WRONG_FORM and detail.field in SHAPES:
            message = f"{message}: {SHAPES[detail.field]}"
        found.append(Problem(target, sentence(label, message)))
    return found


# -- the page again, filled in ---------------------------------------------------------------------
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>", re.S)
_ATTR = re.compile(r"([^\s=/>]+)(?:\s*=\s*\"([^\"]*)\")?")
_ATTR_RAW = re.compile(r"([^\s=/>]+)(\s*=\s*\"[^\"]*\")?")
_TEXTLIKE_SKIP = {"hidden", "password", "file", "submit", "button", "checkbox", "radio", "image", "reset"}


def _attrs(text: str) -> dict[str, str]:
    return {name.lower(): html.unescape(value or "") for name, value in _ATTR.findall(text)}


def _set_attr(tag: str, name: str, value: str | None) -> str:
    """The start tag `tag` with attribute `name` set to `value` ("": a bare attribute; None: none)."""
    opened = re.match(r"<([a-zA-Z][a-zA-Z0-9-]*)", tag)
    assert opened is not None
    kept = [(key, raw) for key, raw in _ATTR_RAW.findall(tag[opened.end():].rstrip(">").rstrip("/"))
            if key.lower() != name]
    if value is not None:
        kept.append((name, f'="{escape(value)}"' if value else ""))
    return "<" + opened.group(1) + "".join(f" {key}{raw}" for key, raw in kept) + ">"


def _error_html(problem: Problem, index: int) -> Markup:
    link = Markup(' <a href="{}">{}</a>').format(*problem.link) if problem.link else Markup("")
    return Markup('<span class="field-error" id="{}">{}{}</span>').format(
        f"problem-{index}", problem.message, link)


def summary(problems: list[Problem]) -> Markup:
    items = Markup("").join(Markup('<li><a href="#{}">{}</a></li>').format(p.target, p.message) for p in problems)
    return Markup('<div class="error-summary" role="alert" aria-labelledby="error-summary-title" tabindex="-1">'
                  '<h2 id="error-summary-title">There is a problem</h2><ul>{}</ul></div>').format(items)


def refill(page: str, form: FormData, action: str, problems: list[Problem]) -> str:
    """The page's HTML with the form posting to `action` filled in with `form`, each problem before
    the element it targets (a `<details>` around it opened), and the summary after the first heading."""
    out: list[str] = []
    position = 0
    inside = False  # within the form that was posted
    select: str | None = None
    skipping_textarea = False
    seen: dict[str, int] = {}  # per name, how many text fields of it were filled (several of one name)
    by_target: dict[str, list[tuple[int, Problem]]] = {}
    for index, problem in enumerate(problems):
        by_target.setdefault(problem.target, []).append((index, problem))
    placed: set[str] = set()
    details: list[int] = []  # where each open <details> tag sits in `out`
    summary_done = False

    def values(name: str) -> list[str]:
        return [str(v) for v in form.getlist(name) if isinstance(v, str)]

    for match in _TAG.finditer(page):
        closing, name, rest = match.group(1), match.group(2).lower(), match.group(3)
        if skipping_textarea and not (closing and name == "textarea"):
            continue
        out.append(page[position:match.start()] if not skipping_textarea else "")
        position = match.end()
        tag = match.group(0)
        if skipping_textarea:
            skipping_textarea = False
            out.append(tag)
            continue
        attrs = _attrs(rest) if not closing else {}
        if name == "form" and not closing:
            inside = attrs.get("action") == action
        elif name == "form" and closing:
            inside = False
        if name == "details":
            if closing and details:
                details.pop()
            elif not closing:
                details.append(len(out))
        target = attrs.get("id", "")
        if target in by_target and target not in placed:
            placed.add(target)
            out.append("".join(str(_error_html(p, i)) for i, p in by_target[target]))
            tag = _set_attr(tag, "aria-invalid", "true")
            tag = _set_attr(tag, "aria-describedby", " ".join(f"problem-{i}" for i, _ in by_target[target]))
            for at in details:
                out[at] = _set_attr(out[at], "open", "")
        if inside and not closing:
            tag, skipping_textarea = _filled(tag, name, attrs, values, seen, select, out)
            if name == "select":
                select = attrs.get("name")
        if closing and name == "select":
            select = None
        out.append(tag)
        if closing and name == "h1" and not summary_done and problems:
            out.append(str(summary(problems)))
            summary_done = True
    out.append(page[position:])
    return "".join(out)


def _filled(tag: str, name: str, attrs: dict[str, str], values: Any, seen: dict[str, int], select: str | None,
            out: list[str]) -> tuple[str, bool]:
    """One start tag of the posted form with the value sent; True when a textarea's text follows (the
    caller then drops the rendered text, having written the sent one here)."""
    field_name = attrs.get("name", "")
    if name == "input" and field_name:
        kind = attrs.get("type", "text").lower()
        if kind in ("checkbox", "radio"):
            ticked = attrs.get("value", "on") in values(field_name)
            return _set_attr(tag, "checked", "" if ticked else None), False
        if kind not in _TEXTLIKE_SKIP:
            sent = values(field_name)
            index = seen.get(field_name, 0)
            seen[field_name] = index + 1
            return _set_attr(tag, "value", sent[index] if index < len(sent) else ""), False
    if name == "option" and select is not None:
        return _set_attr(tag, "selected", "" if attrs.get("value", "") in values(select) else None), False
    if name == "textarea" and field_name:
        sent = values(field_name)
        index = seen.get(field_name, 0)
        seen[field_name] = index + 1
        out.append(tag)
        out.append(str(escape(sent[index] if index < len(sent) else "")))
        return "", True
    return tag, False


def again(page: HTMLResponse, status: int, form: FormData, action: str, problems: list[Problem]) -> HTMLResponse:
    """`page` (the form's page as a GET renders it) again with the refused `form` in it, answered `status`."""
    body = refill(bytes(page.body).decode(), form, action, problems)
    headers = {k: v for k, v in page.headers.items() if k.lower() not in ("content-length", "content-type")}
    return HTMLResponse(body, status_code=status, headers=headers)
