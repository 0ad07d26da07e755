"""What a write waits for in time: requires.time and settings, late rules, a timed move's due.

Each judgement reads its moments on the row as it is held (or, for a new row, on the
values being written) through the moment engine, at the `now` the write is made at.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.basics.actors import Actor, ActorKind
from core.basics.errors import (
    PublicTooEarly,
    PublicTooLate,
    RowNotDue,
    StateMoveRefused,
    StateTooLate,
)
from core.manifest.model import Late, Moment, Requires, States, Timed
from core.manifest.refs import SettingRef
from core.time.moments import MomentContext, apply_shift, read_setting, resolve_moment


def _iso(instant: datetime) -> str:
    return instant.isoformat()


def _unshifted(moment: Moment) -> Moment:
    """The same moment without its shifts: the row's own time a window is counted from."""
    fallbacks = [_unshifted(m) for m in moment.or_] if moment.or_ else None
    return moment.model_copy(update={"plus": None, "minus": None, "or_": fallbacks})


def _reads_linked(moment: Moment) -> bool:
    return moment.via is not None or any(_reads_linked(m) for m in moment.or_ or ())


def judge_requires(requires: Requires, ctx: MomentContext, now: datetime, actor: Actor) -> None:
    """Refuse a move (or a create) outside the time it waits for, or with a setting unmet."""
    window = requires.time
    if window is not None and window.after is not None:
        _judge_after(window.after, ctx, now, actor)
    if window is not None and window.before is not None:
        _judge_before(window.before, ctx, now, actor)
    for condition in requires.setting or ():
        value = read_setting(SettingRef(table=condition.table, column=condition.column), ctx.tables)
        if not _same(value, condition.eq):
            raise StateMoveRefused(
                f"this move waits for {condition.table}.{condition.column} to be {condition.eq!r}",
                {
                    "requires": "setting",
                    "table": condition.table,
                    "column": condition.column,
                    "eq": condition.eq,
                },
            )


def _same(value: Any, wanted: Any) -> bool:
    """A setting equal to a condition's value: true is no 1, and no value matches nothing."""
    if value is None:
        return False
    if isinstance(value, bool) or isinstance(wanted, bool):
        return isinstance(value, bool) and isinstance(wanted, bool) and value is wanted
    return bool(value == wanted)


def _judge_after(moment: Moment, ctx: MomentContext, now: datetime, actor: Actor) -> None:
    """`after` lets the move through from its moment on."""
    reading = resolve_moment(moment, ctx)
    if reading is None:
        _refuse_no_moment("after", actor)
    elif now < reading.at:
        if actor.kind is ActorKind.public:
            chosen = moment if reading.fallback == 0 else (moment.or_ or [])[reading.fallback - 1]
            base = resolve_moment(_unshifted(chosen), ctx)
            counted = base.at if base is not None else reading.at
            raise PublicTooEarly(
                "this move opens later", {"from": _iso(reading.at), "at": _iso(counted)}
            )
        raise StateMoveRefused(
            f"this move opens at {_iso(reading.at)}",
            {"requires": "time", "bound": "after", "at": _iso(reading.at)},
        )


def _judge_before(moment: Moment, ctx: MomentContext, now: datetime, actor: Actor) -> None:
    """`before` lets the move through until just before its moment."""
    reading = resolve_moment(moment, ctx)
    if reading is None:
        _refuse_no_moment("before", actor)
    elif now >= reading.at:
        if actor.kind is ActorKind.public:
            # A window closed by a linked row is refused without naming a time.
            params = {} if _reads_linked(moment) else {"at": _iso(reading.at)}
            raise PublicTooLate("this move has closed", params)
        raise StateMoveRefused(
            f"this move closed at {_iso(reading.at)}",
            {"requires": "time", "bound": "before", "at": _iso(reading.at)},
        )


def _refuse_no_moment(bound: str, actor: Actor) -> None:
    """A move whose moment has no value is refused; a guest is told no time."""
    if actor.kind is ActorKind.public:
        raise PublicTooLate("this move is closed")
    raise StateMoveRefused(
        "this move waits for a time the row does not have",
        {"requires": "time", "bound": bound, "at": None, "reason": "no-moment"},
    )


def late_rule(states: States, state_from: str | None, to: str) -> Late | None:
    """The late rule judging a move from `state_from` to `to`, if any (one per move)."""
    for rule in states.late or ():
        if rule.to == to and (rule.from_ is None or state_from in rule.from_):
            return rule
    return None


@dataclass(frozen=True)
class LateVerdict:
    """A late rule's judgement: late or not, the moment, and when its window opens."""

    late: bool
    moment: datetime | None = None
    opens: datetime | None = None


def judge_late(rule: Late, ctx: MomentContext, now: datetime, actor: Actor) -> LateVerdict:
    """Judge a move against its late rule on the row as stored; refuse it in mode refuse."""
    if not actor.judged_late:
        return LateVerdict(late=False)
    reading = resolve_moment(rule.moment, ctx)
    if reading is None:
        return LateVerdict(late=False)
    opens = apply_shift(reading.at, rule.within, -1, ctx.tables, ctx.zone)
    if opens is None:
        # A window whose length cannot be read has no value: not late.
        return LateVerdict(late=False, moment=reading.at)
    # Late when the moment is less than `within` away, or has passed.
    verdict = LateVerdict(late=now > opens, moment=reading.at, opens=opens)
    if verdict.late and rule.mode == "refuse":
        at = _iso(reading.at)
        if actor.kind is ActorKind.public:
            params = {} if _reads_linked(rule.moment) else {"at": at}
            raise PublicTooLate("this move is too late", params)
        if rule.refuse == "everyone":
            raise StateTooLate(f"this move is too late: the moment was {at}", {"at": at})
    return verdict


def judge_due(rule: Timed, ctx: MomentContext, now: datetime) -> None:
    """A timed move's row, as held: its moment, read again, has passed.

    Whether the row is still in `from` is judged once, by the pipeline (core/writes/pipeline.py),
    before this is reached.
    """
    reading = resolve_moment(rule.at, ctx)
    if reading is None or reading.at > now:
        raise RowNotDue(
            "the row's moment has not passed",
            {"reason": "not-due", "at": _iso(reading.at) if reading else None},
        )
