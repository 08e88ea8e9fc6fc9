"""stub"""

from tests.support.platform_specs import Seen


def check(seen: Seen) -> list[str]:
    return []
