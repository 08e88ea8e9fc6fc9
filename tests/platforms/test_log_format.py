"""A log line never carries an exception's text or a token: frames and types only."""

import io
import logging
import subprocess
import sys
import uuid

from platforms.log_format import WITHHELD, ServiceFormatter

TOKEN = "EAAB" + "x" * 40
# Made at run time, so that no frame's source line (which a traceback shows) quotes them.
CUSTOMER_TEXT, KEY_NAME, PATH, GROUP = (uuid.uuid4().hex for _ in range(4))


def _stored(customer_text: str) -> None:
    raise ValueError(f"cannot store {customer_text!r} with access_token={TOKEN}")


def _send(customer_text: str) -> None:
    try:
        _stored(customer_text)
    except ValueError as error:
        raise RuntimeError(f"send failed for {customer_text}") from error


def _logged(fmt: str = "%(levelname)s %(name)s %(message)s") -> str:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(ServiceFormatter(fmt))
    log = logging.getLogger("tests.log_format")
    log.addHandler(handler)
    log.propagate = False
    try:
        try:
            _send(CUSTOMER_TEXT)
        except RuntimeError:
            log.exception("message %s failed, token %s", "msg_1", f"Bearer {TOKEN}")
        try:
            raise ExceptionGroup(GROUP, [KeyError(KEY_NAME), OSError(f"disk {PATH} full")])
        except ExceptionGroup:
            log.exception("group")
    finally:
        log.removeHandler(handler)
    return stream.getvalue()


def test_a_logged_fault_keeps_its_frames_and_types_but_not_its_text():
    written = _logged()
    assert "message msg_1 failed" in written
    # where and what: both exceptions of the chain, their frames and the chain's wording
    assert "ValueError " + WITHHELD in written and "RuntimeError " + WITHHELD in written
    assert 'in _stored' in written and 'in _send' in written
    assert "direct cause of the following exception" in written
    assert "KeyError " + WITHHELD in written and "OSError " + WITHHELD in written
    # never the words: neither the customer's text, nor the token (in the message or the exception)
    for secret in (CUSTOMER_TEXT, TOKEN, KEY_NAME, PATH, GROUP):
        assert secret not in written, secret


def test_the_cli_writes_its_log_through_the_formatter():
    # A fresh process, configured as `switchboard serve` and `switchboard worker` are: its root
    # handler withholds, for our loggers and the libraries' alike (uvicorn's and Huey's propagate).
    script = (
        "import logging, sys\n"
        "from switchboard.cli import configure_process_logging\n"
        "configure_process_logging(sys.argv[1])\n"
        "for name in ('switchboard.http', 'uvicorn.error', 'huey'):\n"
        "    try:\n"
        "        raise LookupError(sys.argv[2])\n"
        "    except LookupError:\n"
        "        logging.getLogger(name).exception('lookup failed')\n"
        "import threading\n"
        "def lost(): raise LookupError(sys.argv[2])\n"
        "thread = threading.Thread(target=lost); thread.start(); thread.join()\n"
        "raise LookupError(sys.argv[2])  # nothing catches it\n"
    )
    for command in ("serve", "worker", "bootstrap"):
        row = f"row of {uuid.uuid4().hex}@example.com"
        run = subprocess.run([sys.executable, "-c", script, command, row], capture_output=True, text=True, timeout=60)
        assert run.returncode == 1, command
        assert run.stderr.count("lookup failed") == 3, command
        assert "uncaught exception in thread" in run.stderr and "uncaught exception\n" in run.stderr, command
        assert run.stderr.count("LookupError " + WITHHELD) == 5, command
        assert row not in run.stderr, command
