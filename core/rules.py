"""Rules that shape what a write sends: Adminium's own columns, the lock, stamps and codes."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from core.actors import Actor, ActorKind
from core.errors import (
    ColumnReadOnly,
    RowLocked,
    StateChanged,
    StateMoveForbidden,
    StateMoveNotListed,
    UndoRefused,
    echo,
)
from core.manifest.model import MoveSpec, Table, ValueWatch
from core.moments import Tables, apply_shift
from core.values import checked_value

Row = Mapping[str, Any]

_GIVEN_BY_IMPORT = ("stamp", "code")
"""Columns Adminium writes that an import or sample data may still bring a value for."""


def owned_columns(spec: Table) -> dict[str, str]:
    """Columns only Adminium writes, each with why: the state, stamps, codes, late flags."""
    owned: dict[str, str] = {}
    for column in spec.columns:
        if column.rules is not None and column.rules.stamp is not None:
            owned[column.ref] = "stamp"
        if column.rules is not None and column.rules.code is not None:
            owned[column.ref] = "code"
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
        if reason in _GIVEN_BY_IMPORT and actor.kind not in (ActorKind.import_, ActorKind.sample):
            raise ColumnReadOnly(f"{name!r} is written by Adminium", _why(name, reason))
        if name == spec.key and not (creating and column is not None and column.type != "serial"):
            raise ColumnReadOnly(f"{name!r} is the row's key", _why(name, "key"))
        kept[name] = checked_value(name, column.type, value) if column is not None else value
    return kept


def _why(column: str, reason: str | None) -> dict[str, Any]:
    return {"column": echo(column), "reason": reason}


def _holds(watch: ValueWatch, row: Row | None) -> bool:
    return row is not None and watch.column in row and row[watch.column] in watch.values


def judge_lock(spec: Table, held: Row | None, after: Row, sent: Mapping[str, Any]) -> None:
    """Refuse changes the lock keeps shut, judged on the row as held and as it would be."""
    state = spec.states.column if spec.states is not None else None
    for rule in spec.lock or ():
        if not (_holds(rule.when, held) or _holds(rule.when, after)):
            continue
        shut = (
            {c.ref for c in spec.columns if c.ref != state}
            if "*" in rule.columns
            else set(rule.columns)
        )
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


def _takes(watch: ValueWatch, before: Row | None, after: Row) -> bool:
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
        and _takes(c.rules.stamp.on, before, after)
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


def judge_move(
    spec: Table, state_from: str | None, move_to: str | None, seen_state: str | None, actor: Actor
) -> MoveSpec:
    """The listed move from the row's state; undo only by a person naming what they saw; roles."""
    states = spec.states
    details = {"from": state_from, "to": None if move_to is None else echo(move_to)}
    if states is None or state_from is None:
        raise StateMoveNotListed("this table keeps no states", details)
    found = next(
        (
            MoveSpec(to=m) if isinstance(m, str) else m
            for m in states.moves.get(state_from, [])
            if (m if isinstance(m, str) else m.to) == move_to
        ),
        None,
    )
    if found is None:
        raise StateMoveNotListed(f"no move from {state_from!r} to {details['to']!r}", details)
    if seen_state is not None and seen_state != state_from:
        raise StateChanged(
            "the row has moved since it was seen", {"seen": echo(seen_state), "state": state_from}
        )
    if found.undo and (actor.kind is not ActorKind.person or seen_state is None):
        reason = "person-only" if actor.kind is not ActorKind.person else "seen-state-needed"
        raise UndoRefused(
            f"the move from {state_from!r} to {move_to!r} is an undo: "
            "a person makes it, naming the state they saw",
            {**details, "reason": reason},
        )
    _judge_roles(found, actor, details)
    return found


def _judge_roles(move: MoveSpec, actor: Actor, details: dict[str, Any]) -> None:
    """A move kept for roles: the clock passes; a guest only where `public` is listed."""
    if actor.kind is ActorKind.clock:
        return
    roles = set(move.roles or ())
    if actor.kind is ActorKind.public:
        allowed = "public" in roles
    else:
        allowed = not roles or bool(roles & actor.roles)
    if not allowed:
        raise StateMoveForbidden(
            "this move is kept for other roles", {**details, "roles": sorted(roles)}
        )
