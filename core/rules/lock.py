"""The lock: columns a table keeps shut while a row holds (or takes) a watched value.

Only a writer's values are judged here: what Adminium writes by a rule (a timed move's
`set`, stamps, codes, totals) passes the lock, so a cancelled, locked order still takes
its cancel code and its new total."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.basics.errors import RowLocked
from core.manifest.model import LockRule, Table
from core.manifest.refs import ValueWatch

Row = Mapping[str, Any]


def holds(watch: ValueWatch, row: Row | None) -> bool:
    """Whether the row holds one of the watched values (so the lock rule is on)."""
    return row is not None and watch.column in row and row[watch.column] in watch.values


def shut_columns(spec: Table, rule: LockRule) -> set[str]:
    """The columns a lock rule keeps shut: `"*"` is every column but the state column."""
    if "*" not in rule.columns:
        return set(rule.columns)
    state = spec.states.column if spec.states is not None else None
    return {c.ref for c in spec.columns if c.ref != state}


def judge_lock(spec: Table, held: Row | None, after: Row, sent: Mapping[str, Any]) -> None:
    """Refuse changes the lock keeps shut, judged on the row as held and as it would be."""
    for rule in spec.lock or ():
        if not (holds(rule.when, held) or holds(rule.when, after)):
            continue
        shut = shut_columns(spec, rule)
        # A value sent as it already is changes nothing, so the lock lets it be.
        refused = sorted(
            name
            for name, value in sent.items()
            if name in shut and (held is None or held.get(name) != value)
        )
        if refused:
            raise RowLocked(
                "the row is locked: " + ", ".join(refused) + " may not change",
                {
                    "columns": refused,
                    "when": {"column": rule.when.column, "values": list(rule.when.values)},
                },
            )
