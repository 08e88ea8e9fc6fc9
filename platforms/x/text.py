"""How X counts a post's length: the weighted length of twitter-text (version 3 configuration).

X does not count characters: every code point weighs 2 except those of a few ranges (Latin, Greek,
Cyrillic, Hebrew, Arabic, ... up to U+10FF, and some punctuation), which weigh 1; a URL weighs 23
whatever its length; an emoji weighs 2 however many code points make it. A post may weigh 280.
So 140 Chinese characters fill a post, and a 100-character link leaves 257 for the rest.
"""

from __future__ import annotations

import re
import unicodedata

MAX_WEIGHTED_LENGTH = 280
URL_WEIGHT = 23
_LIGHT_RANGES = ((0x0000, 0x10FF), (0x2000, 0x200D), (0x2010, 0x201F), (0x2032, 0x2037))
# URLs with a scheme or `www.`; X also links bare domains (`example.com`), which this does not weigh.
_URL = re.compile(r"(?:https?://|www\.)[^\s<>\"]+", re.IGNORECASE)
_ZWJ = "\u200d"
_VARIATION_SELECTORS = {"\ufe0e", "\ufe0f"}
_SKIN_TONES = range(0x1F3FB, 0x1F400)
_REGIONAL_INDICATORS = range(0x1F1E6, 0x1F200)


def _weight(char: str) -> int:
    code = ord(char)
    return 1 if any(low <= code <= high for low, high in _LIGHT_RANGES) else 2


def weighted_length(text: str) -> int:
    """The length X measures `text` by (after NFC normalisation, as X does)."""
    text = unicodedata.normalize("NFC", text)
    total = 0
    position = 0
    for match in _URL.finditer(text):
        total += _plain_weight(text[position : match.start()]) + URL_WEIGHT
        position = match.end()
    return total + _plain_weight(text[position:])


def _plain_weight(text: str) -> int:
    """Code points weighed one by one, except that an emoji sequence (joined by ZWJ, with a skin
    tone or a variation selector, or a flag's pair of regional indicators) weighs as one emoji."""
    total = 0
    joined = False  # the previous code point was a zero-width joiner: this one continues an emoji
    flag_half = False  # the previous code point opened a flag
    for char in text:
        code = ord(char)
        if char in _VARIATION_SELECTORS or code in _SKIN_TONES:
            continue
        if char == _ZWJ:
            joined = True
            continue
        if code in _REGIONAL_INDICATORS:
            if not flag_half:
                total += 2
            flag_half = not flag_half
            joined = False
            continue
        flag_half = False
        if not joined:
            total += _weight(char)
        joined = False
    return total
