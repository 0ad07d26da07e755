"""A screen's writes: form values read as the columns' types, then a person's write; and
what a screen answers after one: a short sentence where the person acted and a toast
("Orders #9 moved to Confirmed by you"), with Undo where the table lists the undo."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from flask import render_template, url_for
from flask_babel import gettext as _

from core.basics.actors import Actor
from core.basics.errors import ValueRefused, echo
from core.manifest.model import Column
from core.rules.refusals import StaffRefusal
from core.store.store import Store
from core.writes.pipeline import WriteResult
from services.models import App
from services.writes import write_by_person
from web.context import clock, publisher
from web.language import speech
from web.screens.labels import column_label, state_label, table_label
from web.screens.reading import open_moves
from web.screens.times import value as shown_value


def form_value(column: Column, raw: str, store: Store) -> Any:
    """A form's text as the column's value; an empty field is null. Local times: venue clock."""
    text = raw.strip()
    if text == "":
        return None
    try:
        if column.type in ("timestamptz", "timestamp"):
            local = datetime.fromisoformat(text)
            if local.utcoffset() is None:
                local = local.replace(tzinfo=store.zone)
            return local
        if column.type == "date":
            return datetime.fromisoformat(text).date()
        if column.type in ("integer", "serial"):
            return int(text)
        if column.type == "numeric":
            return Decimal(text)
        if column.type == "boolean":
            return text.lower() in ("1", "true", "yes", "on")
    except (ValueError, InvalidOperation):
        raise ValueRefused(
            f"{column.ref!r} does not read {echo(text)!r} as {column.type}",
            {"column": column.ref, "reason": "type"},
        ) from None
    return text


class NothingToChange(Exception):
    """An edit that would leave the row as it is: not written (no audit entry), said so."""

    def __init__(self, words: str) -> None:
        super().__init__(words)
        self.words = words


def edit(store: Store, table: str, key: Any, actor: Actor, column: str, raw: str) -> WriteResult:
    """Change one field of a row as a person; its events go out after the commit. A value
    the field holds already is no change: NothingToChange says so, and nothing is written."""
    spec = store.spec(table)
    found = next((c for c in spec.columns if c.ref == column), None)
    if found is None:
        raise ValueRefused(
            f"no column {echo(column)!r}", {"column": echo(column), "reason": "unknown"}
        )
    new = form_value(found, raw, store)
    with store.engine.connect() as conn:
        row = store.read_row(conn, table, key)
    if row is not None and row.get(column) == new:
        say = speech()
        now_is = say("empty") if new is None else shown_value(new, store.zone)
        raise NothingToChange(
            say(
                "Not saved: %(field)s of %(row)s is %(value)s already, so nothing would change.",
                field=column_label(found),
                row=row_words(spec, table, key),
                value=now_is,
            )
        )
    return _write(store, table, key, actor, values={column: new})


def move(
    store: Store, table: str, key: Any, actor: Actor, to: str, seen: str | None
) -> WriteResult:
    """Move a row as a person, naming the state they saw; its events go out after the commit."""
    return _write(store, table, key, actor, move_to=to, seen_state=seen or None)


def _write(store: Store, table: str, key: Any, actor: Actor, **change: Any) -> WriteResult:
    """A person's write from a screen, on the web's clock and publisher."""
    return write_by_person(
        store, table, key, actor=actor, clock=clock, publisher=publisher(), **change
    )


def row_words(spec: Any, table: str, key: Any) -> str:
    """A row as the screens name it: its table's title and key ("Orders #9")."""
    return f"{table_label(spec, table)} #{key}"


@dataclass(frozen=True)
class Undo:
    """The undo a toast offers: the listed undo move back to the state the row left."""

    href: str
    to: str
    seen: str
    words: str


@dataclass(frozen=True)
class Answer:
    """What an action did, in one sentence; `kind` "" (done), "warn" or "refused"; a
    refusal's code, shown small after the words."""

    words: str
    kind: str = ""
    undo: Undo | None = None
    code: str = ""


def refused_answer(what: str, named: str, refusal: StaffRefusal) -> Answer:
    """A refused action's answer: "Not done: Orders #104: Needs a note before it can be
    cancelled. Fill in Note, then try again." with the code apart."""
    return Answer(f"{what}: {named}: {refusal.sentence}", "refused", code=refusal.code)


def not_done() -> str:
    """The head of a refused action's answer: "Not done"."""
    return _("Not done")


def undo_of(
    app: App, spec: Any, table: str, key: Any, left: str, now: str, roles: frozenset[str]
) -> Undo | None:
    """The undo back to `left` the table lists from `now` for these roles, if any."""
    for move in open_moves(spec, now, roles):
        if move.undo and move.to == left:
            href = url_for(
                "rows.move_row",
                connection=app.connection.name,
                name=app.name,
                table=table,
                key=key,
            )
            words = _("Undo to %(state)s", state=state_label(left, spec))
            return Undo(href, left, now, words)
    return None


def moved_answer(
    app: App,
    spec: Any,
    table: str,
    key: Any,
    left: str,
    result: WriteResult,
    roles: frozenset[str],
    by: str | None = None,
) -> Answer:
    """ "Orders #9 moved to Confirmed by you", with the undo the table lists."""
    state_column = spec.states.column if spec.states else ""
    now = str(result.row.get(state_column))
    say = speech()
    words = say(
        "%(row)s moved to %(state)s %(by)s.",
        row=row_words(spec, table, key),
        state=state_label(now, spec),
        by=by or say("by you"),
    )
    return Answer(words, undo=undo_of(app, spec, table, key, left, now, roles))


def toast(answer: Answer) -> str:
    """The answer as a toast, swapped into the page's toasts (out of band)."""
    return render_template("screens/_toast.html", answer=answer)
