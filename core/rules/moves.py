"""A move as a writer asks for it: listed from the row's state, an undo only by a person
naming what they saw, kept for its roles (the clock passes; a guest only where `public`)."""

from __future__ import annotations

from typing import Any

from core.basics.actors import Actor, ActorKind
from core.basics.errors import (
    StateChanged,
    StateMoveForbidden,
    StateMoveNotListed,
    UndoRefused,
    echo,
)
from core.manifest.model import MoveSpec, Table


def judge_move(
    spec: Table,
    state_from: str | None,
    move_to: str | None,
    seen_state: str | None,
    actor: Actor,
    *,
    roles: bool = True,
) -> MoveSpec:
    """The listed move from the row's state; undo only by a person naming what they saw; roles
    (not for an effect's move: the move that set it off was allowed)."""
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
    if roles:
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
