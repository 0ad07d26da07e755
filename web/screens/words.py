"""The words staff read of what happened to a row, as template globals over core's words
(`core.time.words`, `core.rules.refusals`): who moved it last ("moved by the clock at 23:00
(Cancel code: closed)", or a person), and a refusal in plain words first with its code apart.

A board reads who moved its cards last once for the whole board (one query, memoised for the
request), a pushed card for its own row."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from zoneinfo import ZoneInfo

from flask import Flask, g
from jinja2 import pass_context
from jinja2.runtime import Context

from core.basics.errors import AdminiumError
from core.manifest.model import Table
from core.manifest.titles import column_label
from core.rules.refusals import StaffRefusal, staff_refusal
from core.store.audit import LastMove, last_moves
from core.store.store import Store
from core.sweep.pending import set_aside_rows
from core.time.words import mover_words
from services.apps import app_store
from services.models import App
from web.context import clock
from web.language import speech


def clock_codes(spec: Table | None, move: LastMove) -> list[tuple[str, str]]:
    """What a timed move set on the row, by column label ("Cancel code", "closed"): the `set`
    of the table's timed rule that makes this move, as the audit's row after it reads."""
    states = spec.states if spec is not None else None
    for timed in (states.timed or []) if states is not None else []:
        if timed.from_ == move.move_from and timed.to == move.move_to and timed.set:
            shown = [(c, move.after.get(c)) for c in timed.set]
            return [(column_label(c, spec), str(v)) for c, v in shown if v not in (None, "")]
    return []


def moved_words(spec: Table | None, move: LastMove | None, zone: ZoneInfo) -> str:
    """Who moved the row last, and when, with the codes the clock set; "" for none."""
    if move is None:
        return ""
    codes = clock_codes(spec, move) if move.actor_kind == "clock" else []
    return mover_words(move.actor_kind, move.actor, move.at, clock(), zone, codes, speech())


def history_move(entries: Any) -> LastMove | None:
    """The last move in a row page's history (its audit entries, the newest first)."""
    for entry in entries:
        if entry.get("move_from") is not None and entry.get("move_to") is not None:
            return LastMove(
                str(entry["row_key"]),
                entry["at"],
                entry["actor"],
                entry["actor_kind"],
                entry["move_from"],
                entry["move_to"],
                entry.get("after") or {},
            )
    return None


def _board_keys(context: Context, table: str) -> list[str]:
    """The keys of the board being drawn (its every card), when the card is on one."""
    board: Any = context.get("board")
    if getattr(board, "table", None) != table:
        return []
    return [str(card.key) for cards in board.columns.values() for card in cards]


@pass_context
def moved_last(context: Context, card: Any) -> str:
    """Who moved a card's row last: read for the whole board once, else for this row."""
    app = context.get("app")
    if not isinstance(app, App) or not card.state:
        return ""
    memo: dict[tuple[int, str], dict[str, LastMove | None]] = g.setdefault("moved_last", {})
    found = memo.setdefault((app.id, card.table), {})
    key = str(card.key)
    store = _store(app)
    if key not in found:
        keys = [k for k in _board_keys(context, card.table) if k not in found] or [key]
        with store.engine.connect() as conn:
            read = last_moves(conn, app.name, card.table, keys)
        found.update({k: read.get(k) for k in keys})
    # The store's parsed manifest: `App.model` parses it again at each read.
    spec = store.app.tables.get(card.table)
    return moved_words(spec, found.get(key), store.zone)


def _store(where: App | Store) -> Store:
    """An app's store, made once a request (a Store builds the app's tables)."""
    if not isinstance(where, App):
        return where
    memo: dict[int, Store] = g.setdefault("word_stores", {})
    if where.id not in memo:
        memo[where.id] = app_store(where)
    return memo[where.id]


@pass_context
def card_refusal(context: Context, card: Any) -> str:
    """A set-aside card's refusal in plain words ("Needs a note before it can be
    cancelled"): the table's set-aside rows read once for the request."""
    app = context.get("app")
    if not isinstance(app, App):
        return ""
    memo: dict[tuple[int, str], dict[str, Any]] = g.setdefault("card_asides", {})
    found = memo.get((app.id, card.table))
    if found is None:
        found = {a.key: a for a in set_aside_rows([_store(app)], table=card.table)}
        memo[(app.id, card.table)] = found
    aside = found.get(str(card.key))
    return aside_refusal(aside).words if aside is not None else ""


def refusal_of(
    code: str,
    details: Mapping[str, Any] | None,
    message: str,
    where: App | Store,
    table: str,
    *,
    to: str | None = None,
    row: Mapping[str, Any] | None = None,
) -> StaffRefusal:
    """A refusal's plain words for staff on the screens of an app (or its store)."""
    store = _store(where)
    return staff_refusal(
        code,
        details,
        message,
        tables=store.app.tables,
        table=table,
        to=to,
        row=row,
        zone=store.zone,
        say=speech(),
    )


def error_refusal(
    error: AdminiumError, where: App | Store, table: str, to: str | None = None, row: Any = None
) -> StaffRefusal:
    """A refusal raised by a write, in plain words for staff."""
    return refusal_of(error.code, error.details, error.message, where, table, to=to, row=row)


def aside_refusal(aside: Any) -> StaffRefusal:
    """A set-aside row's refusal for staff (`core.sweep.pending.Aside`): the rule's move, the
    row as it is now."""
    record = aside.record
    return refusal_of(
        record.code,
        record.details,
        record.message,
        aside.rule.store,
        aside.rule.table,
        to=aside.rule.timed.to,
        row=aside.row,
    )


def init_app(flask_app: Flask) -> None:
    """Make the words template globals."""
    flask_app.add_template_global(moved_last, "moved_last")
    flask_app.add_template_global(card_refusal, "card_refusal")
    flask_app.add_template_global(moved_words, "moved_words")
    flask_app.add_template_global(history_move, "history_move")
    flask_app.add_template_global(refusal_of, "refusal_of")
    flask_app.add_template_global(error_refusal, "error_refusal")
    flask_app.add_template_global(aside_refusal, "aside_refusal")
