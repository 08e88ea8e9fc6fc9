"""Configuration of the adapters and the registry that builds one adapter per platform.

Nothing here reads the environment: the composition root builds a `PlatformConfig` from the
service's settings (or `PlatformConfig.for_sandbox(base_url, secret_key=...)`) and passes it in.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import httpx2

from platforms.base import PLATFORMS

if TYPE_CHECKING:
    from platforms._common import BaseAdapter
    from platforms.base import Adapter


@dataclass(frozen=True)
class Endpoints:
    """Where one platform lives: `api` (REST calls), `auth` (the consent page's host) and
    `oauth` (the token endpoint's host). Paths are the platform's own, appended to these."""

    api: str
    auth: str = ""
    oauth: str = ""


PRODUCTION_ENDPOINTS: dict[str, Endpoints] = {
    "instagram": Endpoints(
        "https://graph.instagram.com", "https://www.instagram.com", "https://api.instagram.com"
    ),
    "facebook": Endpoints(
        "https://graph.facebook.com", "https://www.facebook.com", "https://graph.facebook.com"
    ),
    "meta_ads": Endpoints(
        "https://graph.facebook.com", "https://www.facebook.com", "https://graph.facebook.com"
    ),
    "whatsapp": Endpoints(
        "https://graph.facebook.com", "https://www.facebook.com", "https://graph.facebook.com"
    ),
    "telegram": Endpoints("https://api.telegram.org"),
    "tiktok": Endpoints(
        "https://open.tiktokapis.com", "https://www.tiktok.com", "https://open.tiktokapis.com"
    ),
    "youtube": Endpoints(
        "https://www.googleapis.com", "https://accounts.google.com", "https://oauth2.googleapis.com"
    ),
    "x": Endpoints("https://api.x.com", "https://x.com", "https://api.x.com"),
    "linkedin": Endpoints("https://api.linkedin.com", "https://www.linkedin.com", "https://www.linkedin.com"),
}


@dataclass(frozen=True)
class OAuthClient:
    client_id: str
    client_secret: str


SANDBOX_X_WEBHOOK_ID = "1700000000000000001"  # the sandbox app's Account Activity webhook


@dataclass
class PlatformConfig:
    """Everything the adapters, the inbound verifier and the emulator need, passed in."""

    hooks_base_url: str
    """The service's public base URL; platform webhooks arrive at `{hooks_base_url}/hooks/{platform}`."""
    endpoints: dict[str, Endpoints] = field(default_factory=lambda: dict(PRODUCTION_ENDPOINTS))
    oauth_clients: dict[str, OAuthClient] = field(default_factory=dict)
    """By platform, and by the separate products' apps: `tiktok_business` (TikTok API for Business,
    whose authorization Business Messaging takes) and `linkedin_org` (LinkedIn's Community
    Management API, which must be the only product of its app)."""
    meta_app_secret: str = ""
    """Signs Meta webhooks (Instagram, Facebook, WhatsApp) in `X-Hub-Signature-256`."""
    meta_app_id: str = ""
    """The Meta app whose secret is `meta_app_secret` (its id, not secret)."""
    meta_app_secrets: dict[str, str] = field(default_factory=dict)
    """Other Meta apps' secrets by app id: a WhatsApp token pasted from another app (a system user's)
    is proved with its own app's secret, and that app signs the number's webhooks."""
    instagram_app_secret: str = ""
    """An Instagram Login app's own secret: it may sign Instagram webhooks instead of the Meta app's,
    and it makes the `appsecret_proof` of Instagram Login tokens."""
    meta_verify_token: str = ""
    """Echoed by Meta's GET `hub.verify_token` subscription check."""
    graph_version: str = "v23.0"
    linkedin_version: str = "202610"
    """LinkedIn's API version (YYYYMM): LinkedIn retires each about a year after its release."""
    x_consumer_secret: str = ""
    """X's app consumer secret (API secret key): answers the Account Activity CRC and checks
    `x-twitter-webhooks-signature`."""
    x_webhook_id: str = ""
    """The id of the app's Account Activity webhook (registered once for `/hooks/x`): each account
    connected is subscribed to it, so its DMs come by webhook; without it they are polled."""
    telegram_secret_seed: bytes = b""
    """Derives each bot's webhook `secret_token` (see `telegram_secret`)."""
    telegram_older_secret_seeds: tuple[bytes, ...] = ()
    """The seeds of the older service keys still listed while a key rotation is under way: a bot whose
    webhook was set before it still sends the secret one of them derived, and is still heard."""
    timeout_seconds: float = 15.0
    connect_timeout_seconds: float = 5.0
    max_connections: int = 200
    sandbox: bool = False
    tiktok_audited: bool = False
    """Whether TikTok has audited the app: until it has, every post must be `SELF_ONLY`."""
    youtube_audited: bool = False
    """Whether Google has audited the API project: until it has, every uploaded video is locked private."""
    tiktok_verified_domains: tuple[str, ...] = ()
    """Hosts whose URLs TikTok pulls videos from (verified in its developer portal); media served from
    any other host goes by `FILE_UPLOAD` instead (`url_ownership_unverified` otherwise)."""

    def meta_secret_for(self, app_id: str | None) -> str:
        """The secret of the Meta app `app_id` ("" when unknown); ours when no app is named."""
        if not app_id or app_id == self.meta_app_id:
            return self.meta_app_secret
        return self.meta_app_secrets.get(app_id, "")

    def endpoint(self, platform: str) -> Endpoints:
        return self.endpoints[platform]

    def oauth_client(self, platform: str) -> OAuthClient:
        client = self.oauth_clients.get(platform)
        if client is None:
            from platforms.base import Unsupported

            raise Unsupported(f"no OAuth client is configured for {platform}")
        return client

    def telegram_secret(self, bot_id: str) -> str:
        """The `secret_token` given to `setWebhook` for one bot: HMAC of the bot id, so that any
        process of the service can check `X-Telegram-Bot-Api-Secret-Token` without storage."""
        return _telegram_secret(self.telegram_secret_seed, bot_id)

    def telegram_secrets(self, bot_id: str) -> tuple[str, ...]:
        """Every secret token a bot's updates may carry: the newest key's, then the older keys'."""
        seeds = (self.telegram_secret_seed, *self.telegram_older_secret_seeds)
        return tuple(_telegram_secret(seed, bot_id) for seed in seeds)

    def telegram_webhook_url(self, bot_id: str) -> str:
        return f"{self.hooks_base_url.rstrip('/')}/hooks/telegram?bot={bot_id}"

    @classmethod
    def for_sandbox(
        cls,
        base_url: str,
        *,
        secret_key: bytes | str = b"switchboard-sandbox",
        hooks_base_url: str | None = None,
    ) -> PlatformConfig:
        """Every platform at `{base_url}/sandbox/{platform}`; secrets derived from `secret_key`
        (so every process of one deployment agrees on them)."""
        key = secret_key.encode() if isinstance(secret_key, str) else secret_key
        base = base_url.rstrip("/")

        def derive(label: str) -> str:
            return hmac.new(key, f"sandbox:{label}".encode(), hashlib.sha256).hexdigest()[:40]

        endpoints = {}
        for platform in PLATFORMS:
            url = f"{base}/sandbox/{platform}"
            endpoints[platform] = Endpoints(url, url, url)
        clients = {
            platform: OAuthClient(f"sandbox-{platform}-client", derive(f"client-secret:{platform}"))
            for platform in ("instagram", "facebook", "meta_ads", "tiktok", "youtube", "x", "linkedin",
                             "tiktok_business", "linkedin_org")
        }
        return cls(
            hooks_base_url=(hooks_base_url or base),
            endpoints=endpoints,
            oauth_clients=clients,
            meta_app_secret=derive("meta-app-secret"),
            meta_app_id="100000000000001",
            instagram_app_secret=derive("instagram-app-secret"),
            meta_verify_token=derive("meta-verify-token"),
            telegram_secret_seed=derive("telegram-seed").encode(),
            x_consumer_secret=derive("x-consumer-secret"),
            x_webhook_id=SANDBOX_X_WEBHOOK_ID,
            sandbox=True,
        )

    def with_hooks_base_url(self, hooks_base_url: str) -> PlatformConfig:
        return replace(self, hooks_base_url=hooks_base_url)


@functools.cache
def adapter_classes() -> tuple[type[BaseAdapter], ...]:
    """Every platform's adapter class, in the order of `PLATFORMS`: what each declares (capabilities,
    rules) is read from them without a configured registry."""
    from platforms.facebook.adapter import FacebookAdapter
    from platforms.instagram.adapter import InstagramAdapter
    from platforms.linkedin.adapter import LinkedInAdapter
    from platforms.meta_ads.adapter import MetaAdsAdapter
    from platforms.telegram.adapter import TelegramAdapter
    from platforms.tiktok.adapter import TikTokAdapter
    from platforms.whatsapp.adapter import WhatsAppAdapter
    from platforms.x.adapter import XAdapter
    from platforms.youtube.adapter import YouTubeAdapter

    return (
        InstagramAdapter,
        WhatsAppAdapter,
        TikTokAdapter,
        TelegramAdapter,
        YouTubeAdapter,
        XAdapter,
        FacebookAdapter,
        MetaAdsAdapter,
        LinkedInAdapter,
    )


def declared(platform: str) -> type[BaseAdapter]:
    """The adapter class of `platform`, for what it declares as data (no call, no configuration)."""
    try:
        return _by_name()[platform]
    except KeyError:
        raise KeyError(f"unknown platform {platform!r}") from None


@functools.cache
def _by_name() -> dict[str, type[BaseAdapter]]:
    return {cls.platform: cls for cls in adapter_classes()}


def platforms_where(test: Callable[[type[BaseAdapter]], bool]) -> tuple[str, ...]:
    """The platforms whose adapter class passes `test`, in the order of `PLATFORMS`."""
    return tuple(cls.platform for cls in adapter_classes() if test(cls))


def build_adapters(config: PlatformConfig, client: httpx2.Client) -> dict[str, Adapter]:
    """One adapter per platform, all sharing `client` (see `platforms.http.build_client`)."""
    return {cls.platform: cls(config, client) for cls in adapter_classes()}


class Registry:
    """Adapters keyed by platform, built once at start-up."""

    def __init__(self, config: PlatformConfig, client: httpx2.Client) -> None:
        self.config = config
        self.client = client
        self.adapters = build_adapters(config, client)

    def get(self, platform: str) -> Adapter:
        try:
            return self.adapters[platform]
        except KeyError:
            raise KeyError(f"unknown platform {platform!r}") from None


_default: Registry | None = None


def configure(config: PlatformConfig, client: httpx2.Client) -> Registry:
    """Install the process-wide registry (called once by the composition root)."""
    global _default
    _default = Registry(config, client)
    return _default


def get(platform: str) -> Adapter:
    """The adapter of `platform` from the registry installed by `configure`."""
    if _default is None:
        raise RuntimeError("platforms.registry.configure() has not been called")
    return _default.get(platform)


def _telegram_secret(seed: bytes, bot_id: str) -> str:
    return hmac.new(seed, f"telegram-webhook:{bot_id}".encode(), hashlib.sha256).hexdigest()
