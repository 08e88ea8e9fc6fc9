"""How the service's processes write their log lines: messages redacted, tracebacks without text.

An exception's text can quote what a caller sent or what a platform answered (a token in a URL,
a customer's message, a row's values in a database error), and the redacting filter only knows
token shapes. So a logged fault keeps where it happened (its frames) and what it was (its type),
but never its words. Installed once, on the root handler, by the command that starts a process.
"""

from __future__ import annotations

import logging
import sys
import threading
import traceback
from collections.abc import Iterator
from types import TracebackType

from platforms.http import redact

WITHHELD = "(its text is withheld from the log)"

ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None] | tuple[None, None, None]


def _type_name(exc_type: type[BaseException] | None) -> str:
    if exc_type is None:
        return "None"
    module = exc_type.__module__
    return exc_type.__qualname__ if module == "builtins" else f"{module}.{exc_type.__qualname__}"


def _lines(exception: traceback.TracebackException) -> Iterator[str]:
    """`traceback.format_exception`'s lines, chained causes included, with each text left out."""
    if exception.__cause__ is not None:
        yield from _lines(exception.__cause__)
        yield "\nThe above exception was the direct cause of the following exception:\n\n"
    elif exception.__context__ is not None and not exception.__suppress_context__:
        yield from _lines(exception.__context__)
        yield "\nDuring handling of the above exception, another exception occurred:\n\n"
    if exception.stack:
        yield "Traceback (most recent call last):\n"
        yield from exception.stack.format()
    yield f"{_type_name(exception.exc_type)} {WITHHELD}\n"
    for member in exception.exceptions or ():  # an ExceptionGroup's members, each as above
        yield from _lines(member)


def withheld_traceback(exc_info: ExcInfo) -> str:
    """The traceback of `exc_info` as the log keeps it: frames and types, no exception text."""
    _, error, _ = exc_info
    if error is None:
        return ""
    described = traceback.TracebackException.from_exception(error, lookup_lines=True)
    return "".join(_lines(described)).rstrip("\n")


class ServiceFormatter(logging.Formatter):
    """A `logging.Formatter` whose lines never carry a token nor an exception's text."""

    def format(self, record: logging.LogRecord) -> str:
        # Another handler may have cached its own rendering of the traceback on the record.
        record.exc_text = None
        return super().format(record)

    def formatMessage(self, record: logging.LogRecord) -> str:
        return redact(super().formatMessage(record))

    def formatException(self, ei: ExcInfo) -> str:
        return withheld_traceback(ei)


def _log_uncaught(exc_type: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
    if issubclass(exc_type, KeyboardInterrupt):
        sys.__excepthook__(exc_type, error, tb)
        return
    logging.getLogger("switchboard").critical("uncaught exception", exc_info=(exc_type, error, tb))


def _log_uncaught_in_thread(args: threading.ExceptHookArgs) -> None:
    if args.exc_value is not None:
        thread = args.thread.name if args.thread else "?"
        logging.getLogger("switchboard").critical(
            "uncaught exception in thread %s", thread, exc_info=(args.exc_type, args.exc_value, args.exc_traceback))


def configure_logging(level: int, fmt: str) -> None:
    """One handler on stderr, on the root logger, with `ServiceFormatter`; every library's
    logger (uvicorn's included, when it is started with `log_config=None`) reaches it, and so
    does an exception nothing caught, which Python would otherwise print with its text."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(ServiceFormatter(fmt))
    logging.basicConfig(level=level, handlers=[handler])
    sys.excepthook = _log_uncaught
    threading.excepthook = _log_uncaught_in_thread
