"""What the screens read of postings and holds: a row's postings with their entries, the
holds of a connection waiting to be given back (beside its pending timed moves), and the
give-backs the ledger's cap refused, set aside (beside the set-aside timed moves)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.ledgers.accounts import ledger_bounds
from core.ledgers.entries import PostingRecord, PostingStatus, due_holds, read_postings
from core.ledgers.holds import holding_tables
from core.ledgers.postings import give_back_rule
from core.ledgers.statement import Entry, entry_of
from core.manifest.ledger_model import Ledger
from core.store.schema import ledger_entries
from core.store.set_aside import SetAside, read_set_aside
from core.store.store import Row, Store
from core.sweep.due_holds import DueHolds, as_rows_read, find_due_holds
from core.sweep.pending import set_aside_rows

NEVER = datetime.max.replace(tzinfo=UTC)
WAITING_LIMIT = 200
"""At most this many waiting holds are listed; the sweep gives back 500 a minute anyway."""


@dataclass(frozen=True)
class RowPosting:
    """One of a row's postings: where it stands, and the ledger entries it made, oldest first."""

    record: PostingRecord
    entries: tuple[Entry, ...]
    aside: SetAside | None = None

    @property
    def held(self) -> bool:
        return self.record.status is PostingStatus.held

    def due(self, now: datetime) -> bool:
        """A hold whose heldUntil has passed: the minute job gives it back."""
        until = self.record.held_until
        return self.held and until is not None and until <= now


def row_postings(store: Store, table: str, key: str) -> list[RowPosting]:
    """A row's postings (by posting number) with their entries; a give-back the cap
    refused carries its set-aside record."""
    with store.engine.connect() as conn:
        found = read_postings(conn, store.app.name, table, key)
        records = [found[number] for number in sorted(found)]
        if not records:
            return []
        records = _as_rows_read(conn, store, records)
        entries = conn.execute(
            sa.select(ledger_entries)
            .where(
                ledger_entries.c.app == store.app.name,
                ledger_entries.c.table_name == table,
                ledger_entries.c.row_key == key,
            )
            .order_by(ledger_entries.c.id)
        ).mappings()
        made = [(row["posting"], entry_of(dict(row))) for row in entries]
        asides = read_set_aside(conn, [store.app.name], table=table, key=key)
    return [
        RowPosting(
            record,
            tuple(entry for number, entry in made if number == record.posting),
            asides.get((store.app.name, table, key, give_back_rule(record.posting))),
        )
        for record in records
    ]


@dataclass(frozen=True)
class WaitingHold:
    """A hold waiting to be given back: its app, its record, and its set-aside record when
    the cap refused it."""

    app: str
    posting: RowPosting


def waiting_holds(stores: Sequence[Store], limit: int = WAITING_LIMIT) -> list[WaitingHold]:
    """The holds the clock will give back, soonest first, across the stores."""
    found: list[WaitingHold] = []
    for store in stores:
        if not holding_tables(store.app):
            continue
        with store.engine.connect() as conn:
            # Every hold with a moment: those due at the end of time are all of them.
            records = due_holds(conn, store.app.name, NEVER, limit)
            records = _as_rows_read(conn, store, records)
            asides = read_set_aside(conn, [store.app.name]) if records else {}
        for record in records:
            aside = asides.get(
                (store.app.name, record.table, record.key, give_back_rule(record.posting))
            )
            found.append(WaitingHold(store.app.name, RowPosting(record, (), aside)))
    found.sort(key=lambda hold: hold.posting.record.held_until or NEVER)
    return found[:limit]


def _as_rows_read(
    conn: Connection, store: Store, records: list[PostingRecord]
) -> list[PostingRecord]:
    """The held records with the heldUntil their row reads now
    (core.sweep.due_holds.as_rows_read)."""
    held = [r for r in records if r.status is PostingStatus.held]
    if not held:
        return records
    read = {
        (r.table, r.key, r.posting): r
        for r in as_rows_read(conn, store, held, store.read_clock_tables(conn))
    }
    return [read.get((r.table, r.key, r.posting), r) for r in records]


def holds_due(stores: Sequence[Store], *, by: datetime, now: datetime, limit: int) -> DueHolds:
    """The holds due by `by` (at most `limit`, longest-due first) as the sweep finds them
    (`core.sweep.due_holds.find_due_holds`), and those whose give-back is set aside at `now` beside
    (`passed_by`): what `adminium due`, `sweep --dry-run` and the sweep's `still due`
    list and count."""
    if not stores or not any(holding_tables(store.app) for store in stores):
        return DueHolds((), (), False)
    with stores[0].engine.connect() as conn:
        records = read_set_aside(conn, [s.app.name for s in stores])
        tables = {s.app.name: s.read_clock_tables(conn) for s in stores}
        found = find_due_holds(conn, stores, now=by, limit=limit, records=records, tables=tables)
    if by == now:
        return found
    # Looked ahead: set aside means set aside at `now`, not at `by`.
    every = sorted([*found.due, *found.passed_by], key=lambda hold: hold.moment)
    due = [h for h in every if h.aside is None or not h.aside.holds(h.moment, now)]
    passed = [h for h in every if h.aside is not None and h.aside.holds(h.moment, now)]
    return DueHolds(tuple(due[:limit]), tuple(passed), found.more or len(due) > limit)


def hold_apps(stores: Sequence[Store], record: PostingRecord) -> list[str]:
    """The apps among `stores` a posting record can be of: those holding its table with
    a ledger of its name (one, but for two apps of one connection alike)."""
    return [
        store.app.name
        for store in stores
        if record.table in holding_tables(store.app)
        and any(ledger.name == record.ledger for ledger in store.app.ledgers or ())
    ]


@dataclass(frozen=True)
class GiveBackAside:
    """A hold whose give-back the ledger's cap refused, left alone until `record.until`.
    What a person can do: bring the account's balance down so the amount fits back under
    the ledger's max (`fits_at`), or move the row (out of the held states the hold is
    taken for good; into `givesBack` it is given back at once)."""

    app: str
    record: SetAside
    posting: PostingRecord
    ledger: Ledger
    row: Row
    account: Row | None
    bounds_high: Decimal | None

    @property
    def dom_id(self) -> str:
        """The list item's stable id."""
        return f"aside-{self.posting.table}-{self.posting.key}-give-back-{self.posting.posting}"

    @property
    def rows(self) -> tuple[tuple[str, str], ...]:
        """The rows whose change may change this item: the held row and its account."""
        return ((self.posting.table, self.posting.key), (self.ledger.table, self.posting.account))

    @property
    def balance(self) -> Decimal | None:
        """The account's balance now."""
        if self.account is None:
            return None
        return Decimal(str(self.account.get(self.ledger.balance) or 0))

    @property
    def fits_at(self) -> Decimal | None:
        """The highest balance at which the amount fits back; None when unbounded above."""
        return None if self.bounds_high is None else self.bounds_high - self.posting.amount


def set_aside_give_backs(
    stores: Sequence[Store], table: str | None = None, key: str | None = None
) -> list[GiveBackAside]:
    """The give-backs set aside now, oldest refusal first: a record under a posting's
    negative rule number whose posting is still held and whose row is still there. With
    `table` and `key`, those of that row or giving back to that account."""
    found: list[GiveBackAside] = []
    for store in stores:
        if not holding_tables(store.app):
            continue
        ledgers = {ledger.name: ledger for ledger in store.app.ledgers or ()}
        with store.engine.connect() as conn:
            records = [r for r in read_set_aside(conn, [store.app.name]).values() if r.rule < 0]
            if not records:
                continue
            tables = store.read_clock_tables(conn)
            for record in records:
                posting = read_postings(conn, store.app.name, record.table, record.key).get(
                    -record.rule
                )
                row = store.read_row(conn, record.table, store.coerce_key(record.table, record.key))
                if posting is None or posting.status is not PostingStatus.held or row is None:
                    continue  # a move took it or gave it back since: nothing is set aside
                ledger = ledgers[posting.ledger]
                account_key = store.coerce_key(ledger.table, posting.account)
                account = store.read_row(conn, ledger.table, account_key)
                high = ledger_bounds(ledger, tables).high
                found.append(
                    GiveBackAside(store.app.name, record, posting, ledger, row, account, high)
                )
    if table is not None:
        found = [aside for aside in found if (table, key) in aside.rows]
    found.sort(key=lambda aside: aside.record.at or aside.record.moment)
    return found


def set_aside_count(stores: Sequence[Store]) -> int:
    """How many items the set-aside list shows: the rows whose timed move was refused and
    the give-backs the ledger's cap refused (what every badge and card counts)."""
    return len(set_aside_rows(stores)) + len(set_aside_give_backs(stores))
