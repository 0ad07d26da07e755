"""Which columns a writer may send: Adminium's own columns (the state, stamps, codes, late
flags), the key, unknown names; and each value kept meets `core.basics.values.checked_value`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.basics.actors import Actor, ActorKind
from core.basics.errors import ColumnReadOnly, echo
from core.basics.values import checked_value
from core.manifest.model import Table

_GIVEN_BY_IMPORT = ("stamp", "code")
"""Columns Adminium writes that an import or sample data may still bring a value for."""


def owned_columns(spec: Table) -> dict[str, str]:
    """Columns only Adminium writes, each with why: the state, stamps, codes, totals, late
    flags."""
    owned: dict[str, str] = {}
    for column in spec.columns:
        if column.rules is not None and column.rules.stamp is not None:
            owned[column.ref] = "stamp"
        if column.rules is not None and column.rules.code is not None:
            owned[column.ref] = "code"
        if column.rules is not None and column.rules.total is not None:
            owned[column.ref] = "total"
    if spec.states is not None:
        for rule in spec.states.late or ():
            if rule.flag is not None:
                owned[rule.flag] = "flag"
        owned[spec.states.column] = "state"
    return owned


def writer_values(
    spec: Table, values: Mapping[str, Any], actor: Actor, *, creating: bool
) -> dict[str, Any]:
    """A writer's values, checked: unknown, key and owned columns refused, flags dropped.

    Each value kept meets `checked_value`: what no column holds is VALUE_REFUSED here,
    for every writer, before the database sees it.
    """
    columns = {c.ref: c for c in spec.columns}
    owned = owned_columns(spec)
    kept: dict[str, Any] = {}
    for name, value in values.items():
        column = columns.get(name)
        reason = owned.get(name)
        if column is None and reason != "state":
            raise ColumnReadOnly(
                f"{echo(name)!r} is no column of this table", _why(name, "unknown")
            )
        if reason == "flag":
            # The flag belongs to Adminium: a value sent for it is dropped; the late rule sets it.
            continue
        if reason == "state":
            raise ColumnReadOnly(f"{name!r} changes only by a move", _why(name, "state"))
        given = reason in _GIVEN_BY_IMPORT and actor.kind in (ActorKind.import_, ActorKind.sample)
        if reason in ("stamp", "code", "total") and not given:
            # A total is recomputed from its linked rows at every write: nobody brings one.
            raise ColumnReadOnly(f"{name!r} is written by Adminium", _why(name, reason))
        if name == spec.key and not (creating and column is not None and column.type != "serial"):
            raise ColumnReadOnly(f"{name!r} is the row's key", _why(name, "key"))
        kept[name] = checked_value(name, column.type, value) if column is not None else value
    return kept


def _why(column: str, reason: str | None) -> dict[str, Any]:
    return {"column": echo(column), "reason": reason}
