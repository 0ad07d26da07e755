"""What the outermost write settles at its end, before its commit (DESIGN "The write pipeline").

A write and the linked rows its effects move share one `Settling`: the parents whose
totals they touched, each row's audit entry, the postings whose amount is a total and
the rows whose emails and deliveries wait. `settle` then writes every total once, makes
each audit entry of a row whose totals changed say the row as committed, makes those
postings from the row as committed, and only then queues each row's emails and webhook
deliveries from the row as committed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Connection

from core.basics.actors import Actor
from core.basics.events import RowEvent
from core.ledgers.postings import PostingPlan, make_postings
from core.outbox.messages import queue_messages
from core.setoff.automations import queue_deliveries
from core.setoff.totals import TotalsWritten, Touched, write_totals
from core.store.audit import settle_after
from core.store.store import Row, Store


@dataclass(frozen=True)
class Told:
    """A row's write whose emails and deliveries wait for the row as committed."""

    table: str
    key: Any
    held: Row | None
    row: Row


@dataclass(frozen=True)
class Posted:
    """A row's write whose postings of a total wait for the row as committed."""

    table: str
    key: Any
    plan: PostingPlan
    held: Row | None
    row: Row
    numbers: frozenset[int]


@dataclass
class Settling:
    """What one write (its effects included) settles at its end, once its totals are
    recomputed: the parents touched, each row's audit entry, and the rows whose emails and
    deliveries are queued then, from the row as committed (its new totals in it)."""

    touched: Touched = field(default_factory=Touched)
    audited: dict[tuple[str, Any], int] = field(default_factory=dict)
    told: list[Told] = field(default_factory=list)
    posted: list[Posted] = field(default_factory=list)


def settle(
    conn: Connection, store: Store, settling: Settling, *, actor: Actor, now: datetime
) -> tuple[TotalsWritten, int, int, list[RowEvent]]:
    """The outermost write's end, before its commit: every total it touched written once;
    each audit entry of a row whose totals changed made to say the row as committed; the
    postings whose amount is a total made from the row as committed; then each row's
    emails and deliveries queued from the row as committed (its totals in it). The new
    totals, how many emails and deliveries were queued, the accounts' events."""
    totals = TotalsWritten()
    if settling.touched.parents:
        totals = write_totals(conn, store, settling.touched.parents, actor=actor.name)
    by_table: dict[str, list[dict[str, Any]]] = {}
    for (table, key), audit_id in settling.audited.items():
        if (table, key) in totals.values:
            by_table.setdefault(table, []).append({"a_id": audit_id, "p_key": key})
    for table, params in sorted(by_table.items()):
        conn.execute(settle_after(store.table(table), store.spec(table).key), params)
    accounts: list[RowEvent] = []
    for posted in settling.posted:
        row = {**posted.row, **totals.values.get((posted.table, posted.key), {})}
        accounts += make_postings(
            conn,
            store,
            posted.table,
            posted.plan,
            posted.held,
            row,
            actor=actor,
            now=now,
            numbers=posted.numbers,
        )
    queued = delivering = 0
    for told in settling.told:
        row = {**told.row, **totals.values.get((told.table, told.key), {})}
        queued += queue_messages(conn, store, told.table, told.held, row, actor, now)
        delivering += queue_deliveries(conn, store, told.table, told.held, row, actor, now)
    return totals, queued, delivering, accounts
