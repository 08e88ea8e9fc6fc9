"""Connect sandbox accounts the way the seed command does: through the running service."""

from __future__ import annotations

from typing import Any

import httpx2

from switchboard.sandbox_seed import connect


def connect_account(client: httpx2.Client, tenant: dict[str, str], platform: str, **options: Any) -> dict[str, Any]:
    return connect(client, api_key=tenant["apiKey"], profile_id=tenant["profileId"], platform=platform, **options)
