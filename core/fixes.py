"""What a set-aside row's fixes may offer a person: the column that gives it a new moment
(only one a person may write, so never a button that is always refused), and the fields
to fix, the one a refusal named first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from core.columns import owned_columns
from core.manifest.model import Column, Moment, Table
from core.refusals import named_field

InputKind = Literal["date", "datetime-local"]

_WRITTEN_BY = {
    "stamp": "is written by Adminium (a stamp)",
    "code": "is written by Adminium (a code)",
    "flag": "is Adminium's late flag",
    "state": "changes only by a move",
}


@dataclass(frozen=True)
class NewMoment:
    """The column a person writes to re-date a row, its input, and words when there is none."""

    column: Column | None
    words: str = ""

    @property
    def input(self) -> InputKind:
        """A date column gets a date picker; a timestamptz one a date and time picker."""
        return (
            "date" if self.column is not None and self.column.type == "date" else "datetime-local"
        )


def new_moment(moment: Moment, spec: Table, row: Mapping[str, Any], fallback: int) -> NewMoment:
    """The column that gives the row a new moment: the part of the moment that answered
    (`fallback` 0 its own column, n its n-th fallback) when a person may write it; else
    none, with words saying why (a stamp, another row's column, a lock that holds)."""
    parts = [moment, *(moment.or_ or [])]
    part = parts[min(fallback, len(parts) - 1)]
    if part.via is not None:
        return NewMoment(
            None, f"the moment is read from {part.via}'s {part.column}: re-date that row instead"
        )
    owned = owned_columns(spec)
    if part.column in owned:
        why = _WRITTEN_BY.get(owned[part.column], "is written by Adminium")
        return NewMoment(None, f"{part.column} {why}: no new moment can be given here")
    locked = _locked(spec, row, part.column)
    if locked:
        return NewMoment(None, f"{part.column} is locked while {locked}")
    column = next((c for c in spec.columns if c.ref == part.column), None)
    if column is None or column.ref == spec.key:
        return NewMoment(None, f"{part.column} cannot be written here")
    return NewMoment(
        column, "only its day counts: the moment reads its own time" if part.time else ""
    )


def fix_fields(
    table: str, spec: Table, columns: Sequence[Column], message: str, named: str | None
) -> tuple[list[Column], str | None]:
    """The fields a person may fix, the one the refusal named first (from its details, or
    from its words, `table.column`, as a set-aside record keeps them), and that one's name."""
    owned = owned_columns(spec)
    fields = [c for c in columns if c.ref not in owned]
    refs = [c.ref for c in fields]
    first = named if named in refs else named_field(message, table, refs)
    return sorted(fields, key=lambda c: c.ref != first), first


def _locked(spec: Table, row: Mapping[str, Any], column: str) -> str:
    """Words for a lock that keeps `column` shut on the row as it is ("status is placed"), or ""."""
    state = spec.states.column if spec.states is not None else None
    for rule in spec.lock or ():
        if row.get(rule.when.column) not in rule.when.values:
            continue
        if ("*" in rule.columns and column != state) or column in rule.columns:
            return f"{rule.when.column} is {row.get(rule.when.column)}"
    return ""
