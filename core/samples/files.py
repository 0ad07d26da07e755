"""Sample data files: rows for each table, with times relative to the moment they are added.

A sample file (`<app>.sample.json` beside the manifest, see docs/sample-data.md) holds
`{"app": name, "rows": {table: [row, ...]}}`. A row's value may be a form resolved
against `now` and the venue's clock when the sample is added:

- `{"@in": "PT20M"}`: an ISO 8601 duration from now (days on the wall clock, hours
  and minutes in UTC; a leading `-` goes back). On a date column, the venue's day.
- `{"@in": "PT20M", "@slot": "orders"}`: the start of the next open pickup slot at
  least that far ahead, from the opening hours the named table's timed moves read.
- `{"@byStay": {...}}` on the state column: the state matching the clock for a stay.
- `{"@row": "label"}`: the key of an earlier sample row written with `"@as": "label"`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field

from core.basics.errors import AdminiumError
from core.manifest.model import App
from core.manifest.refs import HoursRef, SettingRef
from core.time.clock import parse_wall_time, shift_instant, venue_day, wall_to_instant
from core.time.hours import hours_edge
from core.time.moments import read_setting

Row = dict[str, Any]
Tables = Mapping[str, Sequence[Mapping[str, Any]]]

SLOT_MINUTES = 15
"""A pickup slot's length when the settings table names none (`slot_minutes`)."""
SLOT_SEARCH_DAYS = 14
"""How many venue days `@slot` looks ahead for an open slot."""
STAY_DEFAULTS: dict[str, Any] = {
    "arrive": "arrive",
    "nights": "nights",
    "from": None,
    "until": "11:00",
    "states": ["booked", "checked_in", "checked_out"],
}
"""`@byStay` options left out: the hotel app's columns, arrival from settings (else 15:00)."""
STAY_ARRIVE_FROM = "15:00"

_DURATION = re.compile(
    r"(?P<sign>-)?P(?:(?P<weeks>\d+)W)?(?:(?P<days>\d+)D)?"
    r"(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?(?:(?P<seconds>\d+)S)?)?"
)


class SampleRefused(AdminiumError):
    """A sample file that cannot be read or resolved."""

    code = "SAMPLE_REFUSED"
    status = 422


class SampleFile(BaseModel):
    """A sample set: the app it belongs to and its rows, table by table in writing order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    app: str
    rows: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)


@dataclass(frozen=True)
class Duration:
    """An ISO 8601 duration split as the clock reads it: calendar days, then elapsed time."""

    days: int
    elapsed: timedelta
    sign: int = 1

    def after(self, now: datetime, zone: ZoneInfo) -> datetime:
        """`now` moved by the duration: days on the venue's wall clock, the rest in UTC."""
        # With no whole days the wall clock is not read at all: `PT20M` from the second
        # 01:30 of an autumn night stays on the second pass.
        days = self.sign * self.days if self.days else None
        return shift_instant(now, zone, days=days, elapsed=self.sign * self.elapsed)


@dataclass(frozen=True)
class Context:
    """What a sample row is resolved against: the app, now, the venue zone, tables, labels."""

    app: App
    now: datetime
    zone: ZoneInfo
    tables: Tables = field(default_factory=dict)
    labels: Mapping[str, Any] = field(default_factory=dict)


def load_sample(path: Path) -> SampleFile:
    """A sample file read and checked against its shape."""
    try:
        return read_sample(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as error:
        raise SampleRefused(
            f"cannot read sample file {path}: {error}", {"file": str(path)}
        ) from None
    except RecursionError:
        raise SampleRefused(
            f"cannot read sample file {path}: its JSON nests too deep", {"file": str(path)}
        ) from None


def read_sample(data: Any) -> SampleFile:
    """A sample set from parsed JSON."""
    try:
        return SampleFile.model_validate(data)
    except ValueError as error:
        raise SampleRefused(f"not a sample file: {error}", {}) from None


def parse_duration(text: str) -> Duration:
    """An ISO 8601 duration of weeks, days, hours, minutes, seconds; `-` in front goes back."""
    match = _DURATION.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None or text.strip().rstrip("T").endswith(("P", "-P")):
        raise SampleRefused(f"{text!r} is no ISO 8601 duration such as PT20M", {"value": text})
    parts = {k: int(v) if v and k != "sign" else 0 for k, v in match.groupdict().items()}
    elapsed = timedelta(hours=parts["hours"], minutes=parts["minutes"], seconds=parts["seconds"])
    return Duration(
        days=7 * parts["weeks"] + parts["days"],
        elapsed=elapsed,
        sign=-1 if match.group("sign") else 1,
    )


def resolve_row(table: str, row: Mapping[str, Any], ctx: Context) -> tuple[str | None, Row]:
    """A sample row's label and its values with every form resolved (`@byStay` last)."""
    spec = ctx.app.tables.get(table)
    if spec is None:
        raise SampleRefused(f"app {ctx.app.name!r} has no table {table!r}", {"table": table})
    types = {c.ref: c.type for c in spec.columns}
    label = row.get("@as")
    values: Row = {}
    for name, value in row.items():
        if name == "@as" or _form(value) == "@byStay":
            continue
        resolved = resolve_value(value, ctx, where=f"{table}.{name}")
        if types.get(name) == "date" and isinstance(resolved, datetime):
            resolved = venue_day(resolved, ctx.zone)
        values[name] = resolved
    for name, value in row.items():
        if _form(value) == "@byStay":
            values[name] = stay_state(values, value["@byStay"], ctx)
    return label, values


def resolve_value(value: Any, ctx: Context, *, where: str = "") -> Any:
    """One value: a form resolved against now and the venue's clock; anything else as written."""
    form = _form(value)
    if form is None:
        return value
    if form == "@row":
        label = value["@row"]
        if label not in ctx.labels:
            raise SampleRefused(f"{where}: no earlier sample row is {label!r}", {"at": where})
        return ctx.labels[label]
    if form == "@in":
        if set(value) - {"@in", "@slot"}:
            raise SampleRefused(f"{where}: @in takes only @slot beside it", {"at": where})
        at = parse_duration(value["@in"]).after(ctx.now, ctx.zone)
        return next_slot(at, value["@slot"], ctx) if "@slot" in value else at
    raise SampleRefused(f"{where}: {form} stands only on a state column", {"at": where})


def _form(value: Any) -> str | None:
    """Which sample form a value is, if any."""
    if isinstance(value, dict):
        for form in ("@row", "@in", "@byStay"):
            if form in value:
                return form
        if "@slot" in value:
            return "@in"
    return None


def slot_hours(app: App, table: str) -> HoursRef:
    """The opening hours a table's timed moves read (the first found)."""
    spec = app.tables.get(table)
    for rule in (spec.states.timed or []) if spec and spec.states else []:
        for moment in [rule.at, *(rule.at.or_ or [])]:
            hours = getattr(moment.time, "hours", None)
            if isinstance(hours, HoursRef):
                return hours
    raise SampleRefused(
        f"@slot names {table!r}, whose timed moves read no opening hours", {"table": table}
    )


def slot_minutes(ctx: Context) -> int:
    """A slot's length: `slot_minutes` of the one settings row when set, else 15 minutes."""
    value = _setting(ctx, "slot_minutes")
    return value if isinstance(value, int) and value > 0 else SLOT_MINUTES


def next_slot(earliest: datetime, table: str, ctx: Context) -> datetime:
    """The first pickup slot starting at or after `earliest` that ends by closing.

    Slots start at the opening and every slot length after it (elapsed time), up to
    the last one that ends by the closing. The search starts on the venue day before
    `earliest`, whose opening may run past midnight.
    """
    ref = slot_hours(ctx.app, table)
    rows = ctx.tables.get(ref.table) or []
    size = timedelta(minutes=slot_minutes(ctx))
    first_day = venue_day(earliest, ctx.zone) - timedelta(days=1)
    for offset in range(SLOT_SEARCH_DAYS + 1):
        day = first_day + timedelta(days=offset)
        # A closed day (or one with no row) opens and closes at the same midnight: no slot
        # fits in it. Two rows for the day give no edges at all.
        opens = hours_edge(rows, ref, day, "opens", ctx.zone)
        closes = hours_edge(rows, ref, day, "closes", ctx.zone)
        if opens is None or closes is None:
            continue
        start = opens if earliest <= opens else opens + size * -(-(earliest - opens) // size)
        if start + size <= closes:
            return start
    raise SampleRefused(
        f"@slot: no open slot in the {SLOT_SEARCH_DAYS} days after {earliest.isoformat()}",
        {"table": table},
    )


def stay_state(values: Mapping[str, Any], options: Any, ctx: Context) -> str:
    """The state of a stay by the clock: before arrival, between arrival and departure, after."""
    given = options if isinstance(options, dict) else {}
    unknown = set(given) - set(STAY_DEFAULTS)
    if unknown:
        raise SampleRefused(
            f"@byStay has no option {sorted(unknown)}", {"options": sorted(unknown)}
        )
    opts = {**STAY_DEFAULTS, **given}
    arrive, nights = values.get(opts["arrive"]), values.get(opts["nights"], 1)
    if not isinstance(arrive, date) or isinstance(arrive, datetime) or not isinstance(nights, int):
        raise SampleRefused(
            f"@byStay needs the stay's {opts['arrive']} (a day) and {opts['nights']} (a number)",
            {"arrive": opts["arrive"], "nights": opts["nights"]},
        )
    arrive_from = _wall(opts["from"] or _setting(ctx, "arrive_from") or STAY_ARRIVE_FROM)
    arrival = wall_to_instant(arrive, arrive_from, ctx.zone)
    departure = wall_to_instant(arrive + timedelta(days=nights), _wall(opts["until"]), ctx.zone)
    before, during, after = opts["states"]
    if ctx.now < arrival:
        return str(before)
    return str(during) if ctx.now < departure else str(after)


def _setting(ctx: Context, column: str) -> Any:
    """A column of the one row of the app's settings table; None when the app names none."""
    table = ctx.app.settings_table
    return read_setting(SettingRef(table=table, column=column), ctx.tables) if table else None


def _wall(text: Any) -> time:
    """A wall time written HH:MM."""
    wall = parse_wall_time(text)
    if wall is None:
        raise SampleRefused(f"{text!r} is no wall time HH:MM", {"value": text})
    return wall
