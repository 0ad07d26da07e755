"""The outbox tests' helpers: a shop whose orders queue a message when cancelled and a
reminder before `due_at`, and real SMTP servers (aiosmtpd) started in the test process.
"""

from __future__ import annotations

import asyncio
import copy
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from typing import Any

import psycopg
import redis
import sqlalchemy as sa
from aiosmtpd.controller import Controller
from psycopg import sql
from rq import Queue
from rq.exceptions import NoSuchJobError
from rq.job import Job

from services.sweep_ledger import QUEUE
from tests.conftest import database_url_for
from tests.integration.sweep_fixtures import SHOP, Shop, build_shop


def mail_shop_manifest(lead_at: str | None = None) -> dict[str, Any]:
    """The sweep tests' shop with addresses, customers with their own lead, and an outbox."""
    manifest = copy.deepcopy(SHOP)
    manifest["name"] = "mailshop"
    tables = manifest["tables"]
    tables["settings"]["columns"].append(
        {"ref": "reminder_hours", "type": "integer", "default": 24, "nullable": True}
    )
    tables["customers"] = {
        "key": "id",
        "columns": [
            {"ref": "id", "type": "serial"},
            {"ref": "reminder_hours", "type": "integer", "nullable": True},
        ],
    }
    tables["orders"]["columns"] += [
        {"ref": "email", "type": "text", "nullable": True},
        {"ref": "customer_id", "type": "integer", "references": "customers", "nullable": True},
    ]
    lead: dict[str, Any] = {
        "via": "customer_id",
        "table": "customers",
        "column": "reminder_hours",
        "fallback": {"table": "settings", "column": "reminder_hours"},
        "max": 48,
    }
    if lead_at is not None:
        lead["at"] = lead_at
    manifest["outbox"] = {
        "settings": {"table": "settings"},
        "producers": [
            {
                "kind": "message",
                "table": "orders",
                "on": {"column": "status", "values": ["cancelled"]},
                "to": "email",
                "subject": "Your order {{ row.id }} was cancelled",
                "body": "Cancelled because: {{ row.cancel_code }}.",
            },
            {
                "kind": "reminder",
                "link": "order_id",
                "to": "email",
                "before": {"table": "orders", "at": "due_at", "lead": lead},
                "subject": "Order {{ order_id }} is due",
            },
        ],
    }
    return manifest


@contextmanager
def module_shop(server_url: str, manifest: dict[str, Any]) -> Iterator[Shop]:
    """A shop on a database of its own for a whole test module (making databases is the
    slow part); each test empties what it wrote (`reset_shop`). Dropped afterwards."""
    name = f"adm_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        shop = build_shop(database_url_for(server_url, name), manifest)
        yield shop
        shop.engine.dispose()
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def reset_shop(shop: Shop) -> Shop:
    """The shop as a test expects it: no orders, emails or deliveries, ids from 1."""
    shop.sql(
        "TRUNCATE orders, adminium.outbox, adminium.deliveries, adminium.delivery_attempts,"
        " adminium.audit RESTART IDENTITY"
    )
    return shop


def outbox_rows(engine: sa.Engine) -> list[dict[str, Any]]:
    """Every outbox row, oldest first."""
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT * FROM adminium.outbox ORDER BY id")).mappings()
        return [dict(r) for r in rows]


def queued_jobs(client: redis.Redis, func: str, connection: str) -> list[Job]:
    """The jobs of `func` for one connection waiting in the product's queue (a job another
    test removes between the listing and the fetch is passed over)."""
    found = []
    for job_id in Queue(QUEUE, connection=client).get_job_ids():
        try:
            job = Job.fetch(job_id, connection=client)
        except NoSuchJobError:
            continue
        if job.func_name == func and job.args == (connection,):
            found.append(job)
    return found


def free_port() -> int:
    """A free TCP port on the loopback."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Inbox:
    """What a test SMTP server received, or the answer it refuses every message with; with
    `stall`, it waits that long inside DATA (and says so in `in_data`) before answering."""

    refuse: str | None = None
    stall: float = 0.0
    received: list[Message] = field(default_factory=list)
    in_data: threading.Event = field(default_factory=threading.Event)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.in_data.set()
        if self.stall:
            await asyncio.sleep(self.stall)
        if self.refuse is not None:
            return self.refuse
        self.received.append(message_from_bytes(envelope.original_content or envelope.content))
        return "250 Message accepted for delivery"


@contextmanager
def smtp_server(refuse: str | None = None, stall: float = 0.0) -> Iterator[tuple[str, Inbox]]:
    """A real aiosmtpd server on a free local port: its smtp:// URL and its inbox."""
    inbox = Inbox(refuse, stall)
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield f"smtp://127.0.0.1:{port}", inbox
    finally:
        controller.stop()


@dataclass
class FaultyInbox(Inbox):
    """A mail server that takes most messages and fails one way for each named recipient:
    `nobody@` refused at RCPT (550), `refuse@` refused after DATA (554), `drop@` the
    connection closed inside DATA with no answer, `broken@` a handler that raises (aiosmtpd
    answers 500). What it took is in `received`; `sessions` counts the connections."""

    sessions: int = 0

    async def handle_EHLO(
        self, server: Any, session: Any, envelope: Any, hostname: str, responses: list[str]
    ) -> list[str]:
        self.sessions += 1
        session.host_name = hostname
        return responses

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, options: list[str]
    ) -> str:
        if address.startswith("nobody@"):
            return "550 5.1.1 No such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        to = envelope.rcpt_tos[0]
        if to.startswith("refuse@"):
            return "554 5.7.1 Message refused by policy"
        if to.startswith("drop@"):
            server.transport.close()
            return "421 closing"  # never reaches the client: the connection is gone
        if to.startswith("broken@"):
            raise RuntimeError("the mail handler broke")
        return await super().handle_DATA(server, session, envelope)


@contextmanager
def faulty_smtp_server() -> Iterator[tuple[str, FaultyInbox]]:
    """A real aiosmtpd server with a FaultyInbox on a free local port: its URL and inbox."""
    inbox = FaultyInbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield f"smtp://127.0.0.1:{port}", inbox
    finally:
        controller.stop()
