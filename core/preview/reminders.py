"""A preview's reminders (`core.preview.preview`): per reminder, the rows its candidates query
(`core.outbox.reminders`) finds still to be reminded, their send time read on both sides; a
reminder the change leaves as it was (same manifest part, same leads' settings) is not
read at all.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.engine import Connection

from core.manifest.outbox_model import Lead, Reminder
from core.manifest.refs import SettingRef
from core.outbox.messages import producers, reminder_address
from core.outbox.reminders import LEAD_LABEL, candidates_query, largest_lead, lead_hours, send_time
from core.preview.changes import Changed, Side, near, unchanged
from core.store.store import Row, Store
from core.time.clock import parse_wall_time
from core.time.moments import Tables, read_setting

_Sends = dict[str, tuple[datetime | None, datetime, Row]]
"""Per row (key as text): its send time on a side (None: not sent), its moment, the row."""


def _lead_settings(lead: Lead, tables: Tables) -> dict[str, Any]:
    """The settings a lead reads, from the side's tables (as `core.outbox.reminders` reads them)."""
    found: dict[str, Any] = {}
    if lead.fallback is not None:
        found["fallback"] = read_setting(
            SettingRef(table=lead.fallback.table, column=lead.fallback.column), tables
        )
    if lead.via is None:
        found["own"] = read_setting(SettingRef(table=lead.table, column=lead.column), tables)
    return found


def lead_tables(store: Store) -> set[str]:
    """The settings tables the app's reminders' leads read."""
    names: set[str] = set()
    for _, producer in producers(store.app):
        if isinstance(producer, Reminder):
            lead = producer.before.lead
            if lead.via is None:
                names.add(lead.table)
            if lead.fallback is not None:
                names.add(lead.fallback.table)
    return names & set(store.app.tables)


def reminder_changes(
    conn: Connection, app: str, old: Side, new: Side, now: datetime, horizon: timedelta
) -> list[Changed]:
    """The rows whose reminder's send time the change moves, within `now + horizon`."""
    olds = (
        {n: p for n, p in producers(old.store.app) if isinstance(p, Reminder)} if old.store else {}
    )
    news = (
        {n: p for n, p in producers(new.store.app) if isinstance(p, Reminder)} if new.store else {}
    )
    changed: list[Changed] = []
    for number in sorted(set(olds) | set(news)):
        a, b = olds.get(number), news.get(number)
        leads = _lead_reads(((old, a), (new, b)))
        if a is not None and b is not None and unchanged(a, b, old, new, leads):
            continue
        judged = _both_sends(conn, old, new, number, a, b, now, horizon)
        changed += _send_changes(app, number, a, b, judged, now + horizon)
    return changed


def _lead_reads(sides: tuple[tuple[Side, Reminder | None], ...]) -> set[str]:
    """The settings tables a reminder's leads read, on either side."""
    leads = set()
    for side, part in sides:
        if part is not None and side.store is not None:
            leads |= {
                t
                for t in (
                    part.before.lead.table,
                    getattr(part.before.lead.fallback, "table", None),
                )
                if t
            }
    return leads


def _both_sends(
    conn: Connection,
    old: Side,
    new: Side,
    number: int,
    a: Reminder | None,
    b: Reminder | None,
    now: datetime,
    horizon: timedelta,
) -> list[_Sends]:
    """A reminder's sends before and after, each side read as far as the largest lead of
    either side and the horizon reach."""
    reach_hours = int(horizon.total_seconds() // 3600)
    judged: list[_Sends] = []
    largest = 0
    for side, part in ((old, a), (new, b)):
        if part is not None and side.store is not None:
            settings = _lead_settings(part.before.lead, side.tables)
            largest = max(largest, largest_lead(conn, side.store, part.before.lead, settings) or 0)
    for side, part in ((old, a), (new, b)):
        judged.append(_sends(conn, side, number, part, now, largest + reach_hours) if part else {})
    return judged


def _send_changes(
    app: str,
    number: int,
    a: Reminder | None,
    b: Reminder | None,
    judged: list[_Sends],
    reach: datetime,
) -> list[Changed]:
    """The rows whose send time differs between the sides, one falling by `reach`."""
    changed: list[Changed] = []
    for key in sorted(set(judged[0]) | set(judged[1])):
        was = judged[0].get(key)
        will = judged[1].get(key)
        old_at = was[0] if was else None
        new_at = will[0] if will else None
        if old_at == new_at or not near(old_at, new_at, reach):
            continue
        moment = (will or was)[1]  # type: ignore[index]
        table = (b or a).before.table  # type: ignore[union-attr]
        changed.append(
            Changed(
                "reminder",
                app,
                table,
                key,
                f"reminder {number}",
                old_at,
                new_at,
                _send_words(was),
                _send_words(will),
                moment,
            )
        )
    return changed


def _send_words(judged: tuple[datetime | None, datetime, Row] | None) -> str:
    if judged is None:
        return "not reminded"
    at, moment, _ = judged
    return "no lead: not sent" if at is None else f"moment {moment.isoformat()} less its lead"


def _sends(
    conn: Connection, side: Side, number: int, reminder: Reminder, now: datetime, hours: int
) -> _Sends:
    """Per row (key as text) still to be reminded within `hours`: its send time on that side
    (None: no lead, or none before its moment), its moment, the row."""
    store = side.store
    assert store is not None
    lead = reminder.before.lead
    settings = _lead_settings(lead, side.tables)
    at = parse_wall_time(lead.at) if lead.at else None
    query = candidates_query(store, number, reminder, now, hours, at).limit(None)
    key_column = store.spec(reminder.before.table).key
    address = reminder_address(store.app, reminder)
    found: _Sends = {}
    for row in conn.execute(query).mappings():
        values = dict(row)
        to = values.get(address) if address else None
        if not isinstance(to, str) or not to.strip():
            continue  # no address: never queued (core.outbox.reminders)
        linked = values.pop(LEAD_LABEL, None) if lead.via is not None else settings.get("own")
        lead_h = lead_hours(lead, linked, settings.get("fallback"))
        moment = values[reminder.before.at]
        send = send_time(moment, lead_h, at, store.zone) if lead_h is not None else None
        if send is not None and send >= moment:
            send = None
        found[str(values[key_column])] = (send, moment, values)
    return found
