"""What the dashboard's delivery log shows beyond the delivery records: each event's payload."""

from __future__ import annotations

import json

from service.identity.auth import Actor
from service.webhooks.delivery import render_body
from storage.models import Event


def payloads(*, actor: Actor, event_ids: list[str]) -> dict[str, str]:
    """The body each event's deliveries carry (the signed envelope), pretty-printed, by event id.
    Only the actor's workspace's events: another workspace's id is simply absent."""
    if not event_ids:
        return {}
    found = Event.select().where(Event.id.in_(sorted(set(event_ids))), Event.workspace == actor.workspace_id)
    return {event.id: json.dumps(json.loads(render_body(event)), indent=2, ensure_ascii=False) for event in found}
