"""Rules for moments, shifts, times of day, hours tables and the settings they read."""

from __future__ import annotations

from core.manifest.base import SHIFT_MOST, SHIFT_WORDS, WEEKDAYS
from core.manifest.lookup import (
    MOMENT_TYPES,
    WALL_TIME_LENGTH,
    WHOLE_NUMBER_TYPES,
    Lookup,
)
from core.manifest.model import Column, Moment, RowTime, Shift, TimeOfDay
from core.manifest.refs import HoursEdge, HoursRef, SettingRef
from core.manifest.refusal import Refusal, listing, where

MAX_OR = 3
Out = list[Refusal]
Path = tuple[str | int, ...]


def no_table(name: str) -> str:
    """The sentence for a table the app does not have."""
    return f'there is no table "{name}"'


def no_column(table: str, name: str) -> str:
    """The sentence for a column a table does not have."""
    return f'"{table}" has no column "{name}"'


def settings_sentence(table: str, column: str) -> str:
    """The spec's sentence for a setting read from a table that may hold many rows."""
    return (
        f"“{table}” may hold many rows, so “{table}.{column}” is no setting: read settings from"
        " the app’s one-row settings table (outbox.settings.table), or from a table that links"
        " nowhere, that no table links to, and that keeps no states or limits"
    )


def check_setting(lk: Lookup, out: Out, at: Path, table: str, column: str) -> Column | None:
    """A `{table, column}` setting: the settings table or a table standing alone."""
    if lk.table(table) is None:
        out.append(Refusal(where(*at, "table"), no_table(table)))
        return None
    if not lk.is_setting_table(table):
        out.append(Refusal(where(*at), settings_sentence(table, column)))
        return None
    found = lk.column(table, column)
    if found is None:
        out.append(Refusal(where(*at, "column"), no_column(table, column)))
    return found


def check_whole_setting(
    lk: Lookup, out: Out, at: Path, table: str, name: str, what: str = "a shift"
) -> None:
    """A setting read as an amount: a whole-number column."""
    column = check_setting(lk, out, at, table, name)
    if column is not None and column.type not in WHOLE_NUMBER_TYPES:
        out.append(
            Refusal(
                where(*at, "column"),
                f'"{table}.{name}" is {column.type}: {what} is read from'
                " a whole-number column (integer)",
            )
        )


def check_shift(lk: Lookup, out: Out, at: Path, shift: Shift) -> None:
    """Exactly one unit; a whole number of 0 or more, or a whole-number setting."""
    named = {"minutes": shift.minutes, "hours": shift.hours, "days": shift.days}
    units = [(unit, amount) for unit, amount in named.items() if amount is not None]
    if len(units) != 1:
        names = " and ".join(unit for unit, _ in units) or "none"
        out.append(
            Refusal(
                where(*at),
                f"a shift names exactly one of minutes, hours or days; this one names {names}",
            )
        )
    for unit, amount in units:
        if isinstance(amount, SettingRef):
            check_whole_setting(lk, out, (*at, unit), amount.table, amount.column)
        elif not float(amount).is_integer():
            out.append(
                Refusal(
                    where(*at, unit),
                    f"{amount} is not a whole number: write whole {unit}, or use a smaller unit",
                )
            )
        elif amount < 0:
            out.append(
                Refusal(where(*at, unit), f"{amount} is below zero: a shift is 0 or more {unit}")
            )
        elif amount > SHIFT_MOST[unit]:
            out.append(Refusal(where(*at, unit), f"{int(amount):,} {unit} is {SHIFT_WORDS}"))


def check_hours(lk: Lookup, out: Out, at: Path, ref: HoursRef) -> None:
    """An hours table: a weekday enum of mon…sun, text HH:MM times, optionally a yes/no."""
    if lk.table(ref.table) is None:
        out.append(Refusal(where(*at, "table"), no_table(ref.table)))
        return
    for part in ("weekday", "open", "opens", "closes"):
        name = getattr(ref, part)
        if name is None:
            continue
        column = lk.column(ref.table, name)
        if column is None:
            out.append(Refusal(where(*at, part), no_column(ref.table, name)))
            continue
        held = f'"{ref.table}.{name}" is {column.type}'
        if part == "weekday" and (
            column.type != "enum" or sorted(column.values or []) != sorted(WEEKDAYS)
        ):
            sentence = f"{held}: an hours table's weekday is an enum of exactly {listing(WEEKDAYS)}"
            out.append(Refusal(where(*at, part), sentence))
        elif part == "open" and column.type != "boolean":
            out.append(Refusal(where(*at, part), f'{held}: "open" names a yes/no (boolean) column'))
        elif part in ("opens", "closes") and not _holds_wall_time(column):
            sentence = f"{_held(ref.table, column)}: opening hours are text columns holding HH:MM"
            out.append(Refusal(where(*at, part), sentence))


def _holds_wall_time(column: Column) -> bool:
    return column.type == "text" and (column.max_length or WALL_TIME_LENGTH) >= WALL_TIME_LENGTH


def _held(table: str, column: Column) -> str:
    if column.type == "text":
        return f'"{table}.{column.ref}" holds {column.max_length} characters'
    return f'"{table}.{column.ref}" is {column.type}'


def check_time(lk: Lookup, out: Out, at: Path, table: str, time: TimeOfDay) -> None:
    """A time of day: HH:MM (checked by the model), a setting, an hours edge, a row's column."""
    if isinstance(time, HoursEdge):
        check_hours(lk, out, (*at, "hours"), time.hours)
    elif isinstance(time, SettingRef):
        column = check_setting(lk, out, at, time.table, time.column)
        if column is not None and not _holds_wall_time(column):
            out.append(
                Refusal(
                    where(*at, "column"),
                    f"{_held(time.table, column)}: a time setting is a text column"
                    " holding at least 5 characters (HH:MM)",
                )
            )
    elif isinstance(time, RowTime):
        column = lk.column(table, time.column)
        if column is None:
            out.append(Refusal(where(*at, "column"), no_column(table, time.column)))
        elif column.type != "text":
            sentence = f'"{table}.{time.column}" is {column.type}: a time on the row is text'
            out.append(Refusal(where(*at, "column"), sentence))


def _read_table(lk: Lookup, out: Out, at: Path, table: str, moment: Moment, timed: bool) -> str:
    """The table the moment's column is read from: the row's own, or the one `via` points at."""
    if moment.via is None:
        return table
    if timed:
        sentence = (
            f'a timed move reads its own row only: drop "via" and copy the time onto "{table}"'
        )
        out.append(Refusal(where(*at, "via"), sentence))
        return ""
    link = lk.column(table, moment.via)
    if link is None:
        out.append(Refusal(where(*at, "via"), no_column(table, moment.via)))
        return ""
    if link.references is None:
        sentence = f'"{table}.{moment.via}" is no foreign key: "via" names a column with references'
        out.append(Refusal(where(*at, "via"), sentence))
        return ""
    return link.references if lk.table(link.references) else ""


def check_moment(
    lk: Lookup, out: Out, at: Path, table: str, moment: Moment, timed: bool = False
) -> None:
    """A moment of a row of `table`; `timed` forbids `via`, in the fallbacks too."""
    read = _read_table(lk, out, at, table, moment, timed)
    if read:
        column = lk.column(read, moment.column)
        if column is None:
            out.append(Refusal(where(*at, "column"), no_column(read, moment.column)))
        elif column.type not in MOMENT_TYPES:
            sentence = (
                f'"{read}.{moment.column}" is {column.type}: a moment reads a date,'
                " timestamptz or timestamp column"
            )
            out.append(Refusal(where(*at, "column"), sentence))
        elif column.type == "date" and moment.time is None:
            sentence = f'"{read}.{moment.column}" is a date, which has no clock: give it a "time"'
            out.append(Refusal(where(*at), sentence))
        if moment.time is not None:
            check_time(lk, out, (*at, "time"), read, moment.time)
    if moment.plus is not None and moment.minus is not None:
        out.append(Refusal(where(*at), 'a moment shifts by "plus" or by "minus", not both'))
    for part, shift in (("plus", moment.plus), ("minus", moment.minus)):
        if shift is not None:
            check_shift(lk, out, (*at, part), shift)
    fallbacks = moment.or_ or []
    if len(fallbacks) > MAX_OR:
        sentence = f'a moment has at most three "or" moments, not {len(fallbacks)}'
        out.append(Refusal(where(*at, "or"), sentence))
    for index, fallback in enumerate(fallbacks):
        check_moment(lk, out, (*at, "or", index), table, fallback, timed)
