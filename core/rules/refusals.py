"""A value the database refused, said in plain words naming the field: the one home of the
sentence ("the database refused the value: orders.note must be filled when cancelled
(check cancelled_needs_note)"), never the driver's text alone.

The driver names a constraint (and, for not-null, a column); the constraint's columns and
its comment (`COMMENT ON CONSTRAINT … IS 'must be filled when cancelled'`, the venue's own
words for its rule) are read from the catalogue once the write has failed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from core.basics.errors import ValueRefused
from core.store.store import Store

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
    constraint's columns and name in `details` (`column` the first a person can fix)."""
    reason = str(details.get("reason", "type"))
    constraint = details.get("constraint")
    columns: list[str] = [details["column"]] if details.get("column") else []
    comment = None
    if constraint:
        found, comment = _constraint(store, table, str(constraint))
        columns = columns or _fixable(store, table, found)
    if columns:
        details = {**details, "column": columns[0], "columns": columns}
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
