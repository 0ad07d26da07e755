"""Reminders: the minute job queues each reminder whose send time has come while its moment
is still ahead, once per row, producer and moment.

The send time is the moment less the lead's hours (elapsed time); with `lead.at`, that
wall time on the venue's day the lead reaches, read with the clock's gap and fold policy.
The lead is read from the linked row (`via`), else the fallback setting, never more than
`max`; no lead, no reminder. The rows are found in SQL bounded by `now` and the largest
lead (served by the index `reminder_indexes` names), then judged exactly here.

Only a live row is reminded: one in a state the producer names (`states`), else in any
state with a move out of it (listed or timed); a row in a final state gets none. A
reminder queued for a row that has left those states by the time the drain takes it is
dropped unsent, with the reason (`why_dropped`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import Connection

from core.manifest.lookup import state_names
from core.manifest.model import Table
from core.manifest.outbox_model import Lead, LeadFallback, Reminder
from core.manifest.refs import SettingRef
from core.outbox.mail import render_words
from core.outbox.messages import mail_context, mail_row, producers, reminder_address
from core.store.schema import MailStatus, outbox, sample_marks
from core.store.store import Store
from core.time.clock import parse_wall_time, venue_day, wall_to_instant
from core.time.moments import read_setting

log = logging.getLogger(__name__)

AT_SLACK = timedelta(hours=25)
"""How much earlier than moment less lead a wall time `at` may send: a day, and a clock change."""
BATCH = 1000
"""At most this many rows are judged per reminder producer per minute."""
LEAD_LABEL = "__lead"


def send_time(moment: datetime, lead_hours: int, at: time | None, zone: ZoneInfo) -> datetime:
    """When a reminder goes: `moment` less `lead_hours`; with `at`, that wall time on the
    venue's day the lead reaches."""
    reached = moment - timedelta(hours=lead_hours)
    if at is None:
        return reached
    day: date = venue_day(reached, zone)
    return wall_to_instant(day, at, zone)


def lead_hours(lead: Lead, linked: Any, fallback: Any) -> int | None:
    """The lead in hours: the linked row's (or setting's) value, else the fallback, capped
    at `max`; None when neither gives a whole number."""
    for value in (linked, fallback):
        if isinstance(value, int) and not isinstance(value, bool):
            return min(value, lead.max) if lead.max is not None else value
    return None


def reminded_states(table: Table, reminder: Reminder) -> list[str] | None:
    """The states in which a row of the reminder's table is reminded: its `states`, else
    every state with a move out of it (listed or timed); None for a table without states."""
    states = table.states
    if states is None:
        return None
    if reminder.states is not None:
        return list(reminder.states)
    timed = {rule.from_ for rule in states.timed or ()}
    return [s for s in state_names(table) if states.moves.get(s) or s in timed]


def why_dropped(conn: Connection, store: Store, producer: int, key: str) -> str | None:
    """Why a queued reminder is no longer sent, read on its row now: the row is gone, or in
    a state it is not reminded in; None when it still goes."""
    reminder = dict(producers(store.app)).get(producer)
    if not isinstance(reminder, Reminder):
        return None
    table = reminder.before.table
    spec = store.spec(table)
    live = reminded_states(spec, reminder)
    if live is None:
        return None
    row = store.read_row(conn, table, store.coerce_key(table, key))
    if row is None:
        return f"{table} {key} is gone"
    state = row.get(spec.states.column) if spec.states is not None else None
    if state in live:
        return None
    if reminder.states is not None:
        return f"{table} {key} is {state}: this reminder goes only in {', '.join(live)}"
    return f"{table} {key} is {state}, a final state (no move out of it)"


def queue_reminders(conn: Connection, stores: Sequence[Store], now: datetime) -> int:
    """Queue every reminder due at `now` for the stores' apps, and commit; how many."""
    count = 0
    for store in stores:
        for number, producer in producers(store.app):
            if isinstance(producer, Reminder):
                count += _queue(conn, store, number, producer, now)
    conn.commit()
    if count:
        log.info("reminders queued: %s", count)
    return count


def _queue(conn: Connection, store: Store, number: int, reminder: Reminder, now: datetime) -> int:
    """One reminder producer's due reminders, queued once each."""
    lead = reminder.before.lead
    settings = _setting_values(conn, store, lead)
    largest = largest_lead(conn, store, lead, settings)
    if largest is None:
        return 0
    address_column = reminder_address(store.app, reminder)
    at = parse_wall_time(lead.at) if lead.at else None
    rows = []
    for row in conn.execute(candidates_query(store, number, reminder, now, largest, at)).mappings():
        found = dict(row)
        linked = found.pop(LEAD_LABEL, None) if lead.via is not None else settings.get("own")
        hours = lead_hours(lead, linked, settings.get("fallback"))
        moment = found[reminder.before.at]
        if hours is None or not send_time(moment, hours, at, store.zone) <= now < moment:
            continue
        address = found.get(address_column) if address_column else None
        if not isinstance(address, str) or not address.strip():
            continue
        table = reminder.before.table
        key = found[store.spec(table).key]
        extra = {"moment": moment.astimezone(store.zone).isoformat()}
        if reminder.link:
            extra[reminder.link] = key
        words = render_words(reminder, mail_context(store, table, found, **extra))
        rows.append(
            mail_row(
                store.app.name,
                table,
                str(key),
                number,
                "reminder",
                address.strip(),
                words,
                now,
                moment,
            )
        )
    if not rows:
        return 0
    queued = conn.execute(
        insert(outbox).values(rows).on_conflict_do_nothing().returning(outbox.c.status)
    )
    return sum(1 for (status,) in queued if status == MailStatus.queued.value)


def _setting_values(conn: Connection, store: Store, lead: Lead) -> dict[str, Any]:
    """The settings a lead reads: its own value (without `via`) and its fallback."""
    wanted: dict[str, Lead | LeadFallback] = {"fallback": lead.fallback} if lead.fallback else {}
    if lead.via is None:
        wanted["own"] = lead
    tables = store.read_clock_tables(conn, {ref.table for ref in wanted.values()})
    return {
        name: read_setting(SettingRef(table=ref.table, column=ref.column), tables)
        for name, ref in wanted.items()
    }


def largest_lead(
    conn: Connection, store: Store, lead: Lead, settings: Mapping[str, Any]
) -> int | None:
    """The most hours any row's lead can be: `max`, else the largest value it reads."""
    if lead.max is not None:
        return lead.max
    found = [settings.get("fallback"), settings.get("own")]
    if lead.via is not None:
        column = store.table(lead.table).c[lead.column]
        found.append(conn.execute(sa.select(sa.func.max(column))).scalar())
    numbers = [v for v in found if isinstance(v, int) and not isinstance(v, bool)]
    return max(numbers) if numbers else None


def candidates_query(
    store: Store, number: int, reminder: Reminder, now: datetime, largest: int, at: time | None
) -> sa.Select[Any]:
    """The rows whose moment is ahead and within the largest lead (and a day for `at`), no
    sample row, none already reminded of this moment; their lead alongside."""
    before = reminder.before
    table = store.table(before.table)
    key = table.c[store.spec(before.table).key]
    moment = table.c[before.at]
    reach = timedelta(hours=max(largest, 0)) + (AT_SLACK if at is not None else timedelta())
    app = store.app.name
    reminded = sa.exists().where(
        outbox.c.kind == "reminder",
        outbox.c.app == app,
        outbox.c.table_name == before.table,
        outbox.c.row_key == sa.cast(key, sa.Text),
        outbox.c.producer == number,
        outbox.c.moment == moment,
    )
    sample = sa.exists().where(
        sample_marks.c.app == app,
        sample_marks.c.table_name == before.table,
        sample_marks.c.row_key == sa.cast(key, sa.Text),
    )
    lead = before.lead
    if lead.via is not None:
        linked = store.table(lead.table)
        linked_key = linked.c[store.spec(lead.table).key]
        query = sa.select(table, linked.c[lead.column].label(LEAD_LABEL)).select_from(
            table.outerjoin(linked, linked_key == table.c[lead.via])
        )
    else:
        query = sa.select(table, sa.literal(None).label(LEAD_LABEL))
    spec = store.spec(before.table)
    live = reminded_states(spec, reminder)
    if live is not None and spec.states is not None:
        query = query.where(table.c[spec.states.column].in_(live))
    return (
        query.where(moment > now, moment <= now + reach, ~reminded, ~sample)
        .order_by(moment)
        .limit(BATCH)
    )


@dataclass(frozen=True)
class Waiting:
    """A reminder a row waits for: its producer's number, the moment, and when it goes."""

    producer: int
    moment: datetime
    send_at: datetime


def waiting_reminders(
    conn: Connection, store: Store, table: str, row: Mapping[str, Any], now: datetime
) -> list[Waiting]:
    """The reminders a row of `table` waits for at `now`: moment ahead, a lead read, a send
    time before the moment, and none queued yet for that moment."""
    found = []
    key = str(row.get(store.spec(table).key))
    for number, reminder in producers(store.app):
        if not isinstance(reminder, Reminder) or reminder.before.table != table:
            continue
        spec = store.spec(table)
        live = reminded_states(spec, reminder)
        if live is not None and spec.states is not None and row.get(spec.states.column) not in live:
            continue
        moment = row.get(reminder.before.at)
        if not isinstance(moment, datetime) or moment <= now:
            continue
        lead = reminder.before.lead
        settings = _setting_values(conn, store, lead)
        own = settings.get("own")
        if lead.via is not None:
            linked = store.linked_rows(conn, table, row, [lead.via]).get(lead.via)
            own = linked.get(lead.column) if linked is not None else None
        hours = lead_hours(lead, own, settings.get("fallback"))
        if hours is None:
            continue
        at = parse_wall_time(lead.at) if lead.at else None
        send_at = send_time(moment, hours, at, store.zone)
        if send_at < moment and not _queued(conn, store.app.name, table, key, number, moment):
            found.append(Waiting(number, moment, send_at))
    return found


def _queued(
    conn: Connection, app: str, table: str, key: str, number: int, moment: datetime
) -> bool:
    query = sa.select(sa.literal(1)).where(
        outbox.c.kind == "reminder",
        outbox.c.app == app,
        outbox.c.table_name == table,
        outbox.c.row_key == key,
        outbox.c.producer == number,
        outbox.c.moment == moment,
    )
    return conn.execute(query).first() is not None
