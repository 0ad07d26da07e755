"""Rules for limits, holds, postings and ledgers (WHAT-A-MOVE-SETS-OFF.md: Limits; Holds,
ledgers and give-backs): each name, column, state and moment they read is one the app has."""

from __future__ import annotations

from collections.abc import Callable

from core.manifest.ledger_model import Ledger, Posting
from core.manifest.lookup import WHOLE_NUMBER_TYPES, Lookup, column_of, state_names
from core.manifest.model import Hold, Limit, Moment, Table
from core.manifest.moment_rules import (
    Out,
    Path,
    check_moment,
    check_setting,
    check_whole_setting,
    no_column,
    no_table,
)
from core.manifest.refs import SettingRef, ValueWatch
from core.manifest.refusal import Refusal, listing, shown, where
from core.manifest.state_rules import unknown_state

NUMBER_TYPES = frozenset({*WHOLE_NUMBER_TYPES, "numeric"})

WatchCheck = Callable[[Out, Path, str, Table, ValueWatch], None]
"""The check's rule for a watched column and its values (core.manifest.check)."""


def check_ledger_rules(lk: Lookup, out: Out, check_watch: WatchCheck) -> None:
    """The app's ledgers, and each table's limits, hold and postings."""
    for index, ledger in enumerate(lk.app.ledgers or ()):
        _check_ledger(lk, out, ("ledgers", index), ledger)
    for name, table in lk.app.tables.items():
        at = ("tables", name)
        seen: dict[str, int] = {}
        for index, limit in enumerate(table.limits or ()):
            spot = (*at, "limits", index)
            if limit.name in seen:
                sentence = (
                    f'"{name}" already has a limit "{limit.name}" (limits[{seen[limit.name]}])'
                )
                out.append(Refusal(where(*spot, "name"), sentence))
            seen.setdefault(limit.name, index)
            _check_limit(lk, out, spot, name, table, limit, check_watch)
        if table.hold is not None:
            _check_hold(lk, out, (*at, "hold"), name, table, table.hold)
        for index, posting in enumerate(table.postings or ()):
            _check_posting(lk, out, (*at, "postings", index), name, table, posting, check_watch)


def _check_ledger(lk: Lookup, out: Out, at: Path, ledger: Ledger) -> None:
    names = [found.name for found in lk.app.ledgers or ()]
    first = names.index(ledger.name)
    if at[-1] != first:
        sentence = f'"{ledger.name}" is already a ledger (ledgers[{first}]): give each its own name'
        out.append(Refusal(where(*at, "name"), sentence))
    if lk.table(ledger.table) is None:
        out.append(Refusal(where(*at, "table"), no_table(ledger.table)))
        return
    _check_number_column(lk, out, (*at, "balance"), ledger.table, ledger.balance, "a balance")
    for part in ("min", "max"):
        bound = getattr(ledger, part)
        if isinstance(bound, SettingRef):
            column = check_setting(lk, out, (*at, part), bound.table, bound.column)
            if column is not None and column.type not in NUMBER_TYPES:
                sentence = (
                    f'"{bound.table}.{bound.column}" is {column.type}: a ledger\'s {part} is'
                    " read from a number column (numeric or integer)"
                )
                out.append(Refusal(where(*at, part, "column"), sentence))
    low, high = ledger.min, ledger.max
    if isinstance(low, int | float) and isinstance(high, int | float) and low > high:
        sentence = f"min {low} is above max {high}: no balance could be kept between them"
        out.append(Refusal(where(*at, "min"), sentence))


def _check_number_column(lk: Lookup, out: Out, at: Path, table: str, name: str, what: str) -> None:
    column = lk.column(table, name)
    if column is None:
        out.append(Refusal(where(*at), no_column(table, name)))
    elif column.type not in NUMBER_TYPES:
        sentence = (
            f'"{table}.{name}" is {column.type}: {what} is a number column (numeric or integer)'
        )
        out.append(Refusal(where(*at), sentence))


def _check_limit(
    lk: Lookup, out: Out, at: Path, name: str, table: Table, limit: Limit, check_watch: WatchCheck
) -> None:
    check_watch(out, (*at, "count"), name, table, limit.count)
    for index, column in enumerate(limit.per):
        if column_of(table, column) is None:
            out.append(Refusal(where(*at, "per", index), no_column(name, column)))
        elif limit.per.index(column) != index:
            out.append(Refusal(where(*at, "per", index), f"{shown(column)} is listed twice"))
    if isinstance(limit.max, SettingRef):
        setting = (limit.max.table, limit.max.column)
        check_whole_setting(lk, out, (*at, "max"), *setting, "a limit's max")
    elif not float(limit.max).is_integer() or limit.max < 0:
        sentence = f"{limit.max} is no count of rows: a limit's max is a whole number, 0 or more"
        out.append(Refusal(where(*at, "max"), sentence))


def _check_hold(lk: Lookup, out: Out, at: Path, name: str, table: Table, hold: Hold) -> None:
    if table.states is None:
        sentence = f'"{name}" keeps no states: a hold names the states its rows are held in'
        out.append(Refusal(where(*at, "states"), sentence))
    else:
        known = state_names(table)
        for index, state in enumerate(hold.states):
            if state not in known:
                out.append(Refusal(where(*at, "states", index), unknown_state(name, state, known)))
    linked = _linked(hold.until, (*at, "until"))
    if linked is not None:
        sentence = (
            f'a hold ends at a moment of its own row, which limits count by: drop "via" and'
            f' copy the time onto "{name}"'
        )
        out.append(Refusal(where(*linked, "via"), sentence))
        return
    check_moment(lk, out, (*at, "until"), name, hold.until)


def _linked(moment: Moment, at: Path) -> Path | None:
    """Where a moment (or one of its `or` moments) reads a linked row, if it does."""
    if moment.via is not None:
        return at
    for index, fallback in enumerate(moment.or_ or ()):
        found = _linked(fallback, (*at, "or", index))
        if found is not None:
            return found
    return None


def _check_posting(
    lk: Lookup,
    out: Out,
    at: Path,
    name: str,
    table: Table,
    posting: Posting,
    check_watch: WatchCheck,
) -> None:
    ledgers = {ledger.name: ledger for ledger in lk.app.ledgers or ()}
    ledger = ledgers.get(posting.ledger)
    if ledger is None:
        known = listing(list(ledgers))
        sentence = f'there is no ledger "{posting.ledger}": the app\'s ledgers are {known}'
        out.append(Refusal(where(*at, "ledger"), sentence))
    link = column_of(table, posting.via)
    if link is None:
        out.append(Refusal(where(*at, "via"), no_column(name, posting.via)))
    elif ledger is not None and lk.table(ledger.table) and link.references != ledger.table:
        pointed = f'points at "{link.references}"' if link.references else "is no foreign key"
        sentence = (
            f'"{name}.{posting.via}" {pointed}: "via" names a column that points at the'
            f' accounts of "{ledger.name}", "{ledger.table}"'
        )
        out.append(Refusal(where(*at, "via"), sentence))
    _check_number_column(lk, out, (*at, "amount"), name, posting.amount, "a posting's amount")
    if isinstance(posting.on, ValueWatch):
        check_watch(out, (*at, "on"), name, table, posting.on)
    if not posting.gives_back:
        return
    if table.hold is None:
        sentence = (
            f'"givesBack" gives back a hold, and "{name}" keeps no hold: add "hold" to the'
            ' table, or drop "givesBack"'
        )
        out.append(Refusal(where(*at, "givesBack"), sentence))
        return
    states = state_names(table)
    for index, state in enumerate(posting.gives_back):
        spot = where(*at, "givesBack", index)
        if state not in states:
            out.append(Refusal(spot, unknown_state(name, state, states)))
        elif state in table.hold.states:
            sentence = (
                f'"{state}" is a held state: a hold is given back by a move out of'
                f" {listing(table.hold.states)}"
            )
            out.append(Refusal(spot, sentence))
