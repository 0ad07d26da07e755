"""The weekly opening-hours table: the venue's opening or closing hour on a day."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from core.manifest.base import WEEKDAYS
from core.manifest.refs import HoursRef
from core.time.clock import parse_wall_time, wall_to_instant

EDGES = ("opens", "closes")


def hours_edge(
    rows: Sequence[Mapping[str, Any]], ref: HoursRef, day: date, edge: str, zone: ZoneInfo
) -> datetime | None:
    """The instant the venue opens or closes on `day`; None when the table says two things."""
    if edge not in EDGES:
        raise ValueError(f"an hours edge is opens or closes, not {edge!r}")
    weekday = WEEKDAYS[day.weekday()]
    found = [row for row in rows if row.get(ref.weekday) == weekday]
    if len(found) > 1:
        return None
    if not found or (ref.open is not None and found[0].get(ref.open) is False):
        # DESIGN decision 3: a closed day, or a weekday with no row, ends at midnight;
        # both edges read the midnight that ends the day.
        return wall_to_instant(day + timedelta(days=1), time(0), zone)
    row = found[0]
    opens = parse_wall_time(row.get(ref.opens))
    if opens is None:
        return None
    if edge == "opens":
        return wall_to_instant(day, opens, zone)
    closes = parse_wall_time(row.get(ref.closes))
    if closes is None:
        return None
    # A closing at or before the opening is past midnight, on the next day's clock.
    closing_day = day + timedelta(days=1) if closes <= opens else day
    return wall_to_instant(closing_day, closes, zone)
