"""Telegram requests and answers against the Bot API as `aiogram` describes it (one pydantic model per
method, `aiogram.methods`, with `__api_method__` the Bot API's name and `__returning__` its result
type; the Bot API's objects as `aiogram.types`), plus the limits the Bot API reference states
(https://core.telegram.org/bots/api), which the models do not hold (`LIMITS` and the checks below).

A request must name a method, give each required parameter, and every parameter (also inside nested
objects: a keyboard's button, an album's item) must be one the Bot API knows, of its type: a JSON
body is validated strictly (a number where text belongs, or text where a number belongs, is refused);
a form's values are text on the wire, read as the Bot API reads them. An answer must be the Bot API's
envelope (`{"ok": true, "result": ...}` of the method's result type, or `{"ok": false, "error_code",
"description"}`)."""

from __future__ import annotations

import functools
import html
import json
import re
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from tests.support.platform_specs import FILE, Seen

API = "https://core.telegram.org/bots/api"
PATH = re.compile(r"^/bot(?P<token>[^/]*)/(?P<method>[A-Za-z]+)$")
TOKEN = re.compile(r"\d+:[A-Za-z0-9_-]+")
# https://core.telegram.org/bots/api#formatting-options: the three modes, spelt exactly so.
PARSE_MODES = ("Markdown", "MarkdownV2", "HTML")
TEXT_LIMIT = (1, 4096)  # sendMessage, editMessageText: "1-4096 characters after entities parsing"
CAPTION_LIMIT = 1024  # every caption: "0-1024 characters after entities parsing"
ALBUM_SIZE = (2, 10)  # sendMediaGroup: "an array describing messages to be sent, must include 2-10 items"
CALLBACK_DATA_BYTES = (1, 64)  # InlineKeyboardButton.callback_data: "1-64 bytes"
# InlineKeyboardButton: "Exactly one of the optional fields must be used to specify type of the button."
BUTTON_ACTIONS = ("url", "callback_data", "web_app", "login_url", "switch_inline_query",
                  "switch_inline_query_current_chat", "switch_inline_query_chosen_chat", "copy_text",
                  "callback_game", "pay")
# sendMediaGroup: "Documents and audio files can be only grouped in an album with messages of the
# same type"; photos and videos mix.
ALBUM_FAMILIES = {"photo": "visual", "video": "visual", "document": "document", "audio": "audio"}


@functools.cache
def methods() -> dict[str, type[BaseModel]]:
    import aiogram.methods

    found = {}
    for name in dir(aiogram.methods):
        model = getattr(aiogram.methods, name)
        api_name = getattr(model, "__api_method__", None)
        if isinstance(model, type) and isinstance(api_name, str):
            found[api_name.lower()] = model  # the Bot API's method names are case-insensitive
    return found


def version() -> str:
    import aiogram

    return f"aiogram {aiogram.__version__} (Bot API {aiogram.__api_version__})"


def _unknown(value: Any, where: str) -> list[str]:
    """Fields the models kept as extras: parameters the Bot API does not have."""
    problems: list[str] = []
    if isinstance(value, BaseModel):
        problems += [f"{where}.{key}: not a field of {type(value).__name__}" for key in (value.model_extra or {})]
        for key in type(value).model_fields:
            problems += _unknown(getattr(value, key, None), f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            problems += _unknown(item, f"{where}[{index}]")
    return problems


def _decoded(fields: dict[str, Any]) -> dict[str, Any]:
    """Form and multipart values are text: objects travel JSON-serialised, files as parts."""
    out: dict[str, Any] = {}
    # A file part another field names (`"media": "attach://file1"` in an album) is no field itself.
    named = {key for key, value in fields.items() if value is FILE
             and any(isinstance(other, str) and f"attach://{key}" in other for other in fields.values())}
    for key, value in fields.items():
        if key in named:
            continue
        if value is FILE:
            out[key] = "attach://" + key
        elif isinstance(value, str) and value[:1] in ("{", "["):
            try:
                out[key] = json.loads(value)
            except ValueError:
                out[key] = value
        else:
            out[key] = value
    return out


def _visible_length(text: str, parse_mode: Any) -> int:
    """The text's length once its markup is read (the limits count "after entities parsing")."""
    if parse_mode == "HTML":
        return len(html.unescape(re.sub(r"<[^>]*>", "", text)))
    if parse_mode == "MarkdownV2":
        return len(re.sub(r"\\(.)", r"\1", re.sub(r"(?<!\\)[*_~|`]", "", text)))
    return len(text)


# https://core.telegram.org/bots/api#markdownv2-style: "Any character with code between 1 and 126
# inclusively can be escaped anywhere with a preceding '\\' character ... In all other places
# characters '_', '*', '[', ']', '(', ')', '~', '`', '>', '#', '+', '-', '=', '|', '{', '}', '.', '!'
# must be escaped". These never open an entity, so unescaped they are always refused:
MARKDOWN_V2_RESERVED = re.compile(r"(?<!\\)(?:\\\\)*[#+\-={}.!]")


def _markdown_v2(text: str) -> bool:
    """Whether a MarkdownV2 text escapes what it must (outside code, where only ` and \\ are)."""
    outside_code = re.sub(r"```.*?```|`[^`]*`", "", text, flags=re.DOTALL)
    return MARKDOWN_V2_RESERVED.search(outside_code) is None


def _buttons(markup: Any, where: str) -> list[str]:
    problems = []
    rows = markup.get("inline_keyboard") if isinstance(markup, dict) else None
    for r, row in enumerate(rows if isinstance(rows, list) else []):
        for b, button in enumerate(row if isinstance(row, list) else []):
            if not isinstance(button, dict):
                continue
            actions = [key for key in BUTTON_ACTIONS if key in button]
            if len(actions) != 1:
                problems.append(f"{where}.inline_keyboard[{r}][{b}]: exactly one of the optional fields "
                                f"(an action) must be used, {actions or 'none'} given ({API}#inlinekeyboardbutton)")
            data = button.get("callback_data")
            if isinstance(data, str) and not CALLBACK_DATA_BYTES[0] <= len(data.encode()) <= CALLBACK_DATA_BYTES[1]:
                problems.append(f"{where}.inline_keyboard[{r}][{b}].callback_data: 1-64 bytes")
    return problems


def _limits(name: str, data: dict[str, Any]) -> list[str]:
    problems = []
    items: list[tuple[str, dict[str, Any]]] = [("body", data)]
    media = data.get("media")
    if name == "sendMediaGroup" and isinstance(media, list):
        if not ALBUM_SIZE[0] <= len(media) <= ALBUM_SIZE[1]:
            problems.append(f"body.media: an album has 2-10 items, {len(media)} given ({API}#sendmediagroup)")
        families = {ALBUM_FAMILIES.get(str(item.get("type")), str(item.get("type")))
                    for item in media if isinstance(item, dict)}
        if len(families) > 1:
            problems.append(f"body.media: documents and audio group only with their own type, "
                            f"{sorted(str(f) for f in families)} given ({API}#sendmediagroup)")
        items += [(f"body.media[{i}]", item) for i, item in enumerate(media) if isinstance(item, dict)]
    for where, item in items:
        mode = item.get("parse_mode")
        if mode is not None and mode not in PARSE_MODES:
            problems.append(f"{where}.parse_mode: {mode!r} is not one of {list(PARSE_MODES)} ({API}#formatting-options)")
        caption = item.get("caption")
        if mode == "MarkdownV2":
            for key in ("text", "caption"):
                if isinstance(item.get(key), str) and not _markdown_v2(item[key]):
                    problems.append(f"{where}.{key}: a reserved character is not escaped for MarkdownV2 "
                                    f"({API}#markdownv2-style)")
        if isinstance(caption, str) and _visible_length(caption, mode) > CAPTION_LIMIT:
            problems.append(f"{where}.caption: 0-1024 characters, {len(caption)} given")
    text = data.get("text")
    if name in ("sendMessage", "editMessageText") and isinstance(text, str):
        length = _visible_length(text, data.get("parse_mode"))
        if not TEXT_LIMIT[0] <= length <= TEXT_LIMIT[1]:
            problems.append(f"body.text: 1-4096 characters, {length} given ({API}#{name.lower()})")
    problems += _buttons(data.get("reply_markup"), "body.reply_markup")
    return problems


@functools.cache
def _result(model: type[BaseModel]) -> TypeAdapter[Any]:
    return TypeAdapter(model.__returning__)  # type: ignore[attr-defined]


def _answer(model: type[BaseModel], seen: Seen) -> list[str]:
    answer = seen.answer
    if answer is None or "json" not in answer.content_type:
        return []
    name = model.__api_method__  # type: ignore[attr-defined]
    try:
        envelope = json.loads(answer.body)
    except ValueError:
        return [f"{name}: answer {answer.status} is not JSON"]
    if not isinstance(envelope, dict) or not isinstance(envelope.get("ok"), bool):
        return [f"{name}: answer {answer.status}: not the Bot API's envelope ({API}#making-requests)"]
    if not envelope["ok"]:
        wrong = [key for key, kind in (("error_code", int), ("description", str))
                 if not isinstance(envelope.get(key), kind)]
        extra = set(envelope) - {"ok", "error_code", "description", "parameters"}
        return [f"{name}: answer {answer.status}: {key} missing or of the wrong type" for key in wrong] + [
            f"{name}: answer {answer.status}: {key!r} is not a field of an error" for key in sorted(extra)]
    extra = set(envelope) - {"ok", "result", "description"}
    problems = [f"{name}: answer {answer.status}: {key!r} is not a field of the envelope" for key in sorted(extra)]
    try:
        result = _result(model).validate_json(json.dumps(envelope.get("result")), strict=True)
    except ValidationError as error:
        # The Bot API writes dates as Unix time (an integer), which aiogram reads into a datetime.
        wrong = [f"{name}: answer.result.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()
                 if not (e["type"] == "datetime_type" and type(e["input"]) is int)]
        if wrong:
            return problems + wrong[:10]
        result = _result(model).validate_json(json.dumps(envelope.get("result")))
    return problems + [f"{name}: {p}" for p in _unknown(result, "answer.result")]


def check(seen: Seen) -> list[str]:
    match = PATH.match(seen.path)
    if match is None:
        return [f"{seen.method} {seen.path}: not a Bot API method path"]
    if not TOKEN.fullmatch(match["token"]):
        return [f"{seen.method} {seen.path}: the bot's token is not in the path (/bot<id>:<secret>/...)"]
    model = methods().get(match["method"].lower())
    if model is None:
        return [f"{match['method']}: no such Bot API method"]
    name = model.__api_method__  # type: ignore[attr-defined]
    problems: list[str] = []
    try:
        if "json" in seen.content_type and seen.body:
            data = json.loads(seen.body)
            parsed = model.model_validate_json(seen.body, strict=True)
        else:
            data = _decoded({**seen.query, **seen.form()})
            parsed = model.model_validate(data)
    except ValidationError as error:
        problems = [f"{name}: {'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()]
    else:
        problems = [f"{name}: {p}" for p in _unknown(parsed, "body")]
    problems += [f"{name}: {p}" for p in _limits(name, data if isinstance(data, dict) else {})]
    return problems + _answer(model, seen)
