"""Which columns a writer may send: Adminium's own columns (the state, stamps, codes, late
flags), the key, unknown names; each value kept meets `core.basics.values.checked_value`;
and what a new row gets for the columns its writer left out (`left_out_values`)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from core.basics.actors import Actor, ActorKind
from core.basics.errors import ColumnReadOnly, echo
from core.basics.values import checked_value
from core.manifest.model import Column, Table

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
        kept[name] = column_value(column, value) if column is not None else value
    if creating:
        kept.update(left_out_values(spec, kept))
    return kept


def column_value(column: Column, value: Any) -> Any:
    """A writer's value checked as its column takes it (`checked_value`)."""
    return checked_value(
        column.ref, column.type, value, scale=column.scale, precision=column.precision
    )


def left_out_values(spec: Table, given: Mapping[str, Any]) -> dict[str, Any]:
    """What a new row gets for the columns its writer left out: each manifest `default`
    (sent on insert whoever made the table, so a table with no default of its own in the
    database takes it too), and a random UUID for a `uuid` key."""
    owned = owned_columns(spec)
    found: dict[str, Any] = {}
    for column in spec.columns:
        if column.ref in given or column.ref in owned:
            continue
        if column.default is not None:
            found[column.ref] = column_value(column, column.default)
        elif column.ref == spec.key and column.type == "uuid":
            found[column.ref] = str(uuid.uuid4())
    return found


def _why(column: str, reason: str | None) -> dict[str, Any]:
    return {"column": echo(column), "reason": reason}
