"""A board's all-day strip: what its open tickets add up to ("all day: 12 × ramen, 7 × pad
thai"), by the board's `all_day` (docs/manifest.md, `core.manifest.all_day_rules`).

Each value of the counted column, over the lines of the tickets in the counted states (or
the tickets themselves), with a `where` on the lines, counted one per line or by the
`quantity` added up; the most first. The strip is drawn with the board and the wall, and
fetched again whenever the board's socket brings a change, as its socket opens and as the
minute turns (a line added to a ticket that did not itself move shows at the next minute).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import sqlalchemy as sa
from flask import render_template

from core.manifest.all_day_rules import counted_states
from core.store.store import Store
from services.apps import app_store
from services.models import App
from web.screens.access import screen_app, screen_blueprint
from web.screens.boards import board_table

bp = screen_blueprint("all_day", __name__)

SHOWN = 12
"""How many values the strip names at most (the most counted); the rest are said as a number."""


@dataclass(frozen=True)
class AllDay:
    """What a board's open tickets add up to: each value and its count, the most first."""

    counts: tuple[tuple[str, int | Decimal], ...]
    more: int = 0
    """How many values the strip leaves unnamed."""


def read_all_day(store: Store, table: str) -> AllDay | None:
    """What the open tickets of a board add up to; None when its `board` names no `all_day`."""
    spec = store.spec(table)
    all_day = spec.board.all_day if spec.board else None
    if all_day is None or spec.states is None:
        return None
    tickets = store.table(table)
    counted = store.table(all_day.table) if all_day.table else tickets
    value = counted.c[all_day.count]
    amount = sa.func.sum(counted.c[all_day.quantity]) if all_day.quantity else sa.func.count()
    query = sa.select(value, amount).where(
        tickets.c[spec.states.column].in_(counted_states(spec)), value.is_not(None)
    )
    if all_day.table:
        assert all_day.via is not None
        query = query.select_from(
            counted.join(tickets, counted.c[all_day.via] == tickets.c[spec.key])
        )
    if all_day.where is not None:
        query = query.where(counted.c[all_day.where.column].in_(all_day.where.values))
    query = query.group_by(value).order_by(amount.desc(), value)
    with store.engine.connect() as conn:
        rows = [(str(v), n) for v, n in conn.execute(query) if n]
    return AllDay(tuple(rows[:SHOWN]), max(0, len(rows) - SHOWN))


def amount_words(amount: int | Decimal) -> str:
    """A count as the strip says it: whole numbers without decimals (2, not 2.00)."""
    if isinstance(amount, Decimal):
        return (
            format(amount.normalize(), "f") if amount != amount.to_integral() else str(int(amount))
        )
    return str(amount)


@bp.app_template_global()
def all_day_of(app: App, table: str) -> AllDay | None:
    """A board's all-day strip, for its page and its wall."""
    return read_all_day(app_store(app), table)


@bp.app_template_filter("all_day_amount")
def all_day_amount(amount: int | Decimal) -> str:
    """`amount_words` for the strip."""
    return amount_words(amount)


@bp.get("/apps/<connection>/<name>/<table>/all-day")
def show_all_day(connection: str, name: str, table: str) -> str:
    """The strip alone (what the board and the wall fetch again)."""
    app, _ = screen_app(connection, name)
    board_table(app, table)
    return render_template("screens/_all_day.html", app=app, connection=app.connection, table=table)
