"""The minute sweep of one connection unless it is paused, and "Try again now" on a set-aside row.

The fence that keeps one sweep per connection lives in the connection's database
(`core.sweep.fence`, a lease), taken by `core.sweep.sweep.sweep_connection`; a sweep it
turned away is counted cluster-wide (`services.fence_ledger`); each move's events go out as
soon as it commits, and each row set aside is told once the sweep is over.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from redis import RedisError
from sqlalchemy.orm import Session

from core.basics.actors import Actor
from core.basics.events import RowEvent
from core.store.store import Store
from core.sweep.hold_reads import hold_apps
from core.sweep.moves import try_timed_move
from core.sweep.pending import set_aside_rows
from core.sweep.report import SweepOutcome, SweepReport
from core.sweep.sweep import DEADLINE, sweep_connection
from services.agreement import compare_again
from services.apps import SweptApps, swept_apps
from services.deliveries import deliveries_queued
from services.events import Publisher
from services.fence_ledger import count_fenced
from services.outbox import mail_queued, wake_drain

log = logging.getLogger(__name__)


def sweep(
    session: Session,
    connection: str,
    *,
    now: datetime,
    publisher: Publisher,
    dry_run: bool = False,
    deadline: float = DEADLINE,
    token: str | None = None,
) -> SweepReport:
    """Sweep a connection of the control plane, unless it is paused as the sweep starts;
    `token`, the control plane's announcements' token as the job started (a worker's read
    of the control plane is kept while it holds: `services.apps.SweptReads`)."""
    found = swept_apps(session, connection, token)
    if found.paused:
        log.debug("sweep of connection %s skipped: paused", connection)  # each minute: quiet
        return SweepReport(connection, now, SweepOutcome.paused, dry_run=dry_run)
    stores = found.stores
    # The control plane's connection is not held while the sweep runs.
    session.rollback()
    report = sweep_connection(
        stores,
        connection=connection,
        now=now,
        dry_run=dry_run,
        deadline=deadline,
        fingerprints=fingerprints_due(found, now),
        on_moved=lambda result: (
            publisher.rows(result.events),
            mail_queued(publisher, result),
            deliveries_queued(publisher, result),
        ),
    )
    if report.outcome is SweepOutcome.fenced:
        _count_fenced(publisher, report)
    moved = [app for app, seen in report.fingerprints.items() if found.compared_at.get(app) != seen]
    if moved:
        # Its tables changed (or its manifest was saved) since its comparison: compare again.
        compare_again(session, connection, moved, now=now)
    if report.reminders:
        wake_drain(publisher, connection)  # sent by this minute's drain, not the next tick's
    publisher.rows(set_aside_events(report, stores), {"set_aside": True}, "set-aside events")
    return report


FINGERPRINT_EVERY = 5
"""Every how many minutes a connection's sweep reads its apps' tables' catalogue
fingerprints (and compares again the apps whose fingerprint moved): a change of the tables
is found within this many minutes, at a fifth of the read's cost (bench/agreement.py: +0.5
to +1.2 ms on the opening statement, load 2.5 to 13). An
app never compared, or saved since it was, is read at its first sweep."""


def fingerprints_due(found: SweptApps, now: datetime) -> bool:
    """Whether this minute's sweep reads the fingerprints: every `FINGERPRINT_EVERY`
    minutes, and at once for an app whose kept comparison no longer holds."""
    stale = any(found.compared_at.get(s.app.name) is None for s in found.stores)
    return stale or now.minute % FINGERPRINT_EVERY == 0


def _count_fenced(publisher: Publisher, report: SweepReport) -> None:
    """Count a sweep the fence turned away, cluster-wide (best effort: its own record in the
    connection's database already says so)."""
    if publisher.client is None:
        return
    try:
        count_fenced(publisher.client, report.connection, report.at, report.error or "fence held")
    except RedisError as error:
        log.warning("fenced sweep of connection %s not counted: %s", report.connection, error)


def set_aside_events(report: SweepReport, stores: Sequence[Store] = ()) -> list[RowEvent]:
    """One row event per row the sweep set aside: the row stays in its rule's `from`; and
    one per give-back the ledger's cap refused, of the app among `stores` holding it (the
    row did not move: no state)."""
    clock = Actor.clock().name
    moves = [
        RowEvent(
            report.connection,
            refused.due.rule.app,
            refused.due.rule.table,
            refused.due.key,
            refused.due.rule.timed.from_,
            clock,
        )
        for refused in report.set_aside
    ]
    give_backs = [
        RowEvent(report.connection, app, record.table, record.key, None, clock)
        for record, _ in report.holds_refused
        for app in hold_apps(stores, record)
    ]
    return moves + give_backs


def retry_set_aside(
    store: Store, table: str, key: str, *, now: datetime, publisher: Publisher
) -> None:
    """Try a set-aside row's timed moves now, as the clock would: moved, it leaves the list;
    refused again, it is set aside for a new hour (and the refusal is raised)."""
    for aside in set_aside_rows([store], table=table, key=key):
        rule = aside.rule
        attempt = try_timed_move(
            rule,
            store.coerce_key(rule.table, aside.key),
            aside.moment,
            connection=store.connection,
            now=now,
            record=aside.record,
        )
        if attempt.result is not None:
            publisher.rows(attempt.result.events)
            log.info(
                "set-aside row %s.%s key=%s rule=%s moved on a retry",
                rule.app,
                rule.table,
                aside.key,
                rule.number,
            )
        elif attempt.refused is not None:
            raise attempt.refused
