"""Email over SMTP: where it goes (`SmtpConfig`), one session, and an outbox row as the
email its reader gets.

`SMTP_URL` (`smtp://user:pass@host:587`, STARTTLS; `smtps://…`) and `MAIL_FROM` configure
it; the URL is shown and logged only through `hide_password`. The server's certificate is
always verified, against the system's CAs or, with `SMTP_CA_FILE`, the CAs in that file (a
private CA; the tests' own).
"""

from __future__ import annotations

import os
import re
import smtplib
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from email.charset import QP, Charset
from email.header import Header
from email.message import Message
from email.mime.text import MIMEText
from email.utils import format_datetime
from typing import Any
from urllib.parse import unquote, urlsplit

from services.urls import hide_password

SMTP_TIMEOUT = 20.0
DEFAULT_FROM = "adminium@localhost"
LOOPBACK = ("localhost", "127.0.0.1", "::1")


@dataclass(frozen=True)
class SmtpConfig:
    """Where mail goes: the SMTP URL, the sender's address, and the CAs that may sign the
    server's certificate (None: the system's)."""

    url: str
    mail_from: str = DEFAULT_FROM
    ca_file: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> SmtpConfig:
        """SMTP_URL, MAIL_FROM and SMTP_CA_FILE; without SMTP_URL, the embedded server's port
        on the loopback."""
        url = environ.get("SMTP_URL") or "smtp://127.0.0.1:8025"
        return cls(
            url, environ.get("MAIL_FROM") or DEFAULT_FROM, environ.get("SMTP_CA_FILE") or None
        )

    @property
    def shown(self) -> str:
        return hide_password(self.url)


class SmtpSession:
    """One SMTP session, opened at the first email and reopened after a broken one."""

    def __init__(self, config: SmtpConfig) -> None:
        self.config = config
        self.smtp: smtplib.SMTP | None = None

    def open(self) -> smtplib.SMTP:
        if self.smtp is None:
            self.smtp = connect(self.config.url, ca_file=self.config.ca_file)
        return self.smtp

    def close(self) -> None:
        if self.smtp is not None:
            try:
                self.smtp.quit()
            except (smtplib.SMTPException, OSError):
                self.smtp.close()
            self.smtp = None

    def send(self, message: bytes, to: str) -> str:
        """Send one message (as its bytes); the server's answer to its data. Raises on any
        refusal (SMTPResponseException, the session reset and kept) or fault (the session
        dropped: the next email opens a new one, whatever state this one left it in)."""
        smtp = self.open()
        try:
            for call, ok in (
                (lambda: smtp.mail(self.config.mail_from), (250,)),
                (lambda: smtp.rcpt(to), (250, 251)),
                (lambda: smtp.data(message), (250,)),
            ):
                code, text = call()
                if code not in ok:
                    raise smtplib.SMTPResponseException(code, text)
            return f"{code} {reply_text(text)}"
        except smtplib.SMTPResponseException:
            self._reset(smtp)
            raise
        except BaseException:
            self._abandon(smtp)
            raise

    def _reset(self, smtp: smtplib.SMTP) -> None:
        """After a refusal: RSET, so the next email starts clean; a session that cannot even
        do that is dropped."""
        try:
            smtp.rset()
        except Exception:
            self._abandon(smtp)

    def _abandon(self, smtp: smtplib.SMTP) -> None:
        """A broken or half-spoken session is closed, never reused: the next email opens one."""
        smtp.close()
        self.smtp = None


def connect(url: str, *, ca_file: str | None = None) -> smtplib.SMTP:
    """An SMTP session at `url`: smtps:// is TLS from the start; smtp:// takes STARTTLS when
    offered, and insists on it off the loopback; with a user, logged in. The certificate is
    verified (chain and host name) against the system's CAs, or only those in `ca_file`."""
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    context = ssl.create_default_context(cafile=ca_file)
    if parts.scheme == "smtps":
        smtp: smtplib.SMTP = smtplib.SMTP_SSL(timeout=SMTP_TIMEOUT, context=context)
    elif parts.scheme == "smtp":
        smtp = smtplib.SMTP(timeout=SMTP_TIMEOUT)
    else:
        raise ValueError(f"SMTP_URL is smtp:// or smtps://, not {parts.scheme or '(none)'}://")
    # Connected here rather than by the constructor, which leaves the socket open when the
    # server's greeting never comes; TLS checks the certificate against `_host`, which only
    # the constructor would set.
    smtp._host = host
    try:
        code, greeting = smtp.connect(host, parts.port or (465 if parts.scheme == "smtps" else 587))
        if code != 220:
            raise smtplib.SMTPConnectError(code, greeting)
        # EHLO first on either scheme: smtplib's mail() never says it (only sendmail() and
        # login() do), and a server may refuse MAIL without it.
        smtp.ehlo()
        if parts.scheme == "smtp":
            if smtp.has_extn("starttls"):
                smtp.starttls(context=context)
                smtp.ehlo()
            elif host not in LOOPBACK:
                raise smtplib.SMTPNotSupportedError(f"{host} offers no STARTTLS")
        if parts.username:
            smtp.login(unquote(parts.username), unquote(parts.password or ""))
    except (smtplib.SMTPException, OSError):
        smtp.close()
        raise
    return smtp


def message_id(connection: str, row: Mapping[str, Any], mail_from: str) -> str:
    """The one Message-ID of an outbox row: its id, app and connection, at the sender's domain."""
    domain = mail_from.rpartition("@")[2] or "localhost"
    where = re.sub(r"[^A-Za-z0-9.-]", "-", f"{row['app']}.{connection}")
    return f"<outbox-{row['id']}.{where}@{domain}>"


def build_message(connection: str, row: Mapping[str, Any], mail_from: str) -> Message:
    """An outbox row as the email its reader gets: plain text in UTF-8, headers encoded
    where they need it. (The classic `email` API: the modern one took a millisecond an
    email to build, more than the sending.)"""
    body: str = row["body"]
    message = MIMEText(body, "plain", "us-ascii" if body.isascii() else _UTF8)
    message["From"] = mail_from
    message["To"] = _header(row["address"])
    message["Subject"] = _header(row["subject"])
    message["Date"] = format_datetime(row["queued_at"])
    message["Message-ID"] = message_id(connection, row, mail_from)
    return message


_UTF8 = Charset("utf-8")
_UTF8.body_encoding = QP  # readable as it is kept (instance/mail), unlike base64


def _header(text: str) -> str | Header:
    return text if text.isascii() else Header(text, "utf-8")


def reply_text(text: bytes | str) -> str:
    """A server's answer as text."""
    return text.decode(errors="replace") if isinstance(text, bytes) else str(text)
