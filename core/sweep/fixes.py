"""What a set-aside row's fixes may offer a person: the column that gives it a new moment
(only one a person may write, so never a button that is always refused), and the fields
to fix, the one a refusal named first. Neither offers a column the timed move itself
writes (its `set`): the move would overwrite what the person wrote."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from core.basics.speech import ENGLISH, Speech
from core.manifest.model import Column, Moment, Table, Timed
from core.rules.columns import owned_columns
from core.rules.lock import holds, shut_columns
from core.rules.refusals import named_field

InputKind = Literal["date", "datetime-local"]


def _written_by(kind: str, column: str, say: Speech) -> str:
    """Why a column Adminium owns takes no new moment, in words."""
    if kind == "stamp":
        return say("%(column)s is written by Adminium (a stamp)", column=column)
    if kind == "code":
        return say("%(column)s is written by Adminium (a code)", column=column)
    if kind == "flag":
        return say("%(column)s is Adminium's late flag", column=column)
    if kind == "state":
        return say("%(column)s changes only by a move", column=column)
    return say("%(column)s is written by Adminium", column=column)


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


def rule_writes(timed: Timed | None) -> frozenset[str]:
    """The columns a timed move writes as it moves (its `set`): never a fix's to offer."""
    return frozenset(timed.set or ()) if timed is not None else frozenset()


def new_moment(
    moment: Moment,
    spec: Table,
    row: Mapping[str, Any],
    fallback: int,
    timed: Timed | None = None,
    say: Speech = ENGLISH,
) -> NewMoment:
    """The column that gives the row a new moment: the part of the moment that answered
    (`fallback` 0 its own column, n its n-th fallback) when a person may write it; else
    none, with words saying why (a stamp, another row's column, a lock that holds, the
    timed move `timed` writing it itself)."""
    parts = [moment, *(moment.or_ or [])]
    part = parts[min(fallback, len(parts) - 1)]
    if part.via is not None:
        return NewMoment(
            None,
            say(
                "the moment is read from %(via)s's %(column)s: re-date that row instead",
                via=part.via,
                column=part.column,
            ),
        )
    if part.column in rule_writes(timed):
        return NewMoment(
            None,
            say(
                "%(column)s is written by the timed move itself: no new moment can be given here",
                column=part.column,
            ),
        )
    owned = owned_columns(spec)
    if part.column in owned:
        why = _written_by(owned[part.column], part.column, say)
        return NewMoment(None, say("%(why)s: no new moment can be given here", why=why))
    locked = _locked(spec, row, part.column)
    if locked:
        return NewMoment(
            None, say("%(column)s is locked while %(lock)s", column=part.column, lock=locked)
        )
    column = next((c for c in spec.columns if c.ref == part.column), None)
    if column is None or column.ref == spec.key:
        return NewMoment(None, say("%(column)s cannot be written here", column=part.column))
    return NewMoment(
        column, say("only its day counts: the moment reads its own time") if part.time else ""
    )


def fix_fields(
    table: str,
    spec: Table,
    columns: Sequence[Column],
    message: str,
    named: str | None,
    timed: Timed | None = None,
) -> tuple[list[Column], str | None]:
    """The fields a person may fix, the one the refusal named first (from its details, or
    from its words, `table.column`, as a set-aside record keeps them), and that one's name.
    With the refused timed move `timed`: neither its moment's column (a new moment is its
    own fix) nor a column it writes itself."""
    moment = (timed.at.column,) if timed is not None else ()
    left_out = {*owned_columns(spec), *rule_writes(timed), *moment}
    fields = [c for c in columns if c.ref not in left_out]
    refs = [c.ref for c in fields]
    first = named if named in refs else named_field(message, table, refs)
    return sorted(fields, key=lambda c: c.ref != first), first


def _locked(spec: Table, row: Mapping[str, Any], column: str) -> str:
    """Words for a lock that keeps `column` shut on the row as it is ("status is placed"), or ""."""
    for rule in spec.lock or ():
        if holds(rule.when, row) and column in shut_columns(spec, rule):
            return f"{rule.when.column} is {row.get(rule.when.column)}"
    return ""
