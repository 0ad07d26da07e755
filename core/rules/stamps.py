"""Columns a rule writes on a row: stamps (when a watched value was taken) and codes."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from core.manifest.model import Table
from core.manifest.refs import ValueWatch
from core.time.moments import Tables, apply_shift

Row = Mapping[str, Any]


def takes_value(watch: ValueWatch, before: Row | None, after: Row) -> bool:
    """A column taking one of the watched values in this write (a new row takes its values)."""
    if after.get(watch.column) not in watch.values:
        return False
    return before is None or before.get(watch.column) != after.get(watch.column)


def firing_stamps(spec: Table, before: Row | None, after: Row) -> list[str]:
    """The stamp columns this write stamps."""
    return [
        c.ref
        for c in spec.columns
        if c.rules is not None
        and c.rules.stamp is not None
        and takes_value(c.rules.stamp.on, before, after)
    ]


def stamp_values(
    spec: Table,
    names: list[str],
    now: datetime,
    tables: Tables,
    zone: ZoneInfo,
) -> dict[str, Any]:
    """Each firing stamp's value: `now`, or `now` shifted by its addMinutes (None if unreadable)."""
    stamps: dict[str, Any] = {}
    for column in spec.columns:
        if column.ref not in names or column.rules is None or column.rules.stamp is None:
            continue
        shift = column.rules.stamp.set
        stamps[column.ref] = (
            now if shift is None else apply_shift(now, shift.add_minutes, 1, tables, zone)
        )
    return stamps


def make_code(length: int) -> str:
    """A random URL-safe code of exactly `length` characters."""
    return secrets.token_urlsafe(length)[:length]


def code_values(spec: Table, before: Row | None, after: Row) -> dict[str, str]:
    """Codes made at creation (unless brought by an import) and renewed on their watched change."""
    codes: dict[str, str] = {}
    for column in spec.columns:
        rule = column.rules.code if column.rules is not None else None
        if rule is None:
            continue
        if before is None:
            if after.get(column.ref) is None:
                codes[column.ref] = make_code(rule.length)
        elif rule.renew is not None:
            watched = rule.renew.on.column
            if before.get(watched) != after.get(watched):
                codes[column.ref] = make_code(rule.length)
    return codes
