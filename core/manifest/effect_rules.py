"""Rules for effects and totals (WHAT-A-MOVE-SETS-OFF.md "Effects", "Totals"): each linked
table, `via`, move and column they read is one the app has, and effects never go round."""

from __future__ import annotations

from collections.abc import Iterator

from core.manifest.ledger_rules import NUMBER_TYPES, WatchCheck
from core.manifest.lookup import Lookup, column_of, move_target
from core.manifest.model import Column, Effect, MoveSpec, Table, TotalRule
from core.manifest.moment_rules import Out, Path, no_column, no_table
from core.manifest.refusal import Refusal, where

MAX_DEPTH = 3
"""How deep effects may chain: a move's effects, theirs, and theirs."""


def check_effect_rules(lk: Lookup, out: Out, check_watch: WatchCheck) -> None:
    """Each table's totals and each listed move's effects; then no effects in a circle and
    none deeper than MAX_DEPTH."""
    edges: list[tuple[Path, str, str]] = []
    for name, table in lk.app.tables.items():
        for index, column in enumerate(table.columns):
            if column.rules is not None and column.rules.total is not None:
                spot: Path = ("tables", name, "columns", index, "rules")
                _check_total(lk, out, spot, name, column, check_watch)
        for spot, effect in _effects(name, table):
            target = _check_effect(lk, out, spot, name, effect)
            if target is not None:
                edges.append((spot, name, target))
    _check_chains(out, edges)


def effect_target(app_tables: dict[str, Table], name: str, effect: Effect) -> str | None:
    """The table an effect moves rows of: its `table`, or where this row's `via` points."""
    if effect.table is not None:
        return effect.table
    link = column_of(app_tables[name], effect.via)
    return link.references if link is not None else None


def _effects(name: str, table: Table) -> Iterator[tuple[Path, Effect]]:
    """Every effect of the table's listed moves, with its place."""
    for source, moves in (table.states.moves if table.states else {}).items():
        for index, move in enumerate(moves):
            if isinstance(move, MoveSpec):
                for number, effect in enumerate(move.effects or ()):
                    at = ("tables", name, "states", "moves", source, index, "effects", number)
                    yield at, effect


def _check_effect(lk: Lookup, out: Out, at: Path, name: str, effect: Effect) -> str | None:
    """One effect's table, `via` and move; the table it moves rows of, when it has one."""
    if effect.table is not None:
        target = lk.table(effect.table)
        if target is None:
            out.append(Refusal(where(*at, "table"), no_table(effect.table)))
            return None
        if not _links_back(lk, out, (*at, "via"), effect.table, effect.via, name, 'with "table", '):
            return None
        target_name = effect.table
    else:
        link = lk.column(name, effect.via)
        if link is None:
            out.append(Refusal(where(*at, "via"), no_column(name, effect.via)))
            return None
        if link.references is None or lk.table(link.references) is None:
            sentence = (
                f'"{name}.{effect.via}" is no foreign key: without "table", "via" names a'
                f' column of "{name}" that points at the row to move'
            )
            out.append(Refusal(where(*at, "via"), sentence))
            return None
        target_name = link.references
    _check_effect_move(lk, out, at, target_name, effect.to)
    return target_name


def _links_back(
    lk: Lookup, out: Out, at: Path, table: str, via: str, name: str, lead: str = ""
) -> bool:
    """Whether `table.via` is a column that points at `name` (else one refusal)."""
    link = lk.column(table, via)
    if link is None:
        out.append(Refusal(where(*at), no_column(table, via)))
        return False
    if link.references == name:
        return True
    pointed = f'points at "{link.references}"' if link.references else "is no foreign key"
    sentence = (
        f'"{table}.{via}" {pointed}: {lead}"via" names a column of "{table}" that points at'
        f' "{name}"'
    )
    out.append(Refusal(where(*at), sentence))
    return False


def _check_effect_move(lk: Lookup, out: Out, at: Path, target: str, to: str) -> None:
    """The target table lists a move to `to`, and none of its moves to `to` is an undo."""
    table = lk.table(target)
    assert table is not None
    moves = [
        (source, move)
        for source, listed in (table.states.moves if table.states else {}).items()
        for move in listed
        if move_target(move) == to
    ]
    if not moves:
        sentence = (
            f'"{target}" lists no move to "{to}": an effect moves a linked row by a move its'
            " own table lists"
        )
        out.append(Refusal(where(*at, "to"), sentence))
        return
    for source, move in moves:
        if isinstance(move, MoveSpec) and move.undo:
            sentence = (
                f'the move of "{target}" from "{source}" to "{to}" is an undo, which only a'
                " person makes: an effect moves a linked row by a move that is no undo"
            )
            out.append(Refusal(where(*at, "to"), sentence))
            return


def _check_chains(out: Out, edges: list[tuple[Path, str, str]]) -> None:
    """No effect sets off effects that come back to its own table; chains MAX_DEPTH deep."""
    graph: dict[str, set[str]] = {}
    for _, source, target in edges:
        graph.setdefault(source, set()).add(target)
    circles = False
    for at, source, target in edges:
        path = _path(graph, target, source)
        if path is not None:
            circles = True
            round_trip = " → ".join([source, *path])
            sentence = (
                f"effects go round in a circle ({round_trip}): a move would set itself off"
                " again; drop one of these effects"
            )
            out.append(Refusal(where(*at), sentence))
    if circles:
        return
    for at, source, target in edges:
        depth = 1 + _depth(graph, target)
        if depth > MAX_DEPTH:
            sentence = (
                f'this effect on "{target}" sets off effects {depth} tables deep from'
                f' "{source}": effects go at most {MAX_DEPTH} deep'
            )
            out.append(Refusal(where(*at), sentence))


def _path(graph: dict[str, set[str]], start: str, goal: str) -> list[str] | None:
    """The tables from `start` to `goal` along effects (both included), if `goal` is reached."""
    seen: set[str] = set()
    stack: list[list[str]] = [[start]]
    while stack:
        path = stack.pop()
        if path[-1] == goal:
            return path
        for step in sorted(graph.get(path[-1], ()), reverse=True):
            if step not in seen:
                seen.add(step)
                stack.append([*path, step])
    return None


def _depth(graph: dict[str, set[str]], table: str) -> int:
    """How many tables deep the effects of a table's moves go (no circles)."""
    return max((1 + _depth(graph, step) for step in graph.get(table, ())), default=0)


def _check_total(
    lk: Lookup, out: Out, at: Path, name: str, column: Column, check_watch: WatchCheck
) -> None:
    """A total writes a number column, from a number column (or a count) of linked rows."""
    assert column.rules is not None and column.rules.total is not None
    total = column.rules.total
    spot = (*at, "total")
    if column.rules.stamp is not None or column.rules.code is not None:
        sentence = "a column is written by one rule: a total, a stamp or a code"
        out.append(Refusal(where(*at), sentence))
    if column.type not in NUMBER_TYPES:
        sentence = f'"{name}.{column.ref}" is {column.type}: a total is written to a number column'
        out.append(Refusal(where(*spot), sentence))
    if (total.sum is None) == (total.count is None):
        sentence = 'a total names what it adds up: "sum" a number column, or "count": true'
        out.append(Refusal(where(*spot), sentence))
    linked = lk.table(total.table)
    if linked is None:
        out.append(Refusal(where(*spot, "table"), no_table(total.table)))
        return
    _check_total_columns(lk, out, spot, name, total)
    if total.where is not None:
        check_watch(out, (*spot, "where"), total.table, linked, total.where)


def _check_total_columns(lk: Lookup, out: Out, at: Path, name: str, total: TotalRule) -> None:
    _links_back(lk, out, (*at, "via"), total.table, total.via, name)
    if total.sum is None:
        return
    summed = lk.column(total.table, total.sum)
    if summed is None:
        out.append(Refusal(where(*at, "sum"), no_column(total.table, total.sum)))
    elif summed.type not in NUMBER_TYPES:
        sentence = (
            f'"{total.table}.{total.sum}" is {summed.type}: a total sums a number column'
            " (numeric or integer)"
        )
        out.append(Refusal(where(*at, "sum"), sentence))
