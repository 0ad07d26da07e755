"""A table's hold: the states its rows are held in, and the moment a hold ends (heldUntil).

One reading of heldUntil for every part that asks: the limit that stops counting a held
row at its moment, the posting kept as a hold until then, the sweep that gives it back.
It is read with the moment engine on the row alone (the check refuses a `via`), on the
venue's clock; a moment with no value never ends the hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from core.manifest.model import App, Hold, Moment, RowTime, Table
from core.time.moments import MomentContext, Tables, read_moment


def hold_columns(moment: Moment) -> list[str]:
    """The row's columns a hold's moment reads: its column, a time kept on the row, its `or`s."""
    found = [moment.column]
    if isinstance(moment.time, RowTime):
        found.append(moment.time.column)
    for fallback in moment.or_ or ():
        found.extend(hold_columns(fallback))
    return list(dict.fromkeys(found))


def is_held(spec: Table, row: Mapping[str, Any] | None) -> bool:
    """Whether the row is in one of its table's held states."""
    hold, states = spec.hold, spec.states
    if hold is None or states is None or row is None:
        return False
    return row.get(states.column) in hold.states


def held_until(
    hold: Hold, row: Mapping[str, Any], zone: ZoneInfo, tables: Tables
) -> datetime | None:
    """The row's heldUntil (UTC), or None when its moment has no value."""
    return read_moment(hold.until, MomentContext(row=row, zone=zone, tables=tables))


def hold_ended(
    hold: Hold, row: Mapping[str, Any], zone: ZoneInfo, tables: Tables, now: datetime
) -> bool:
    """Whether a held row's hold has ended at `now`: its moment has passed, by the clock."""
    until = held_until(hold, row, zone, tables)
    return until is not None and until <= now


def holding_tables(app: App) -> list[str]:
    """The app's tables whose postings may be holds the clock gives back."""
    return [name for name, table in app.tables.items() if table.hold and table.postings]
