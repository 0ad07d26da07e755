"""A refusal in words: the one home of each sentence.

Two readers, two sentences. The refusal's own message is the developer's, naming the field
as the database does ("the database refused the value: orders.note must be filled when
cancelled (check cancelled_needs_note)"): the API, the log and the console say it. Staff on
the screens read `staff_refusal`: plain words first, with what to do, and the code apart
("Needs a note before it can be cancelled" · "Fill in Note, then try again." · VALUE_REFUSED),
built from the refusal's code and details, the table's titles and the row.

The driver names a constraint (and, for not-null, a column); the constraint's columns and
its comment (`COMMENT ON CONSTRAINT … IS 'must be filled when cancelled'`, the venue's own
words for its rule) are read from the catalogue once the write has failed.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from core.basics.errors import ValueRefused
from core.basics.speech import ENGLISH, Speech
from core.manifest.titles import column_label, lower_first, state_label, table_label
from core.store.store import Store
from core.time.words import instant_words

log = logging.getLogger(__name__)

PREFIX = "the database refused the value: "

_RULE_WORDS = {
    "not-null": "must have a value",
    "check": "breaks a rule of the table",
    "foreign-key": "must name a row that exists",
    "unique": "is already taken by another row",
}
"""What each kind of refusal says when the venue gave its constraint no words of its own."""
_KIND = {"check": "check", "foreign-key": "foreign key", "unique": "unique", "not-null": "not null"}


def refused_value(store: Store, table: str, details: dict[str, Any], primary: str) -> ValueRefused:
    """The VALUE_REFUSED for a database refusal: plain words naming the field, the
    constraint's columns and name in `details` (`column` the first a person can fix), and
    its comment when the venue wrote one (`comment`: what staff read)."""
    reason = str(details.get("reason", "type"))
    constraint = details.get("constraint")
    columns: list[str] = [details["column"]] if details.get("column") else []
    comment = None
    if constraint:
        found, comment = _constraint(store, table, str(constraint))
        columns = columns or _fixable(store, table, found)
    if columns:
        details = {**details, "column": columns[0], "columns": columns}
    if comment:
        details = {**details, "comment": comment}
    return ValueRefused(
        PREFIX + value_words(table, reason, columns, constraint, comment, primary), details
    )


def value_words(
    table: str,
    reason: str,
    columns: Sequence[str],
    constraint: object,
    comment: str | None,
    primary: str,
) -> str:
    """The sentence after the prefix: `orders.note must be filled when cancelled (check
    cancelled_needs_note)`; a type refusal keeps the database's own reason."""
    field = ", ".join(f"{table}.{c}" for c in columns) or table
    if reason not in _RULE_WORDS:
        return f"{field}: {primary}"
    words = comment or _RULE_WORDS[reason]
    kind = _KIND.get(reason, reason)
    named = f" ({kind} {constraint})" if constraint else f" ({kind})"
    return f"{field} {words}{named}"


def named_field(message: str, table: str, columns: Sequence[str]) -> str | None:
    """The first of `columns` a refusal's words name as `table.column` (a set-aside record
    keeps the words only), or None."""
    found = [(message.find(f"{table}.{c}"), c) for c in columns if f"{table}.{c}" in message]
    return min(found)[1] if found else None


def _constraint(store: Store, table: str, name: str) -> tuple[list[str], str | None]:
    """A constraint's columns (in the table's order) and its comment; empty when the
    catalogue cannot be read (the refusal still stands, in fewer words)."""
    query = sa.text(
        "SELECT obj_description(c.oid, 'pg_constraint') AS comment, "
        "ARRAY(SELECT a.attname FROM pg_attribute a WHERE a.attrelid = c.conrelid "
        "AND a.attnum = ANY(c.conkey) ORDER BY a.attnum) AS columns "
        "FROM pg_constraint c WHERE c.conrelid = to_regclass(:table) AND c.conname = :name"
    )
    qualified = f'"{store.app.schema_name}"."{table}"'
    try:
        with store.engine.connect() as conn:
            row = conn.execute(query, {"table": qualified, "name": name}).first()
    except sa.exc.SQLAlchemyError as error:
        log.info("constraint %s of %s unread: %s", name, table, error.__class__.__name__)
        return [], None
    if row is None:
        return [], None
    return list(row.columns or []), row.comment


def _fixable(store: Store, table: str, columns: list[str]) -> list[str]:
    """A constraint's columns a person fixes: all but the state column (a move changes
    that), unless it is the only one."""
    spec = store.spec(table)
    state = spec.states.column if spec.states is not None else None
    return [c for c in columns if c != state] or columns


@dataclass(frozen=True)
class StaffRefusal:
    """A refusal as staff read it: what is wrong in plain words, what to do (may be empty),
    and the code, shown small beside them."""

    words: str
    todo: str
    code: str

    @property
    def sentence(self) -> str:
        """The words and what to do, as one sentence or two: "Needs a note before it can
        be cancelled. Fill in Note, then try again." """
        return f"{self.words}. {self.todo}" if self.todo else f"{self.words}."


def staff_refusal(
    code: str,
    details: Mapping[str, Any] | None,
    message: str,
    *,
    tables: Mapping[str, Any],
    table: str,
    to: str | None = None,
    row: Mapping[str, Any] | None = None,
    zone: ZoneInfo | None = None,
    say: Speech = ENGLISH,
) -> StaffRefusal:
    """A refusal's plain words for staff, from its code and details: `tables` the app's
    tables (their titles), `table` the row's, `to` the state the refused move led to, `row`
    the row as it is (an empty field reads "Needs a note"), `zone` the venue's, `say` the
    reader's language. A linked row that refused (an effect's, a parent's total) is named
    first ("Parts #3012: …")."""
    found = dict(details or {})
    linked = found.get("effect") if isinstance(found.get("effect"), Mapping) else None
    if linked is not None and "table" in linked:
        other = str(linked["table"])
        spec = tables.get(other)
        said = _words(code, found, message, spec, None, None, zone, say)
        named = f"{table_label(spec, other)} #{linked.get('key')}"
        return StaffRefusal(f"{named}: {said[0]}", said[1], code)
    words, todo = _words(code, found, message, tables.get(table), to, row, zone, say)
    return StaffRefusal(words, todo, code)


def _words(
    code: str,
    details: Mapping[str, Any],
    message: str,
    spec: Any,
    to: str | None,
    row: Mapping[str, Any] | None,
    zone: ZoneInfo | None,
    say: Speech = ENGLISH,
) -> tuple[str, str]:
    """(words, what to do) for one refusal code."""
    if code == "VALUE_REFUSED":
        return _value_words(details, spec, to, row, say)
    columns = [str(c) for c in details.get("columns") or ()]
    fields = say(" and ").join(column_label(c, spec) for c in columns)
    if code == "ROW_LOCKED":
        if not fields:
            return (say("A field is locked in this state"), "")
        return (
            say.plural(
                "%(fields)s is locked in this state",
                "%(fields)s are locked in this state",
                len(columns),
                fields=fields,
            ),
            "",
        )
    if code == "COLUMN_NOT_WRITABLE":
        return (
            say(
                "The database does not let Adminium change %(fields)s",
                fields=fields or say("this row"),
            ),
            say("Ask whoever runs the venue's database to allow it."),
        )
    if code == "STATE_MOVE_REFUSED":
        return _time_words(details, spec, zone, say), ""
    if code in ("STATE_TOO_LATE", "PUBLIC_TOO_LATE"):
        at = _at(details.get("at"), zone, say)
        return (
            (say("Too late: it closed %(at)s", at=at) if at else say("Too late: it closed")),
            "",
        )
    if code == "LIMIT_REACHED":
        most = details.get("max")
        limit = label_of(details.get("limit"))
        if most is not None:
            return (say("No room: %(limit)s allows %(most)s at most", limit=limit, most=most), "")
        return (say("No room: %(limit)s allows no room now", limit=limit), "")
    if code == "LEDGER_CAP":
        account = f"{label_of(details.get('ledger'))} #{details.get('key')}"
        return (
            say("%(account)s would go past its limit", account=account),
            say("Change the amount, or the account."),
        )
    if code == "STATE_MOVE_FORBIDDEN":
        return (say("This move is kept for other roles"), say("Ask a manager."))
    if code == "WRITE_CONFLICT" or code.endswith("_BUSY"):
        return (say("Someone else was changing it at that moment"), say("Try again in a moment."))
    return (message[:1].upper() + message[1:], "")


def label_of(name: object) -> str:
    """A limit's or a ledger's name in words ("per_slot" reads "per slot")."""
    return str(name or "").replace("_", " ")


def _value_words(
    details: Mapping[str, Any],
    spec: Any,
    to: str | None,
    row: Mapping[str, Any] | None,
    say: Speech = ENGLISH,
) -> tuple[str, str]:
    """A value the database refused: "Needs a note before it can be cancelled" when the
    field it names is empty and the refused write was a move; else the venue's own words
    for its rule ("Note must be filled when cancelled"), else the kind's."""
    reason = str(details.get("reason", "type"))
    column = details.get("column")
    field = column_label(str(column), spec) if column else say("A field")
    empty = row is not None and column is not None and row.get(str(column)) in (None, "")
    fill = say("Fill in %(field)s, then try again.", field=field)
    change = say("Change %(field)s, then try again.", field=field)
    if reason in ("check", "not-null") and empty and to:
        state = lower_first(state_label(to, spec))
        needed = _article(field) if say.english else field
        return (say("Needs %(field)s before it can be %(state)s", field=needed, state=state), fill)
    comment = details.get("comment")
    if reason == "check" and isinstance(comment, str) and comment:
        return (f"{field} {comment}", change)
    if reason == "not-null":
        return (say("%(field)s must have a value", field=field), fill)
    if reason == "foreign-key":
        return (
            say("%(field)s must name a row that exists", field=field),
            say("Pick a %(field)s that exists.", field=lower_first(field)),
        )
    if reason == "unique":
        return (
            say("%(field)s is already taken by another row", field=field),
            say("Choose another %(field)s.", field=lower_first(field)),
        )
    if reason == "check":
        return (say("%(field)s breaks a rule of the table", field=field), change)
    return (say("%(field)s does not take that value", field=field), change)


def _article(field: str) -> str:
    """ "a note", "an address": the field inside "Needs … before it can be …"."""
    words = lower_first(field)
    return f"{'an' if words[:1] in 'aeiou' else 'a'} {words}"


def _time_words(
    details: Mapping[str, Any], spec: Any, zone: ZoneInfo | None, say: Speech = ENGLISH
) -> str:
    """A move outside the time it waits for, or waiting for a setting."""
    if details.get("requires") == "setting":
        setting = column_label(str(details.get("column", "")), None)
        return say(
            "Waits for the setting %(setting)s to be %(value)s",
            setting=setting,
            value=repr(details.get("eq")),
        )
    if details.get("reason") == "no-moment":
        return say("Waits for a time this row does not have")
    at = _at(details.get("at"), zone, say)
    if details.get("bound") == "before":
        return say("Closed %(at)s", at=at) if at else say("Closed")
    return say("Not open yet: it opens %(at)s", at=at) if at else say("Not open yet: it opens")


def _at(raw: object, zone: ZoneInfo | None, say: Speech = ENGLISH) -> str:
    """ "at Fri 21:00" on the venue's clock, from a refusal's ISO instant ("" without one)."""
    if not isinstance(raw, str) or zone is None:
        return ""
    try:
        instant = datetime.fromisoformat(raw)
    except ValueError:
        return ""
    if instant.utcoffset() is None:
        return ""
    return say("at %(time)s", time=instant_words(instant, zone, say))
