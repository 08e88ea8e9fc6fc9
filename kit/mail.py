"""E-mail to people (invitations, accounts that need reconnecting), through the operator's SMTP server.

`SWITCHBOARD_SMTP_URL` is `smtp://user:pass@host:port` (STARTTLS when the server offers it) or
`smtps://user:pass@host:port` (TLS from the start). Unset, nothing is sent and callers show what
they would have mailed instead. Sending waits on the network: call it with no transaction open.
A failure is logged without the server's credentials and answered False, never raised: a mail that
did not go must not undo the change it tells of.
"""

from __future__ import annotations

import logging
import smtplib
import ssl
from email.message import EmailMessage
from urllib.parse import unquote, urlsplit

from kit import settings

log = logging.getLogger("switchboard.mail")
TIMEOUT_SECONDS = 10.0


def configured() -> bool:
    return bool(settings.current().smtp_url)


def send(*, to: str, subject: str, text: str) -> bool:
    """Send one plain-text message; True when the server accepted it."""
    current = settings.current()
    if not current.smtp_url:
        return False
    url = urlsplit(current.smtp_url)
    message = EmailMessage()
    message["From"] = current.mail_from
    message["To"] = to
    message["Subject"] = subject
    message.set_content(text)
    secure = url.scheme == "smtps"
    host = url.hostname or "127.0.0.1"
    port = url.port or (465 if secure else 25)
    try:
        client: smtplib.SMTP
        if secure:
            client = smtplib.SMTP_SSL(host, port, timeout=TIMEOUT_SECONDS, context=ssl.create_default_context())
        else:
            client = smtplib.SMTP(host, port, timeout=TIMEOUT_SECONDS)
        with client:
            if not secure:
                client.ehlo()
                if client.has_extn("starttls"):
                    client.starttls(context=ssl.create_default_context())
                    client.ehlo()
            if url.username:
                client.login(unquote(url.username), unquote(url.password or ""))
            client.send_message(message)
    except (OSError, smtplib.SMTPException) as failure:
        log.warning("mail to a recipient could not be sent through %s:%s: %s", host, port, type(failure).__name__)
        return False
    return True
