"""Delivery over TLS to real aiosmtpd servers with a certificate made by the test (trustme):
STARTTLS with a login, smtps:// from the first byte, and the refusals that keep an email
queued: a certificate no trusted CA signed, one for another host, a server off the loopback
offering no STARTTLS. SMTP_CA_FILE names the test's CA; without it the system's CAs judge."""

from __future__ import annotations

import ssl
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import trustme
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from core.basics.actors import Actor
from core.writes.pipeline import change_row
from core.writes.request import WriteRequest
from services.outbox import drain
from services.smtp import SmtpConfig
from tests.integration.outbox_fixtures import Inbox, free_port, mail_shop_manifest, outbox_rows
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import Shop

NOW = at("2026-06-12 10:00")
SENDER = "orders@shop.example"
USER, PASSWORD = "shop", "s3cret pass"


@dataclass
class TlsInbox(Inbox):
    """An inbox that also notes, per email, whether it came over TLS and who logged in."""

    sessions: list[tuple[bool, Any]] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        secured = server.transport.get_extra_info("ssl_object") is not None
        self.sessions.append((secured, session.auth_data))
        return await super().handle_DATA(server, session, envelope)


def check_login(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
    """The server's one account: USER with PASSWORD."""
    ok = isinstance(data, LoginPassword) and (data.login, data.password) == (
        USER.encode(),
        PASSWORD.encode(),
    )
    return AuthResult(success=ok, auth_data=data.login if ok else None)


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def ca_file(ca: trustme.CA, tmp_path: Path) -> str:
    path = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return str(path)


def server_context(ca: trustme.CA, *names: str) -> ssl.SSLContext:
    """A server's TLS context with a certificate the CA issued for `names`."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(*names).configure_cert(context)
    return context


@contextmanager
def tls_server(context: ssl.SSLContext, *, implicit: bool) -> Iterator[tuple[int, TlsInbox]]:
    """A real aiosmtpd on a free local port: TLS from the first byte (`implicit`), else
    STARTTLS required before any mail, with a login required over it."""
    inbox = TlsInbox()
    port = free_port()
    if implicit:
        controller = Controller(inbox, hostname="127.0.0.1", port=port, ssl_context=context)
    else:
        controller = Controller(
            inbox,
            hostname="127.0.0.1",
            port=port,
            tls_context=context,
            require_starttls=True,
            auth_required=True,
            authenticator=check_login,
        )
    controller.start()
    try:
        yield port, inbox
    finally:
        controller.stop()


@pytest.fixture
def mail_shop(make_shop: Callable[..., Shop]) -> Shop:
    return make_shop(mail_shop_manifest())


def queue_one(shop: Shop) -> int:
    """Cancel a new order, which queues its email; the email's id."""
    key = shop.order(None, email="ann@example.com")
    change_row(
        shop.store,
        WriteRequest(
            "orders", Actor.person("staff@example.com"), NOW, key=key, move_to="cancelled"
        ),
    )
    return int(outbox_rows(shop.engine)[-1]["id"])


def test_starttls_with_a_login_sends_over_tls_checked_against_smtp_ca_file(
    mail_shop: Shop, ca: trustme.CA, ca_file: str
) -> None:
    mail = queue_one(mail_shop)
    with tls_server(server_context(ca, "127.0.0.1"), implicit=False) as (port, inbox):
        url = f"smtp://{USER}:{PASSWORD.replace(' ', '%20')}@127.0.0.1:{port}"
        config = SmtpConfig.from_env(
            {"SMTP_URL": url, "MAIL_FROM": SENDER, "SMTP_CA_FILE": ca_file}
        )
        assert config.ca_file == ca_file
        done = drain(mail_shop.engine, "shop", config, clock=lambda: NOW)
    assert done.sent == [mail]
    assert inbox.sessions == [(True, USER.encode())]  # over TLS, logged in
    [received] = inbox.received
    assert received["To"] == "ann@example.com"


def test_smtps_sends_over_tls_from_the_first_byte(
    mail_shop: Shop, ca: trustme.CA, ca_file: str
) -> None:
    mail = queue_one(mail_shop)
    with tls_server(server_context(ca, "127.0.0.1"), implicit=True) as (port, inbox):
        config = SmtpConfig(f"smtps://127.0.0.1:{port}", SENDER, ca_file)
        done = drain(mail_shop.engine, "shop", config, clock=lambda: NOW)
    assert done.sent == [mail]
    assert inbox.sessions == [(True, None)]


@pytest.mark.parametrize("implicit", [True, False], ids=["smtps", "starttls"])
def test_a_certificate_no_trusted_ca_signed_keeps_the_email_queued(
    mail_shop: Shop, ca: trustme.CA, implicit: bool
) -> None:
    mail = queue_one(mail_shop)
    scheme = "smtps" if implicit else "smtp"
    with tls_server(server_context(ca, "127.0.0.1"), implicit=implicit) as (port, inbox):
        # No SMTP_CA_FILE: the system's CAs judge, and none of them signed the test's CA.
        config = SmtpConfig(f"{scheme}://{USER}:{PASSWORD}@127.0.0.1:{port}", SENDER)
        done = drain(mail_shop.engine, "shop", config, clock=lambda: NOW)
    assert (done.sent, done.retried) == ([], [mail])
    assert inbox.received == [] and inbox.sessions == []
    [row] = outbox_rows(mail_shop.engine)
    assert row["status"] == "queued" and row["attempts"] == 1
    assert "CERTIFICATE_VERIFY_FAILED" in row["answer"]
    assert "unable to get local issuer certificate" in row["answer"]


def test_a_certificate_for_another_host_keeps_the_email_queued(
    mail_shop: Shop, ca: trustme.CA, ca_file: str
) -> None:
    queue_one(mail_shop)
    with tls_server(server_context(ca, "mail.example.com"), implicit=True) as (port, inbox):
        config = SmtpConfig(f"smtps://127.0.0.1:{port}", SENDER, ca_file)
        done = drain(mail_shop.engine, "shop", config, clock=lambda: NOW)
    assert done.sent == [] and inbox.received == []
    [row] = outbox_rows(mail_shop.engine)
    assert "IP address mismatch" in row["answer"], row["answer"]


def test_a_server_off_the_loopback_offering_no_starttls_is_not_sent_to(mail_shop: Shop) -> None:
    queue_one(mail_shop)
    # 127.0.0.2 reaches this machine, yet is not one of the loopback names the product
    # trusts in the clear: it stands for any other host.
    inbox = Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.2", port=port)
    controller.start()
    try:
        config = SmtpConfig(f"smtp://127.0.0.2:{port}", SENDER)
        done = drain(mail_shop.engine, "shop", config, clock=lambda: NOW)
    finally:
        controller.stop()
    assert done.sent == [] and inbox.received == []
    [row] = outbox_rows(mail_shop.engine)
    assert row["answer"] == "SMTPNotSupportedError: 127.0.0.2 offers no STARTTLS"
