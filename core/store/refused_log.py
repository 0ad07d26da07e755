"""The clock's refused attempts, kept: one entry each time a timed move (or a hold's
give-back) was refused and its row set aside, written with the set-aside record in the same
transaction (`core.store.set_aside.set_aside_row`, the one place a row is set aside). The
record says what holds now and goes once the row moves; these entries stay, so a row's
history and the clock's log can say what the clock tried, when, and why it was refused.

A database whose Adminium tables predate this one lacks it until `adminium run` (or an app's
install) makes it: the entry is then skipped inside a savepoint and the set-aside record
stands, so the sweep never stops for it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.store.schema import refused_attempts

log = logging.getLogger(__name__)

_NO_TABLE = "42P01"
ROW_LIMIT = 50
"""How many refused attempts a row's history shows at most (the newest first)."""


@dataclass(frozen=True)
class RefusedAttempt:
    """One refused attempt of the clock: where, which rule, the refusal, when, until when."""

    app: str
    table: str
    key: str
    rule: int
    code: str
    message: str
    details: dict[str, Any] | None
    moment: datetime
    at: datetime
    until: datetime


def keep_refused(conn: Connection, attempt: RefusedAttempt) -> None:
    """Keep a refused attempt, inside a savepoint: a database without the table (not yet
    upgraded) skips it, and the caller's transaction and its set-aside record stand."""
    values = {
        "app": attempt.app,
        "table_name": attempt.table,
        "row_key": attempt.key,
        "rule": attempt.rule,
        "code": attempt.code,
        "message": attempt.message,
        "details": attempt.details,
        "moment": attempt.moment,
        "at": attempt.at,
        "until": attempt.until,
    }
    try:
        with conn.begin_nested():
            conn.execute(sa.insert(refused_attempts).values(values))
    except sa.exc.ProgrammingError as error:
        log.warning(
            "refused attempt of %s.%s key=%s not kept: %s",
            attempt.app,
            attempt.table,
            attempt.key,
            str(error.orig).splitlines()[0] if error.orig else type(error).__name__,
        )


def _attempt(row: Any) -> RefusedAttempt:
    return RefusedAttempt(
        row["app"],
        row["table_name"],
        row["row_key"],
        row["rule"],
        row["code"],
        row["message"],
        row["details"],
        row["moment"],
        row["at"],
        row["until"],
    )


def row_refusals(
    conn: Connection, app: str, table: str, key: str, limit: int = ROW_LIMIT
) -> list[RefusedAttempt]:
    """A row's refused attempts, the newest first (none, logged, from a database not yet
    upgraded: its screens still draw)."""
    query = (
        sa.select(refused_attempts)
        .where(
            refused_attempts.c.app == app,
            refused_attempts.c.table_name == table,
            refused_attempts.c.row_key == key,
        )
        .order_by(refused_attempts.c.id.desc())
        .limit(limit)
    )
    return _read(conn, query)


def _read(conn: Connection, query: sa.Select[Any]) -> list[RefusedAttempt]:
    """The attempts a query finds; none from a database that lacks the table (logged)."""
    try:
        with conn.begin_nested() if conn.in_transaction() else conn.begin():
            return [_attempt(row) for row in conn.execute(query).mappings()]
    except sa.exc.ProgrammingError as error:
        if getattr(error.orig, "sqlstate", None) != _NO_TABLE:
            raise
        log.warning("refused attempts not read: %s", str(error.orig).splitlines()[0])
        return []


def refusals_between(
    conn: Connection, apps: Sequence[str], since: datetime, until: datetime
) -> list[RefusedAttempt]:
    """The apps' refused attempts from `since` up to `until`, oldest first."""
    query = (
        sa.select(refused_attempts)
        .where(
            refused_attempts.c.app.in_(list(apps)),
            refused_attempts.c.at >= since,
            refused_attempts.c.at <= until,
        )
        .order_by(refused_attempts.c.at, refused_attempts.c.id)
    )
    return _read(conn, query)
