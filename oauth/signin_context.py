"""What the sign-in page says about where the person is going: during an OAuth flow, the name of
the application that waits for their consent."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from oauth.shell import in_db
from service.identity import oauth_clients

MAX_SHOWN = 80


def _name_of(client_id: str) -> str | None:
    if oauth_clients.is_metadata_document_id(client_id):
        # Described by a document on its own site: named by that site's host, without fetching it
        # for a page anyone can load (the consent screen fetches and shows its name).
        return urlsplit(client_id).hostname
    client = oauth_clients.get_client(client_id)
    return client.client_name or client.client_id if client else None


async def waiting_app(next_url: str) -> str | None:
    """The client named by `next` when it is the authorisation endpoint, else None."""
    parts = urlsplit(next_url)
    if parts.path != "/oauth/authorize":
        return None
    client_id = (parse_qs(parts.query).get("client_id") or [""])[0]
    if not client_id or len(client_id) > 2000:
        return None
    name = await in_db(_name_of, client_id)
    return name[:MAX_SHOWN] + "…" if name and len(name) > MAX_SHOWN else name
