"""Settings read once from the environment at start-up and handed to whoever needs them.

Nothing here runs at import: the composition root calls `Settings.from_env()` and `configure()`.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from kit import files

VERSION = "1.0.0"


def _app_secrets(value: str) -> dict[str, str]:
    """`SWITCHBOARD_META_APP_SECRETS`: `<app id>:<secret>` pairs, comma-separated."""
    pairs = (item.strip().partition(":") for item in value.split(",") if item.strip())
    return {app.strip(): secret.strip() for app, _, secret in pairs if app.strip() and secret.strip()}


def _flag(value: str | None, default: bool = False) -> bool:
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _secret_keys(data_dir: Path, given: str | None) -> tuple[str, ...]:
    """The operator's keys (`SWITCHBOARD_SECRET_KEY`, comma-separated, newest first: the newest
    encrypts and signs, every one of them still decrypts and verifies, so a key can be rotated
    without downtime), or one generated once into the data dir so restarts keep sessions valid."""
    keys = tuple(part.strip() for part in (given or "").split(",") if part.strip())
    # The data dir's file holds one generated key, or the list a restored backup brought along.
    return keys or tuple(part.strip() for part in _generated_key(data_dir).split(",") if part.strip())


def _generated_key(data_dir: Path) -> str:
    path = data_dir / "secret_key"
    if path.exists():
        files.private_file(path)  # one written by an older version may be readable by others
        return path.read_text().strip()
    files.private_dir(data_dir, tighten=True)
    key = secrets.token_urlsafe(48)
    # O_EXCL: two processes starting together must end up with the same key.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(key)
    return key


def _log_format(value: str | None) -> str:
    """`SWITCHBOARD_LOG_FORMAT`: `text` (the default) or `json`."""
    chosen = (value or "text").strip().lower()
    if chosen not in {"text", "json"}:
        raise ValueError("SWITCHBOARD_LOG_FORMAT must be `text` or `json`")
    return chosen


def default_data_dir() -> Path:
    """Where the files live when `SWITCHBOARD_DATA_DIR` is unset: `data/` beside the virtual
    environment that runs the command (the checkout, for `make serve`), so that every command finds
    the same files wherever it is run from; outside a virtual environment, the user's data folder."""
    if sys.prefix != sys.base_prefix:
        return Path(sys.prefix).resolve().parent / "data"
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "switchboard"


@dataclass(frozen=True)
class Settings:
    data_dir: Path
    database_url: str
    queue_url: str
    base_url: str
    secret_key: str  # the newest of `secret_keys`: what encrypts and signs
    sandbox: bool = False
    # Every key that still decrypts and verifies, newest first (`secret_key` among them).
    secret_keys: tuple[str, ...] = ()
    # `/metrics` answers only when set, to a Bearer token with it (and the processes record metrics).
    metrics_token: str | None = None
    log_format: str = "text"  # or "json": one object a line
    # Where `switchboard sandbox serve` runs the emulator for several processes to share; unset,
    # `serve` mounts it in-process at `{base_url}/sandbox`.
    sandbox_url: str | None = None
    # What the sandbox's emulated app credentials (OAuth client secrets, the webhook signing secrets)
    # derive from: the same for the sandbox and every service process whatever their data dirs, so a
    # standalone `sandbox serve` works with all of them. Not the secret key, which each data dir has
    # its own of; set it (the same everywhere) to keep a shared sandbox's fake secrets private.
    sandbox_secret: str = "switchboard-sandbox"  # noqa: S105 - a public default, documented
    scheduler_tick_seconds: float = 1.0
    webhook_retry_delays: tuple[int, ...] = (30, 120, 480, 1920, 7200)
    webhook_timeout_seconds: float = 10.0
    webhook_allow_private: bool = False
    webhook_ca_bundle: str | None = None
    # How long an event and its deliveries are kept once every delivery has ended (0: for ever).
    event_retention_days: int = 30
    rate_limit_per_minute: int = 600
    # How long a worker holds an outbound message it is sending. A message still `sending` when its
    # lease runs out (its process died during the platform call) becomes `unknown`.
    send_lease_seconds: float = 60.0
    # How long a worker holds a post target during its platform call (`unknown` when it runs out).
    publish_lease_seconds: float = 120.0
    # Media uploads: the largest file taken, and how long an upload token stays valid.
    media_max_bytes: int = 512 * 1024 * 1024
    upload_ttl_seconds: int = 3600
    oidc_issuer: str | None = None
    oidc_client_id: str | None = None
    oidc_client_secret: str | None = None
    oidc_name: str = "your identity provider"  # on the sign-in button
    # Mail to people (invitations, accounts to reconnect): `smtp://user:pass@host:port` or `smtps://...`.
    smtp_url: str | None = None
    mail_from: str = "switchboard@localhost"
    audit_retention_days: int = 400  # audit log rows older than this go (0: kept for ever)
    # A newly connected account's past follower counts, read once where its platform gives them (in
    # the sandbox: 90 days of the sandbox's own), so its follower line does not start empty.
    follower_backfill: bool = True
    platform_base_urls: dict[str, str] = field(default_factory=dict)
    platform_oauth_clients: dict[str, tuple[str, str]] = field(default_factory=dict)
    meta_app_secret: str = ""
    meta_app_id: str = ""
    meta_app_secrets: dict[str, str] = field(default_factory=dict)
    instagram_app_secret: str = ""
    linkedin_version: str = ""
    meta_verify_token: str = ""
    tiktok_audited: bool = False
    youtube_audited: bool = False
    tiktok_verified_domains: tuple[str, ...] = ()
    # Inboxes read by polling (YouTube's comment threads, X's DM events without a webhook): how often
    # each account is read, and YouTube's daily quota per project (a poll costs 1 unit; polls stop
    # at `youtube_poll_share` of it, leaving the rest to uploads and replies).
    inbox_poll_seconds: float = 60.0
    youtube_daily_quota: int = 10_000
    youtube_poll_share: float = 0.8
    x_consumer_secret: str = ""
    x_webhook_id: str = ""

    @property
    def sandbox_base_url(self) -> str:
        """Where the emulator answers: its own process, or `/sandbox` of this service."""
        return self.sandbox_url or self.base_url

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
        env = os.environ if env is None else env
        data_dir = Path(env.get("SWITCHBOARD_DATA_DIR") or default_data_dir()).resolve()
        delays = env.get("SWITCHBOARD_WEBHOOK_RETRY_DELAYS") or "30,120,480,1920,7200"
        platform_urls = {
            key[len("SWITCHBOARD_PLATFORM_URL_") :].lower(): value
            for key, value in env.items()
            if key.startswith("SWITCHBOARD_PLATFORM_URL_") and value
        }
        oauth_clients = {
            platform: (
                env[f"SWITCHBOARD_{platform.upper()}_CLIENT_ID"],
                env.get(f"SWITCHBOARD_{platform.upper()}_CLIENT_SECRET", ""),
            )
            for platform in ("instagram", "facebook", "meta_ads", "tiktok", "youtube", "x", "linkedin")
            if env.get(f"SWITCHBOARD_{platform.upper()}_CLIENT_ID")
        }
        # The apps of the platforms' separate products: TikTok API for Business's (Business
        # Messaging) and LinkedIn's Community Management API app (organizations).
        for client, id_name, secret_name in (
            ("tiktok_business", "SWITCHBOARD_TIKTOK_BUSINESS_APP_ID", "SWITCHBOARD_TIKTOK_BUSINESS_APP_SECRET"),
            ("linkedin_org", "SWITCHBOARD_LINKEDIN_ORG_CLIENT_ID", "SWITCHBOARD_LINKEDIN_ORG_CLIENT_SECRET"),
        ):
            if env.get(id_name):
                oauth_clients[client] = (env[id_name], env.get(secret_name, ""))
        keys = _secret_keys(data_dir, env.get("SWITCHBOARD_SECRET_KEY"))
        settings = cls(
            data_dir=data_dir,
            database_url=env.get("SWITCHBOARD_DATABASE_URL") or f"sqlite:///{data_dir / 'switchboard.db'}",
            queue_url=env.get("SWITCHBOARD_QUEUE_URL") or f"sqlite:///{data_dir / 'queue.db'}",
            base_url=(env.get("SWITCHBOARD_BASE_URL") or "http://127.0.0.1:8000").rstrip("/"),
            secret_key=keys[0],
            secret_keys=keys,
            metrics_token=env.get("SWITCHBOARD_METRICS_TOKEN") or None,
            log_format=_log_format(env.get("SWITCHBOARD_LOG_FORMAT")),
            sandbox=_flag(env.get("SWITCHBOARD_SANDBOX")),
            sandbox_url=(env.get("SWITCHBOARD_SANDBOX_URL") or "").rstrip("/") or None,
            sandbox_secret=env.get("SWITCHBOARD_SANDBOX_SECRET") or "switchboard-sandbox",
            scheduler_tick_seconds=float(env.get("SWITCHBOARD_SCHEDULER_TICK_SECONDS") or 1),
            webhook_retry_delays=tuple(int(part) for part in delays.split(",") if part.strip()),
            webhook_timeout_seconds=float(env.get("SWITCHBOARD_WEBHOOK_TIMEOUT_SECONDS") or 10),
            webhook_allow_private=_flag(env.get("SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE")),
            webhook_ca_bundle=env.get("SWITCHBOARD_WEBHOOK_CA_BUNDLE") or None,
            event_retention_days=int(env.get("SWITCHBOARD_EVENT_RETENTION_DAYS") or 30),
            rate_limit_per_minute=int(env.get("SWITCHBOARD_RATE_LIMIT_PER_MINUTE") or 600),
            send_lease_seconds=float(env.get("SWITCHBOARD_SEND_LEASE_SECONDS") or 60),
            publish_lease_seconds=float(env.get("SWITCHBOARD_PUBLISH_LEASE_SECONDS") or 120),
            media_max_bytes=int(env.get("SWITCHBOARD_MEDIA_MAX_BYTES") or 512 * 1024 * 1024),
            upload_ttl_seconds=int(env.get("SWITCHBOARD_UPLOAD_TTL_SECONDS") or 3600),
            oidc_issuer=env.get("SWITCHBOARD_OIDC_ISSUER") or None,
            oidc_client_id=env.get("SWITCHBOARD_OIDC_CLIENT_ID") or None,
            oidc_client_secret=env.get("SWITCHBOARD_OIDC_CLIENT_SECRET") or None,
            oidc_name=env.get("SWITCHBOARD_OIDC_NAME") or "your identity provider",
            smtp_url=env.get("SWITCHBOARD_SMTP_URL") or None,
            mail_from=env.get("SWITCHBOARD_MAIL_FROM") or "switchboard@localhost",
            audit_retention_days=int(env.get("SWITCHBOARD_AUDIT_RETENTION_DAYS") or 400),
            follower_backfill=_flag(env.get("SWITCHBOARD_FOLLOWER_BACKFILL"), default=True),
            platform_base_urls=platform_urls,
            platform_oauth_clients=oauth_clients,
            meta_app_secret=env.get("SWITCHBOARD_META_APP_SECRET") or "",
            meta_app_id=env.get("SWITCHBOARD_META_APP_ID") or "",
            meta_app_secrets=_app_secrets(env.get("SWITCHBOARD_META_APP_SECRETS") or ""),
            instagram_app_secret=env.get("SWITCHBOARD_INSTAGRAM_APP_SECRET") or "",
            linkedin_version=env.get("SWITCHBOARD_LINKEDIN_VERSION") or "",
            meta_verify_token=env.get("SWITCHBOARD_META_VERIFY_TOKEN") or "",
            tiktok_audited=_flag(env.get("SWITCHBOARD_TIKTOK_AUDITED")),
            youtube_audited=_flag(env.get("SWITCHBOARD_YOUTUBE_AUDITED")),
            tiktok_verified_domains=tuple(
                d.strip().lower() for d in (env.get("SWITCHBOARD_TIKTOK_VERIFIED_DOMAINS") or "").split(",")
                if d.strip()),
            inbox_poll_seconds=float(env.get("SWITCHBOARD_INBOX_POLL_SECONDS") or 60),
            youtube_daily_quota=int(env.get("SWITCHBOARD_YOUTUBE_DAILY_QUOTA") or 10_000),
            youtube_poll_share=float(env.get("SWITCHBOARD_YOUTUBE_POLL_SHARE") or 0.8),
            x_consumer_secret=env.get("SWITCHBOARD_X_CONSUMER_SECRET") or "",
            x_webhook_id=env.get("SWITCHBOARD_X_WEBHOOK_ID") or "",
        )
        return replace(settings, **overrides) if overrides else settings  # type: ignore[arg-type]

    def __post_init__(self) -> None:
        # Settings built (or `replace`d) naming only `secret_key` hold that one key alone.
        if not self.secret_keys or self.secret_keys[0] != self.secret_key:
            object.__setattr__(self, "secret_keys", (self.secret_key,))


_current: Settings | None = None


def configure(settings: Settings) -> Settings:
    global _current
    _current = settings
    return settings


def current() -> Settings:
    if _current is None:
        raise RuntimeError("settings are not configured; call kit.settings.configure() at start-up")
    return _current
