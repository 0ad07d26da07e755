"""The demo that runs out of the box: three example apps with their samples, and a staff account.

On the first `adminium run`, a database `adminium_demo` (or the one ADMINIUM_DEMO_DATABASE
names, so that two demos can share one PostgreSQL) is made on the control plane's server
(the embedded one by default), the connection `demo` points at it in the venue
zone Europe/London, and the takeaway, tickets and hotel apps are installed there with
their tables and samples. Later runs find them and change nothing: samples are added only
with the app they belong to, so sample data a person removed stays removed. The takeaway's
automation posts cancelled orders to the webhook `kitchen`, which every run points at the
product's own receiver on the web's port (its "Recent webhook calls" view), so the demo
needs nothing outside.
"""

from __future__ import annotations

import json
import logging
import os
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from sqlalchemy import select

from core.basics.actors import Actor
from core.samples.data import SampleRow
from core.samples.files import load_sample
from core.store.store import Store
from services import apps, connections, users, webhooks
from services.demo_account import DEMO_EMAIL, DEMO_PASSWORD
from services.events import NO_PUBLISHER
from services.models import Connection
from services.samples import add_sample_data
from services.storage import open_session
from services.writes import write_by_person

log = logging.getLogger(__name__)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
DEMO_CONNECTION = "demo"
DEMO_DATABASE = "adminium_demo"
"""The demo's database unless ADMINIUM_DEMO_DATABASE names another."""
DEMO_ZONE = "Europe/London"
DEMO_APPS = ("takeaway", "tickets", "hotel")
DEMO_ROLE = "manager"
"""The demo account's role in each demo app (each of the three apps has a manager)."""
DEMO_WEBHOOK = "kitchen"
"""The webhook the takeaway's automation names (examples/takeaway.json)."""


def demo_wanted() -> bool:
    """Whether `adminium run` installs the demo: unless ADMINIUM_DEMO is 0, no or off."""
    return os.environ.get("ADMINIUM_DEMO", "1").strip().lower() not in ("0", "no", "off", "false")


def demo_database_name() -> str:
    """The demo's database: ADMINIUM_DEMO_DATABASE when set, else adminium_demo."""
    return os.environ.get("ADMINIUM_DEMO_DATABASE", "").strip() or DEMO_DATABASE


def install_demo(
    control_url: str,
    *,
    now: datetime,
    examples: Path = EXAMPLES,
    database: str | None = None,
    port: int | None = None,
) -> dict[str, list[SampleRow]]:
    """Install whatever of the demo is missing, and point its webhook at the receiver on the
    web's `port` (when given); the samples added, by app (empty when done). The database
    is `database`, else the one `demo_database_name` gives."""
    database = database or demo_database_name()
    added: dict[str, list[SampleRow]] = {}
    with open_session(control_url) as session:
        connection = session.scalar(select(Connection).where(Connection.name == DEMO_CONNECTION))
        if connection is None:
            url = demo_database(control_url, database)
            connection = connections.add_connection(session, DEMO_CONNECTION, url, DEMO_ZONE)
        have = {app.name for app in connection.apps}
        for name in DEMO_APPS:
            if name in have:
                continue
            app = apps.add_app(
                session, DEMO_CONNECTION, demo_manifest(examples, name), create_tables=True
            )
            sample = load_sample(examples / f"{name}.sample.json")
            # No screen is open before the first run has started the web.
            added[name] = add_sample_data(
                apps.app_store(app), sample, now=now, publisher=NO_PUBLISHER
            )
            if name == "tickets":
                add_till_ticket(apps.app_store(app), now=now)
        if added:
            add_demo_user(session)
        if port is not None:
            point_demo_webhook(session, port)
    if added:
        log.info("demo installed on connection %s: %s", DEMO_CONNECTION, ", ".join(added))
    return added


def add_till_ticket(store: Store, *, now: datetime) -> None:
    """A real gift card (sample rows never post) and a bar till ticket paid partly by it and
    left open: its card payment is a hold the clock gives back once the hold's minutes pass."""
    actor = Actor.person(DEMO_EMAIL)

    def write(table: str, values: dict[str, Any]) -> Any:
        result = write_by_person(
            store, table, actor=actor, clock=lambda: now, publisher=NO_PUBLISHER, values=values
        )
        return result.key

    card = write("gift_cards", {"holder_name": "Lena Brandt", "balance": Decimal("40")})
    ticket = {
        "items": "2 x lemonade, crisps",
        "total": Decimal("14.50"),
        "gift_card_id": card,
        "card_paid": Decimal("12.50"),
        "opened_at": now,
    }
    write("till_tickets", ticket)


def demo_manifest(examples: Path, name: str) -> dict[str, Any]:
    """An example app's manifest, its tables in a schema of its own (the apps share names)."""
    manifest: dict[str, Any] = json.loads((examples / f"{name}.json").read_text(encoding="utf-8"))
    manifest.setdefault("schema", name)
    return manifest


def receiver_url(port: int) -> str:
    """The product's own receiver of the demo webhook, on the web's port."""
    return f"http://127.0.0.1:{port}/receiver/{DEMO_CONNECTION}/{DEMO_WEBHOOK}"


def point_demo_webhook(session: Any, port: int) -> None:
    """The demo webhook, added with its secret (the receiver reads it from the control plane)
    or pointed at this run's port. It is the product's own receiver on the loopback, which
    webhooks post to only where private addresses are allowed (`adminium run` allows them
    for the demo: `demo_env`)."""
    url = receiver_url(port)
    found = {w.name: w for w in webhooks.list_webhooks(session, DEMO_CONNECTION)}
    if DEMO_WEBHOOK not in found:
        webhooks.add_webhook(session, DEMO_CONNECTION, DEMO_WEBHOOK, url, allow_private=True)
    elif found[DEMO_WEBHOOK].url != url:
        webhooks.set_webhook_url(session, DEMO_CONNECTION, DEMO_WEBHOOK, url, allow_private=True)


def demo_env(environ: dict[str, str]) -> None:
    """What the demo needs of the Procfile's environment: its webhook posts to the web's
    own receiver on the loopback, so private addresses are allowed unless the operator
    said otherwise (`ADMINIUM_WEBHOOKS_ALLOW_PRIVATE=0`)."""
    environ.setdefault(webhooks.ALLOW_PRIVATE, "1")


def add_demo_user(session: Any) -> None:
    """The demo staff account, manager of each demo app, with the documented password."""
    for name in DEMO_APPS:
        password = DEMO_PASSWORD if name == DEMO_APPS[0] else None
        users.add_user(
            session, DEMO_EMAIL, DEMO_ROLE, f"{DEMO_CONNECTION}/{name}", password=password
        )


def demo_database(control_url: str, database: str | None = None) -> str:
    """The demo database on the control plane's server, made if missing; its URL."""
    database = database or demo_database_name()
    with psycopg.connect(control_url, autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,)).fetchone()
        if found is None:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    info = psycopg.conninfo.conninfo_to_dict(control_url)
    info["dbname"] = database
    return psycopg.conninfo.make_conninfo(**info)
