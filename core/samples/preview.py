"""Before a sample set is added: which of its rows the next sweep would move at once.

The sample is written exactly as `core.samples.data.add_sample` writes it (the write pipeline,
its moves, stamps, postings and effects), but on one connection inside a transaction that
is rolled back: every transaction the pipeline opens is a savepoint of it. Inside that
same transaction the sweep's own searches (`core.sweep.due.find_due`, `find_due_holds`) are run
at `now`, and what they find among the sample's rows is the answer. Then everything is
rolled back: no row, mark, audit entry, posting or email stays. (A serial key's sequence
is not transactional in PostgreSQL, so the rolled-back rows' numbers are not the ones the
add then takes: rows are named by their place in the sample file and their label.)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.engine import Connection

from core.samples.data import SampleRow, write_sample
from core.samples.files import SampleFile
from core.samples.transaction import OneTransaction
from core.store.store import Store
from core.sweep.due import find_due
from core.sweep.due_holds import find_due_holds

SEARCH_LIMIT = 100_000
"""How many due rows (and holds) the search reads at most: the venue's own due rows are
read too, longest-due first, and only the sample's are kept."""


@dataclass(frozen=True)
class SampleDue:
    """A sample row the next sweep would move (or give its hold back) as soon as it is
    added: its table, its place in the sample file (from 1) and label, what the sweep does
    (`placed → cancelled`, `hold 1`), and the moment that has passed."""

    table: str
    place: int
    label: str | None
    what: str
    moment: datetime
    hold: bool = False


def sample_due(store: Store, sample: SampleFile, *, now: datetime) -> list[SampleDue]:
    """The sample's rows due at once at `now` once added, soonest moment first; nothing
    is written (the add and the search run in one transaction that is rolled back)."""
    with store.engine.connect() as conn:
        outer = conn.begin()
        try:
            scratch = store.on_engine(OneTransaction(conn))  # type: ignore[arg-type]
            added = write_sample(scratch, sample, now=now)
            return _due(conn, scratch, added, now)
        finally:
            outer.rollback()


def _due(conn: Connection, store: Store, added: list[SampleRow], now: datetime) -> list[SampleDue]:
    rows: dict[tuple[str, str], SampleRow] = {(row.table, str(row.key)): row for row in added}
    found: list[SampleDue] = []
    due = find_due(conn, [store], now=now, limit=SEARCH_LIMIT)
    for item in due.due:
        row = rows.get((item.rule.table, str(item.key)))
        if row is not None:
            what = f"{item.rule.timed.from_} → {item.rule.timed.to}"
            found.append(SampleDue(row.table, row.place, row.label, what, item.moment))
    holds = find_due_holds(conn, [store], now=now, limit=SEARCH_LIMIT)
    for hold in holds.due:
        row = rows.get((hold.record.table, str(hold.record.key)))
        if row is not None:
            what = f"hold {hold.record.posting}"
            found.append(SampleDue(row.table, row.place, row.label, what, hold.moment, True))
    found.sort(key=lambda d: (d.moment, d.table, d.place, d.what))
    return found
