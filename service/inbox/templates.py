"""A WhatsApp template that a broadcast or a sequence step will send, checked when it is saved.

The only message that reaches a WhatsApp contact outside the 24 h window is a template the account
has had approved; one that is unknown, not approved, in another language or given the wrong number
of parameters would fail at every recipient. So it is checked against the account's approved
templates, read live from the platform: call `problems` outside any transaction (it waits on the
network), then save in a transaction of its own.
"""

from __future__ import annotations

from typing import Any

from kit.errors import FieldProblem
from platforms.base import PlatformFailure
from service.accounts import adapters
from storage.models import Account


def as_dict(template: Any) -> dict[str, Any] | None:
    """A request's template (a shape or a dict) as stored: `{name, language, parameters}`."""
    if template is None:
        return None
    if not isinstance(template, dict):
        template = template.model_dump()
    found = {"name": template["name"], "language": template["language"],
             "parameters": list(template.get("parameters") or [])}
    header = template.get("header_media_url") or template.get("headerMediaUrl")
    if isinstance(header, str) and header:
        found["header_media_url"] = header
    buttons = template.get("button_parameters") or template.get("buttonParameters")
    if buttons:
        found["button_parameters"] = list(buttons)
    header_text = template.get("header_text") or template.get("headerText")
    if isinstance(header_text, str) and header_text:
        found["header_text"] = header_text
    return found


def problems(account: Account, templates: list[tuple[str, dict[str, Any]]]) -> list[FieldProblem]:
    """(field, template) pairs checked against the account's approved templates (one live read)."""
    if not templates:
        return []
    if not adapters.adapter(account.platform).capabilities.templates:
        return [FieldProblem(field, f"only WhatsApp has message templates, not {account.platform}")
                for field, _ in templates]
    try:
        approved = adapters.call(account, lambda adapter, ctx: adapter.list_templates(ctx))
    except PlatformFailure:
        return [FieldProblem(field, "the account's approved templates could not be read to check it; try again")
                for field, _ in templates]
    found: list[FieldProblem] = []
    for field, template in templates:
        match = next((t for t in approved if t["name"] == template["name"]
                      and t["language"] == template["language"]), None)
        if match is None:
            found.append(FieldProblem(field, f"{template['name']} ({template['language']}) is not an approved "
                                             "template of this account: see GET /v1/accounts/{id}/templates"))
        elif int(match["parameters"]) != len(template["parameters"]):
            found.append(FieldProblem(f"{field}.parameters", f"{template['name']} takes {match['parameters']} "
                                                             f"parameter(s), {len(template['parameters'])} given"))
        elif match.get("headerFormat") and not template.get("header_media_url"):
            found.append(FieldProblem(f"{field}.headerMediaUrl", f"{template['name']} has a "
                                      f"{str(match['headerFormat']).lower()} header: give its URL"))
        elif match.get("headerVariable") and not template.get("header_text"):
            found.append(FieldProblem(f"{field}.headerText", f"{template['name']} has a text header with a "
                                      "variable: give its value"))
        elif len(match.get("buttonParameters") or []) != len(template.get("button_parameters") or []):
            found.append(FieldProblem(f"{field}.buttonParameters", f"{template['name']} takes "
                                      f"{len(match.get('buttonParameters') or [])} URL button variable(s)"))
    return found
