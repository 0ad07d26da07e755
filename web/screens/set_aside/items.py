"""The set-aside screen's blueprint, and what one set-aside item shows: its fields to fix
(the refused one first), the column that gives a new moment, why a move by hand would be
refused again, and the inputs its fields take (template globals and filters: the list, a
fix's answer and a push all render `_aside.html`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

from flask_babel import gettext as _

from core.basics.errors import AdminiumError
from core.manifest.model import Column, Table
from core.sweep.fixes import NewMoment, fix_fields, new_moment
from core.sweep.pending import Aside, rules_of, waiting_on
from web.context import clock
from web.language import speech
from web.screens.access import (
    screen_blueprint,
)
from web.screens.labels import state_label
from web.screens.reading import editable_columns, open_moves
from web.screens.times import full

bp = screen_blueprint("set_aside", __name__)


@dataclass(frozen=True)
class AsideFix:
    """What an item's fixes show: the table, the fields (the refused one first) with their
    values now, the column that gives a new moment (or why there is none), and, by state a
    move by hand leads to, why the clock would refuse the row again there."""

    spec: Table
    state: str
    fields: list[Column]
    refused_field: str | None
    moment: NewMoment
    again: dict[str, str]


@bp.app_template_global()
def aside_fix(aside: Aside, error: AdminiumError | None = None) -> AsideFix:
    """The fixes of one set-aside item (a template global: the list, a fix's answer and a
    push all render `_aside.html`)."""
    rule = aside.rule
    spec = rule.store.spec(rule.table)
    moment = new_moment(rule.timed.at, spec, aside.row, aside.fallback, rule.timed, speech())
    named = error.details.get("column") if error is not None else None
    shown = editable_columns(spec)
    fields, first = fix_fields(rule.table, spec, shown, aside.message, named, rule.timed)
    state = str(aside.row[rule.state_column])
    again = {m.to: refused_again(aside, m.to) for m in open_moves(spec, state, None)}
    return AsideFix(spec, state, fields, first, moment, {k: v for k, v in again.items() if v})


def refused_again(aside: Aside, to: str) -> str:
    """Why a move by hand to `to` would not last, when it would not: in `to`, another timed
    rule is already due and moves the row to the state the database refused for it, so the
    next minute's sweep sets it aside again. Empty when nothing says so."""
    rule = aside.rule
    store = rule.store
    moved = {**aside.row, rule.state_column: to}
    with store.engine.connect() as conn:
        tables = store.read_clock_tables(conn)
    waiting = waiting_on(rules_of(store, rule.table), moved, tables)
    if waiting is None or waiting.reading.at > clock() or waiting.rule.timed.to != rule.timed.to:
        return ""
    spec = store.spec(rule.table)
    other = waiting.rule
    return _(
        "Moved to %(state)s, it is due at once under rule %(number)s (%(from)s → %(to)s at"
        " %(time)s): the next minute's sweep moves it to %(to)s, which was refused for this"
        " row, and sets it aside again. Fix what refused it first.",
        state=state_label(to, spec),
        number=other.number,
        time=full(waiting.reading.at, store.zone),
        to=state_label(other.timed.to, spec),
        **{"from": state_label(other.timed.from_, spec)},
    )


INPUTS = {
    "timestamptz": ("datetime-local", ""),
    "timestamp": ("datetime-local", ""),
    "date": ("date", ""),
    "integer": ("number", "1"),
    "serial": ("number", "1"),
    "numeric": ("number", "any"),
}
"""The input a field's type takes (its type, and step for a number); text otherwise."""


@bp.app_template_filter("input_kind")
def input_kind(column: Column) -> tuple[str, str]:
    """The input a field takes: (`type`, `step`); a numeric of a scale steps by its last
    decimal (0.01 for two), so the browser says at once what the column keeps."""
    if column.type == "numeric" and column.scale is not None:
        return ("number", f"{Decimal(1).scaleb(-column.scale):f}")
    return INPUTS.get(column.type, ("text", ""))


@bp.app_template_filter("input_value")
def input_value(raw: object, zone: ZoneInfo, kind: str = "text") -> str:
    """A value as a form's input holds it: a date `2026-07-10`, a time on the venue's clock
    `2026-07-10T21:00` (what `datetime-local` reads), else its text; empty for none."""
    if raw is None:
        return ""
    if isinstance(raw, datetime):
        local = raw.astimezone(zone) if raw.utcoffset() is not None else raw
        return local.date().isoformat() if kind == "date" else local.strftime("%Y-%m-%dT%H:%M")
    if hasattr(raw, "isoformat"):
        return str(raw.isoformat())
    return str(raw)
