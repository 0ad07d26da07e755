"""Webhook endpoints of a connection, kept in the control plane: add, list, remove.

An automation names a webhook; the connection keeps its URL and its signing secret, so
neither is ever in a manifest. The secret is made here in the Standard Webhooks form
(`whsec_` and 32 random bytes in base64), returned once when the webhook is added (the
console prints it for the receiver's keeper) and never shown or logged again. URLs are
shown and logged only through `hide_password`.

A webhook posts to public addresses only: a URL whose host is (or resolves to) a loopback,
private, link-local, unspecified or otherwise non-public address is refused as it is added,
and every POST checks again what the host resolves to then (`services.webhook_http`), unless
`ADMINIUM_WEBHOOKS_ALLOW_PRIVATE=1` says the operator means such a network (`make run` sets
it for the demo, whose webhook is the product's own receiver on the loopback).
"""

from __future__ import annotations

import base64
import ipaddress
import logging
import os
import re
import secrets
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.manifest.base import NAME_PATTERN
from services.connections import get_connection, list_connections
from services.errors import AlreadyExists, InvalidValue, NotFound
from services.models import Webhook
from services.urls import WEB_SCHEMES

log = logging.getLogger(__name__)

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32
ALLOW_PRIVATE = "ADMINIUM_WEBHOOKS_ALLOW_PRIVATE"
"""The variable whose value `1` lets webhooks post to loopback and private addresses."""


def private_allowed(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the operator lets webhooks post to non-public addresses (ALLOW_PRIVATE=1)."""
    return environ.get(ALLOW_PRIVATE, "").strip() == "1"


class BlockedAddress(Exception):
    """A POST refused before it was sent: the host resolves to an address not allowed."""


_KINDS = (
    ("is_unspecified", "an unspecified address"),
    ("is_loopback", "a loopback address"),
    ("is_link_local", "a link-local address"),
    ("is_multicast", "a multicast address"),
    ("is_private", "a private address"),
)


def address_refusal(host: str, address: str) -> str | None:
    """Why a webhook may not post to `address` (what `host` resolved to), in words; None for
    a public address."""
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    kind = next((words for test, words in _KINDS if getattr(ip, test)), None)
    if kind is None and not ip.is_global:
        kind = "not a public address"
    if kind is None:
        return None
    where = str(ip) if host.strip("[]") == address else f"{host} (it resolves to {ip})"
    return (
        f"the webhook's host {where} is {kind}: webhooks post to public addresses only,"
        f" unless {ALLOW_PRIVATE}=1 allows the machine's own networks"
    )


def make_secret() -> str:
    """A new signing secret in the Standard Webhooks form: `whsec_<base64 of 32 bytes>`."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def check_webhook_url(url: str) -> str:
    """The URL if it is an http(s) address with a host."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (reading it checks it)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in WEB_SCHEMES or not parts.hostname:
        raise InvalidValue(
            "the URL is no web address: write https://host/path (http:// for this machine)",
            {"field": "url"},
        )
    return url


def _check_name(name: str) -> str:
    if not re.match(NAME_PATTERN, name) or len(name) > 63:
        raise InvalidValue(
            f"{name!r} is no webhook name: use lower-case letters, digits and _ as the"
            ' manifest\'s "webhook" names it',
            {"field": "name", "value": name},
        )
    return name


def check_webhook_address(url: str, *, allow_private: bool | None = None) -> str | None:
    """Refuse (InvalidValue) a URL whose host is or resolves to an address a webhook may not
    post to (unless allowed: `private_allowed`); a note when the host does not resolve now
    (each POST looks it up again, and refuses it then)."""
    allowed = private_allowed() if allow_private is None else allow_private
    host = urlsplit(url).hostname or ""
    try:
        found = {info[4][0] for info in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)}
    except OSError:
        return f"{host} does not resolve now: each delivery looks it up again"
    for address in sorted(found):
        why = None if allowed else address_refusal(host, str(address))
        if why is not None:
            raise InvalidValue(why, {"field": "url"})
    return None


@dataclass(frozen=True)
class AddedWebhook:
    """A webhook just added, its secret (shown this once), and a note on its URL."""

    webhook: Webhook
    secret: str = field(repr=False)
    note: str | None = None


def add_webhook(
    session: Session,
    connection_name: str,
    name: str,
    url: str,
    *,
    allow_private: bool | None = None,
) -> AddedWebhook:
    """Add a webhook to a connection with a new secret; the secret is returned this once.
    A URL of a non-public address is refused unless allowed (`check_webhook_address`)."""
    connection = get_connection(session, connection_name)
    _check_name(name)
    check_webhook_url(url)
    note = check_webhook_address(url, allow_private=allow_private)
    if _find(session, connection.id, name) is not None:
        raise AlreadyExists(
            f"connection {connection_name!r} already has a webhook named {name!r}",
            {"connection": connection_name, "webhook": name},
        )
    secret = make_secret()
    webhook = Webhook(connection=connection, name=name, url=url, secret=secret)
    session.add(webhook)
    session.commit()
    log.info("webhook %s added on connection %s: %s", name, connection_name, webhook.safe_url)
    return AddedWebhook(webhook, secret, note)


def set_webhook_url(
    session: Session,
    connection_name: str,
    name: str,
    url: str,
    *,
    allow_private: bool | None = None,
) -> Webhook:
    """Point a webhook at another URL (checked as `add_webhook` checks it); its secret stays."""
    webhook = get_webhook(session, connection_name, name)
    check_webhook_address(check_webhook_url(url), allow_private=allow_private)
    webhook.url = url
    session.commit()
    log.info("webhook %s of connection %s now posts to %s", name, connection_name, webhook.safe_url)
    return webhook


def list_webhooks(session: Session, connection_name: str) -> list[Webhook]:
    """A connection's webhooks, by name."""
    return list(get_connection(session, connection_name).webhooks)


def get_webhook(session: Session, connection_name: str, name: str) -> Webhook:
    """One webhook of a connection; NotFound names what is there."""
    connection = get_connection(session, connection_name)
    webhook = _find(session, connection.id, name)
    if webhook is None:
        raise NotFound(
            f"connection {connection_name!r} has no webhook named {name!r}",
            {"connection": connection_name, "webhook": name},
        )
    return webhook


def remove_webhook(session: Session, connection_name: str, name: str) -> None:
    """Remove a webhook: deliveries that name it are refused (and tried again) from then on."""
    session.delete(get_webhook(session, connection_name, name))
    session.commit()
    log.info("webhook %s removed from connection %s", name, connection_name)


def _find(session: Session, connection_id: int, name: str) -> Webhook | None:
    query = select(Webhook).where(Webhook.connection_id == connection_id, Webhook.name == name)
    return session.scalar(query)


@dataclass(frozen=True)
class Endpoint:
    """Where a delivery goes and what signs it, read from the control plane for one drain."""

    name: str
    url: str = field(repr=False)
    secret: str = field(repr=False)


def endpoints(session: Session, connection_name: str) -> dict[str, Endpoint]:
    """A connection's webhooks by name, as a drain signs and posts with them."""
    return {
        w.name: Endpoint(w.name, w.url, w.secret) for w in list_webhooks(session, connection_name)
    }


def connections_with_automations(session: Session) -> list[str]:
    """Every connection with an app that has automations: the minute's delivery drains."""
    return [
        c.name for c in list_connections(session) if any(app.model.automations for app in c.apps)
    ]
