"""What a front door shows of each platform, as its adapter declares it: the name a person reads, how
an account connects (the platform's consent, or a token pasted into a form), the post options a
form sets, whether a conversation can use approved templates. The dashboard asks here, so it never
branches on a platform's name (a new platform's folder is all it takes)."""

from __future__ import annotations

import functools
import inspect
from pathlib import Path

from platforms import registry
from platforms.base import PLATFORMS
from platforms.rules import OptionField
from service.accounts.connect_shapes import ConnectTelegram, ConnectWhatsApp, TokenConnection

# The shapes of a connection by token; a platform's is the one holding its adapter's token field.
TOKEN_SHAPES: tuple[type[TokenConnection], ...] = (ConnectTelegram, ConnectWhatsApp)


def known(platform: str) -> bool:
    return platform in PLATFORMS


def display_name(platform: str) -> str:
    """The platform's name as a person reads it ("TikTok"); an unknown name as it is."""
    return registry.declared(platform).display_name if known(platform) else platform


@functools.cache
def icon(platform: str) -> str:
    """The platform's icon, an inline SVG kept as `icon.svg` in its folder (drawn there, so nothing
    is fetched from another host); empty for an unknown name or a folder without one."""
    if not known(platform):
        return ""
    drawn = Path(inspect.getfile(registry.declared(platform))).parent / "icon.svg"
    return drawn.read_text().strip() if drawn.exists() else ""


def with_conversations() -> tuple[str, ...]:
    """The platforms whose accounts hold conversations (direct messages or comments), in order."""
    return registry.platforms_where(lambda cls: cls.capabilities.dm or cls.capabilities.comments)


def connects_with_token(platform: str) -> bool:
    """An account of the platform connects with a token pasted into a form, not the platform's consent."""
    return not registry.declared(platform).capabilities.oauth


def token_shape(platform: str) -> type[TokenConnection]:
    """The body of a connection by token to the platform (`connect.connect_with_token`)."""
    secret = registry.declared(platform).token_field
    for shape in TOKEN_SHAPES:
        if any(info.alias == secret for info in shape.model_fields.values()):
            return shape
    raise KeyError(f"{platform!r} connects without a token")


def token_fields(platform: str) -> list[tuple[str, bool]]:
    """The form fields of a connection by token (camelCase) and whether each is required, less the profile."""
    return [(info.alias or name, info.is_required()) for name, info in token_shape(platform).model_fields.items()
            if name != "profile_id"]


def post_options(platform: str) -> tuple[OptionField, ...]:
    """The post options a person sets in a form for a target on the platform, in their order."""
    return registry.declared(platform).post_rules.form_fields()


def lists_post_options_live(platform: str) -> bool:
    """The platform lists what a post may choose live, before publishing (`accounts.publish_options`)."""
    return registry.declared(platform).post_rules.publish_options == "platform"


def has_templates(platform: str) -> bool:
    """Its conversations can use approved message templates (outside the messaging window)."""
    return registry.declared(platform).capabilities.templates

