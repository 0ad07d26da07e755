"""Console commands for the minute sweep: `sweep`, `due` and `indexes`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import click
import sqlalchemy as sa

from adminium.control_commands import INSTANT, control_plane, redis_publisher
from adminium.refusals import Refused
from core.ledgers.entries import PostingRecord
from core.store.install import timed_indexes
from core.store.store import Store
from core.sweep.due import Due
from core.sweep.due_holds import DueHold
from core.sweep.due_streams import Rule
from core.sweep.hold_reads import hold_apps, holds_due
from core.sweep.pending import Pending, pending_moves
from core.sweep.report import SweepReport
from core.sweep.sweep import LIMIT
from core.time.clock import venue_zone
from services.agreement import disagreeing
from services.apps import swept_stores
from services.connections import get_connection
from services.events import NO_PUBLISHER
from services.indexes import concurrently, index_name, make_indexes
from services.storage import connection_engine
from services.sweeps import sweep

DUE_LIMIT = 1000
"""How many rows `adminium due` lists at most."""
STILL_DUE_LIMIT = 10_000
"""How many rows still due `adminium sweep` counts at most after its sweep."""


def venue_time(instant: datetime, zone: ZoneInfo) -> str:
    """An instant as the console prints it: on the venue's clock, with its offset."""
    return instant.astimezone(zone).isoformat()


def _row(due: Due | Pending) -> str:
    """A due row as one line: app.table key, rule, moment on the venue's clock."""
    rule: Rule = due.rule
    moment = venue_time(due.moment, rule.store.zone)
    return f"{rule.app}.{rule.table} {due.key} rule {rule.number} at {moment}"


def _hold(
    record: PostingRecord,
    stores: Sequence[Store],
    zone: ZoneInfo,
    moment: datetime | None = None,
) -> str:
    """A hold as one line: app.table key, posting, amount and account, heldUntil on the
    venue's clock (`moment`, the row's own, when given; else the record's)."""
    where = ".".join([*hold_apps(stores, record)[:1], record.table])
    moment = moment or record.held_until
    until = venue_time(moment, zone) if moment else "no moment"
    return (
        f"{where} {record.key} posting {record.posting}: {record.amount} to {record.ledger}"
        f" account {record.account}, held until {until}"
    )


def _due_hold(hold: DueHold, stores: Sequence[Store], zone: ZoneInfo) -> str:
    """A due hold as one line, held until its row's own heldUntil."""
    return _hold(hold.record, stores, zone, hold.moment)


def still_due(stores: Sequence[Store], now: datetime) -> str:
    """How many timed moves and give-backs are due at `now` and not set aside: what the
    next minutes will do. `20` with no hold due; `530 (20 timed moves, 510 give-backs)`."""
    rows = pending_moves(stores, by=now, now=now, limit=STILL_DUE_LIMIT)
    moves = sum(not row.set_aside for row in rows)
    holds = holds_due(stores, by=now, now=now, limit=STILL_DUE_LIMIT)
    more = len(rows) >= STILL_DUE_LIMIT or len(holds.due) >= STILL_DUE_LIMIT
    total = f"{moves + len(holds.due)}" + (" or more" if more else "")
    if not holds.due:
        return total
    noun = "give-back" if len(holds.due) == 1 else "give-backs"
    return f"{total} ({moves} timed move{'' if moves == 1 else 's'}, {len(holds.due)} {noun})"


def _queued_for(report: SweepReport, now: datetime, clock: datetime) -> str | None:
    """What a sweep run at a `now` after the real `clock` queued for then: its emails and
    webhook deliveries go only when that time comes."""
    emails = report.reminders + report.fallout.emails
    deliveries = report.fallout.deliveries
    if now <= clock or not (emails or deliveries):
        return None
    nouns = ((emails, "email", "emails"), (deliveries, "webhook delivery", "webhook deliveries"))
    what = [f"{count} {one if count == 1 else many}" for count, one, many in nouns if count]
    when = now.astimezone(UTC).strftime("%Y-%m-%d %H:%M" + (":%S" if now.second else ""))
    return f"{' and '.join(what)} queued for {when} UTC, sent when that time comes"


@click.command("sweep")
@click.argument("connection")
@click.option(
    "--now",
    type=INSTANT,
    default=None,
    help="Judge the rows at this instant (ISO). A --now in the future commits the moves at"
    " that instant and queues their emails and webhook deliveries for it: they go only when"
    " that time really comes.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Move and give back nothing: show what would move and which holds would go back.",
)
def sweep_command(connection: str, now: datetime | None, dry_run: bool) -> None:
    """Run one sweep of CONNECTION now, inline; print what it moved and gave back, set
    aside, and how many timed moves and give-backs are still due (times on the venue's
    clock); with it, how many linked rows the
    moves' effects moved and how many reminders it queued."""
    now = now or datetime.now(UTC)
    with control_plane() as session, redis_publisher() as publisher:
        report = sweep(
            session,
            connection,
            now=now,
            dry_run=dry_run,
            publisher=NO_PUBLISHER if dry_run else publisher,
        )
        found = get_connection(session, connection)
        faulted = {fault.app for fault in report.faults}
        stores = [store for store in swept_stores(found) if store.app.name not in faulted]
        # Counted afresh: the report's own `left` holds only the rows this sweep found (at
        # most 500), not those the cap kept back (an app that faulted cannot be counted).
        left = still_due(stores, now)
        zone = venue_zone(found.zone)
    _echo_give_backs(report, stores, zone, now, dry_run)
    _echo_moves(report, dry_run)
    for fault in report.faults:
        click.echo(f"app {fault.app} stopped this minute while {fault.during}: {fault.error}")
    click.echo(_summary(connection, report, left, dry_run))
    later = None if dry_run else _queued_for(report, now, datetime.now(UTC))
    if later:
        click.echo(later)
    if report.outcome.value == "stopped":
        raise Refused(f"the sweep of {connection} stopped: {report.error}", "DATABASE_REFUSED")
    if report.outcome.value == "fence-lost":
        raise Refused(
            f"the sweep of {connection} lost its fence: another sweep moves the rest",
            "WRITE_CONFLICT",
        )
    if report.faults:
        apps = ", ".join(fault.app for fault in report.faults)
        noun = "app" if len(report.faults) == 1 else "apps"
        raise Refused(
            f"the sweep of {connection} stopped for {noun} {apps} this minute (the lines"
            " above say why); the other apps were swept",
            "DATABASE_REFUSED",
        )


def _echo_give_backs(
    report: SweepReport, stores: Sequence[Store], zone: ZoneInfo, now: datetime, dry_run: bool
) -> None:
    """The sweep's give-backs, one a line: given back, set aside, busy; on a dry run, the
    holds it would give back."""
    for given in report.given_back:
        click.echo(f"gave back {_hold(given.record, stores, zone)}")
    for record, code in report.holds_refused:
        click.echo(f"give-back set aside for an hour {_hold(record, stores, zone)}: {code}")
    for record in report.holds_busy:
        click.echo(f"give-back next minute (held elsewhere) {_hold(record, stores, zone)}")
    if dry_run:
        for hold in holds_due(stores, by=now, now=now, limit=LIMIT).due:
            click.echo(f"would give back {_due_hold(hold, stores, zone)}")


def _echo_moves(report: SweepReport, dry_run: bool) -> None:
    """The sweep's rows, one a line: (would) move, moved, set aside, held elsewhere, left
    for the next minute, passed by."""
    if dry_run:
        for due in report.left:
            click.echo(f"would move {_row(due)}")
    for due in report.moved:
        click.echo(f"moved {_row(due)}")
    for refused in report.set_aside:
        click.echo(f"set aside {_row(refused.due)}: {refused.code}: {refused.words}")
    for due in report.conflicts:
        linked = report.fallout.held.get((due.rule.app, due.rule.table, str(due.key)))
        held = f": {linked} held by another writer" if linked else ""
        click.echo(f"next minute (held elsewhere) {_row(due)}{held}")
    if not dry_run:
        for due in report.left:
            click.echo(f"next minute {_row(due)}")
    for due in report.passed_by:
        until = venue_time(due.record.until, due.rule.store.zone) if due.record else ""
        click.echo(f"passed by (set aside until {until}) {_row(due)}")


def _summary(connection: str, report: SweepReport, left: str, dry_run: bool) -> str:
    """The sweep's last line: its outcome and counts, how long it took."""
    record = report.record()
    return (
        f"sweep of {connection}: {record['outcome']}, moved {record['moved']}, "
        f"set aside {record['set_aside']}, conflicts {record['conflicts']}, "
        f"gave back {record['given_back']}, give-backs set aside {record['holds_set_aside']}, "
        f"give-backs busy {record['holds_busy']}, still due {left}, "
        f"linked rows moved {report.fallout.linked}, reminders queued {report.reminders}, "
        f"{record['took_ms']:.1f} ms"
        + (" (dry run)" if dry_run else "")
        + (f": {report.error}" if report.error else "")
    )


@click.command("due")
@click.argument("connection")
@click.option("--at", type=INSTANT, default=None, help="What would be due by this instant (ISO).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def due_command(connection: str, at: datetime | None, as_json: bool) -> None:
    """The pending timed moves of CONNECTION (row, rule, moment, set aside or not), then
    the holds due to be given back (row, posting, amount to its account, heldUntil, their
    give-back set aside or not)."""
    at = at or datetime.now(UTC)
    with control_plane() as session:
        found = get_connection(session, connection)
        zone = venue_zone(found.zone)
        stores = swept_stores(found)
        rows = pending_moves(stores, by=at, now=at, limit=DUE_LIMIT)
        due_holds = holds_due(stores, by=at, now=at, limit=DUE_LIMIT)
    holds = sorted([*due_holds.due, *due_holds.passed_by], key=lambda hold: hold.moment)
    if as_json:
        every = [_due_json(d) for d in rows] + [_hold_json(h, stores, at) for h in holds]
        click.echo(json.dumps(every, indent=2))
        return
    if not rows and not holds:
        click.echo(f"nothing due on {connection} by {venue_time(at, zone)}")
    for due_row in rows:
        aside = _aside(due_row)
        click.echo(_row(due_row) + (f" set aside until {aside}" if aside else ""))
    for hold in holds:
        aside = _hold_aside(hold, at)
        click.echo(
            f"give-back of {_due_hold(hold, stores, zone)}"
            + (f" set aside until {aside}" if aside else "")
        )


def _hold_aside(hold: DueHold, now: datetime) -> str | None:
    """Until when a hold's give-back is set aside, if it is (and not re-dated since)."""
    if hold.aside is None or not hold.aside.holds(hold.moment, now):
        return None
    return venue_time(hold.aside.until, hold.store.zone)


def _hold_json(hold: DueHold, stores: Sequence[Store], now: datetime) -> dict[str, Any]:
    record = hold.record
    return {
        "kind": "give-back",
        "app": hold.store.app.name,
        "table": record.table,
        "key": record.key,
        "posting": record.posting,
        "ledger": record.ledger,
        "account": record.account,
        "amount": str(record.amount),
        "held_until": venue_time(hold.moment, hold.store.zone),
        "set_aside_until": _hold_aside(hold, now),
        "code": hold.aside.code if hold.aside else None,
    }


def _aside(due: Pending) -> str | None:
    """Until when a row is set aside, if it is (and not re-dated since)."""
    if not due.set_aside or due.record is None:
        return None
    return venue_time(due.record.until, due.rule.store.zone)


def _due_json(due: Pending) -> dict[str, Any]:
    rule = due.rule
    return {
        "kind": "timed move",
        "app": rule.app,
        "table": rule.table,
        "key": due.key,
        "rule": rule.number,
        "from": rule.timed.from_,
        "to": rule.timed.to,
        "moment": venue_time(due.moment, rule.store.zone),
        "set_aside_until": _aside(due),
        "code": due.record.code if due.record else None,
    }


@click.command("indexes")
@click.argument("connection")
@click.option(
    "--build",
    is_flag=True,
    help="Build the missing ones now, concurrently, on the venue's own tables too.",
)
def indexes_command(connection: str, build: bool) -> None:
    """The index each timed rule wants, as SQL a DBA can run on an existing database;
    with --build, built (`adminium run` builds them on the tables Adminium made only)."""
    if build:
        with control_plane() as session:
            found = get_connection(session, connection)
            engine = connection_engine(found)
            for app in found.apps:
                for name in make_indexes(
                    engine, app.model, connection=connection, venue_tables=True
                ):
                    click.echo(f"built {name} (app {app.name})")
        return
    with control_plane() as session:
        found = get_connection(session, connection)
        apps = [a for a in found.apps if a.has_minute_work]
        engine = connection_engine(found) if apps else None
        existing: set[tuple[str, str]] = set()
        if engine is not None:
            with engine.connect() as conn:
                existing = {
                    (r[0], r[1])
                    for r in conn.execute(sa.text("SELECT schemaname, indexname FROM pg_indexes"))
                }
        if not apps:
            click.echo(f"-- connection {connection} has no timed moves")
        for app in apps:
            model = app.model
            click.echo(f"-- app {app.name}")
            disagree = disagreeing([app])
            if disagree is not None:
                click.echo(
                    f"-- {disagree.words()}; adminium app diff {connection} {app.name} prints"
                    " the plan"
                )
            for statement in timed_indexes(model):
                name = index_name(statement)
                sql = concurrently(statement)
                there = (model.schema_name, name) in existing
                click.echo(("-- already there: " if there else "") + sql + ";")
