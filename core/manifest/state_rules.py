"""Rules for a table's states: the state column, moves, requirements, timed moves, late rules."""

from __future__ import annotations

from collections.abc import Mapping

from core.manifest.lookup import (
    Lookup,
    column_of,
    listed_move,
    move_target,
    state_names,
    value_refusal,
    written_by_rules,
)
from core.manifest.model import Column, Late, Moment, MoveSpec, Requires, Shift, Table, Timed
from core.manifest.moment_rules import (
    Out,
    Path,
    check_moment,
    check_setting,
    check_shift,
    no_column,
)
from core.manifest.refusal import Refusal, listing, where

MAX_TIMED = 8
MAX_SET = 8
PUBLIC_ROLE = "public"
# A calendar day is 23 to 25 hours of elapsed time, as the clocks change.
DAY_MINUTES = (23 * 60, 25 * 60)


def unknown_state(table: str, state: str, states: list[str]) -> str:
    """The sentence for a state the table does not know."""
    return f'"{table}" has no state "{state}": its states are {listing(states)}'


def check_states(lk: Lookup, out: Out, at: Path, name: str, table: Table) -> None:
    """Everything under `tables.<name>.states`."""
    states = table.states
    if states is None:
        return
    column = column_of(table, states.column)
    if column is None:
        out.append(Refusal(where(*at, "column"), no_column(name, states.column)))
    elif column.type not in ("text", "enum"):
        sentence = f'"{name}.{states.column}" is {column.type}: a state column is text or enum'
        out.append(Refusal(where(*at, "column"), sentence))
    known = state_names(table)
    if states.initial not in known:
        out.append(Refusal(where(*at, "initial"), unknown_state(name, states.initial, known)))
    _check_moves(lk, out, at, name, table, known)
    for state in states.titles or {}:
        if state not in known:
            sentence = f"{unknown_state(name, state, known)}: a title names one of them"
            out.append(Refusal(where(*at, "titles", state), sentence))
    if states.create and states.create.requires:
        _check_requires(lk, out, (*at, "create", "requires"), name, states.create.requires)
    _check_timed(lk, out, (*at, "timed"), name, table, known)
    _check_late(lk, out, (*at, "late"), name, table, known)


def _check_moves(lk: Lookup, out: Out, at: Path, name: str, table: Table, known: list[str]) -> None:
    assert table.states is not None
    column = column_of(table, table.states.column)
    roles = [*lk.app.roles, PUBLIC_ROLE]
    for source, moves in table.states.moves.items():
        if source not in known:
            out.append(Refusal(where(*at, "moves", source), unknown_state(name, source, known)))
        elif _too_long(name, column, source):
            out.append(Refusal(where(*at, "moves", source), _too_long(name, column, source)))
        seen: list[str] = []
        for index, move in enumerate(moves):
            spot = (*at, "moves", source, index)
            target = move_target(move)
            if target not in known:
                out.append(Refusal(where(*spot), unknown_state(name, target, known)))
            elif _too_long(name, column, target):
                out.append(Refusal(where(*spot), _too_long(name, column, target)))
            if target in seen:
                sentence = f'the move from "{source}" to "{target}" is listed twice'
                out.append(Refusal(where(*spot), sentence))
            seen.append(target)
            if isinstance(move, MoveSpec):
                for number, role in enumerate(move.roles or []):
                    if role not in roles:
                        sentence = (
                            f'"{role}" is not a role of the app: write one of'
                            f' {listing(lk.app.roles)}, or "public" for guests'
                        )
                        out.append(Refusal(where(*spot, "roles", number), sentence))
                if move.requires:
                    _check_requires(lk, out, (*spot, "requires"), name, move.requires)


def _too_long(name: str, column: Column | None, state: str) -> str:
    """The sentence for a state longer than its text column holds, or ''."""
    if column is None or column.max_length is None or len(state) <= column.max_length:
        return ""
    return f'"{name}.{column.ref}" holds {column.max_length} characters, too few for "{state}"'


def _check_requires(lk: Lookup, out: Out, at: Path, name: str, requires: Requires) -> None:
    if requires.time:
        for bound in ("after", "before"):
            moment = getattr(requires.time, bound)
            if moment is not None:
                check_moment(lk, out, (*at, "time", bound), name, moment)
    for index, condition in enumerate(requires.setting or []):
        spot = (*at, "setting", index)
        column = check_setting(lk, out, spot, condition.table, condition.column)
        sentence = column and value_refusal(condition.table, column, condition.eq)
        if sentence:
            out.append(Refusal(where(*spot, "eq"), sentence))


def _check_timed(lk: Lookup, out: Out, at: Path, name: str, table: Table, known: list[str]) -> None:
    assert table.states is not None
    rules = table.states.timed or []
    if len(rules) > MAX_TIMED:
        sentence = f'"{name}" has {len(rules)} timed moves: a table has at most eight'
        out.append(Refusal(where(*at), sentence))
    leaving: dict[str, int] = {}
    for index, rule in enumerate(rules):
        spot = (*at, index)
        if rule.from_ not in known:
            out.append(Refusal(where(*spot, "from"), unknown_state(name, rule.from_, known)))
        elif rule.from_ in leaving:
            sentence = (
                f'timed[{leaving[rule.from_]}] already leaves "{rule.from_}":'
                " at most one timed move leaves each state"
            )
            out.append(Refusal(where(*spot, "from"), sentence))
        leaving.setdefault(rule.from_, index)
        check_moment(lk, out, (*spot, "at"), name, rule.at, timed=True)
        if rule.from_ in known:
            _check_timed_move(out, spot, name, table, rule)
        if rule.set is not None:
            _check_set(out, (*spot, "set"), name, table, rule.set)


def _check_timed_move(out: Out, at: Path, name: str, table: Table, rule: Timed) -> None:
    move = listed_move(table, rule.from_, rule.to)
    if move is None:
        sentence = (
            f'"{name}" lists no move from "{rule.from_}" to "{rule.to}":'
            " a timed move makes a move the table lists"
        )
        out.append(Refusal(where(*at, "to"), sentence))
        return
    if isinstance(move, str):
        return
    if move.undo:
        sentence = (
            f'the move from "{rule.from_}" to "{rule.to}" is an undo, which only a person makes'
        )
        out.append(Refusal(where(*at, "to"), sentence))
    after = move.requires.time.after if move.requires and move.requires.time else None
    if after is not None and _opens_later(rule.at, after):
        sentence = (
            f'the move from "{rule.from_}" to "{rule.to}" waits until after'
            f' "{after.column}" {_shift_words(after)}, later than its timed moment:'
            " it would be refused every time; time it no earlier than what it waits for"
        )
        out.append(Refusal(where(*at, "at"), sentence))


def _offset(moment: Moment) -> tuple[int, int] | None:
    """The least and most minutes a moment lies from its column, or None if unknowable."""
    if moment.time is not None or moment.or_ or moment.via is not None:
        return None
    if moment.plus is not None and moment.minus is not None:
        return None
    shift, sign = (moment.plus, 1) if moment.plus is not None else (moment.minus, -1)
    if shift is None:
        return (0, 0)
    per_unit = {"minutes": (1, 1), "hours": (60, 60), "days": DAY_MINUTES}
    for unit, (low, high) in per_unit.items():
        amount = getattr(shift, unit)
        if isinstance(amount, int | float) and _only(shift, unit):
            ends = (sign * amount * low, sign * amount * high)
            return (int(min(ends)), int(max(ends)))
    return None


def _only(shift: Shift, unit: str) -> bool:
    return [u for u in ("minutes", "hours", "days") if getattr(shift, u) is not None] == [unit]


def _opens_later(at: Moment, after: Moment) -> bool:
    """A move's `after` surely later than the timed moment, both on one column of the row."""
    timed, waits = _offset(at), _offset(after)
    if timed is None or waits is None or at.column != after.column:
        return False
    return waits[0] > timed[1]


def _shift_words(moment: Moment) -> str:
    for part in ("plus", "minus"):
        shift = getattr(moment, part)
        for unit in ("minutes", "hours", "days"):
            amount = shift and getattr(shift, unit)
            if amount is not None:
                return f"{part} {amount} {unit}"
    return "itself"


def _check_set(out: Out, at: Path, name: str, table: Table, values: Mapping[str, object]) -> None:
    assert table.states is not None
    if not 1 <= len(values) <= MAX_SET:
        sentence = f'"set" names one to eight columns; this one names {len(values)}'
        out.append(Refusal(where(*at), sentence))
    written = written_by_rules(table)
    for ref, value in values.items():
        column = column_of(table, ref)
        if column is None:
            sentence = no_column(name, ref)
        elif ref == table.states.column:
            sentence = f'"{ref}" is the state column: the move itself writes it'
        elif ref == table.key:
            sentence = f'"{ref}" is the key of "{name}": a timed move never changes it'
        elif ref in written:
            sentence = f'"{name}.{ref}" is written by {written[ref]}: set another column'
        else:
            sentence = value_refusal(name, column, value) or ""
        if sentence:
            out.append(Refusal(where(*at, ref), sentence))


def _check_late(lk: Lookup, out: Out, at: Path, name: str, table: Table, known: list[str]) -> None:
    assert table.states is not None
    judged: dict[str, int] = {}
    flags: dict[str, int] = {}
    targets = {move_target(m) for moves in table.states.moves.values() for m in moves}
    for index, rule in enumerate(table.states.late or []):
        spot = (*at, index)
        if rule.to not in targets:
            sentence = f'"{name}" lists no move to "{rule.to}": a late rule judges a listed move'
            out.append(Refusal(where(*spot, "to"), sentence))
        elif rule.to in judged:
            sentence = (
                f'late[{judged[rule.to]}] already judges the move to "{rule.to}":'
                " one late rule per move"
            )
            out.append(Refusal(where(*spot, "to"), sentence))
        judged.setdefault(rule.to, index)
        for number, source in enumerate(rule.from_ or []):
            if source not in known:
                sentence = unknown_state(name, source, known)
            elif listed_move(table, source, rule.to) is None:
                sentence = (
                    f'"{name}" lists no move from "{source}" to "{rule.to}":'
                    ' "from" names states that have it'
                )
            else:
                continue
            out.append(Refusal(where(*spot, "from", number), sentence))
        check_moment(lk, out, (*spot, "moment"), name, rule.moment)
        check_shift(lk, out, (*spot, "within"), rule.within)
        _check_late_mode(out, spot, name, table, rule, flags)
        if rule.flag is not None:
            flags.setdefault(rule.flag, index)


def _check_late_mode(
    out: Out, at: Path, name: str, table: Table, rule: Late, flags: dict[str, int]
) -> None:
    assert table.states is not None
    if rule.mode == "refuse":
        if rule.flag is not None:
            sentence = '"flag" is for mode "flag": drop it, or write mode "flag"'
            out.append(Refusal(where(*at, "flag"), sentence))
        return
    if rule.refuse is not None:
        sentence = '"refuse" is for mode "refuse": drop it, or write mode "refuse"'
        out.append(Refusal(where(*at, "refuse"), sentence))
    if rule.flag is None:
        sentence = (
            f'mode "flag" needs a "flag": a yes/no column of "{name}" set when the move is late'
        )
        out.append(Refusal(where(*at), sentence))
        return
    column = column_of(table, rule.flag)
    written = written_by_rules(table)
    if column is None:
        sentence = no_column(name, rule.flag)
    elif rule.flag == table.states.column:
        sentence = (
            f'"{rule.flag}" is the state column: flag a late move in a yes/no column of its own'
        )
    elif rule.flag in written:
        sentence = (
            f'"{name}.{rule.flag}" is written by {written[rule.flag]}:'
            " flag a late move in a column of its own"
        )
    elif column.type != "boolean":
        sentence = (
            f'"{name}.{rule.flag}" is {column.type}: a late flag is a yes/no (boolean) column'
        )
    elif rule.flag in flags:
        sentence = (
            f'"{rule.flag}" already flags late[{flags[rule.flag]}]:'
            " give each late rule a flag of its own"
        )
    else:
        return
    out.append(Refusal(where(*at, "flag"), sentence))
