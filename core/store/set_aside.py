"""Set-aside rows: the one home of the rule (DESIGN decision 5, the spec's "Set aside").

A timed move refused by anything but another writer is set aside: a record (table, row
key, rule number from 1, refusal code, the moment it was judged at, until = now + one
hour) and the spec's warning in the log. While the record holds, the sweep passes the row
by; a row whose moment has changed since is judged on its new moment; a row that left
`from` is never tried again. The sweep and the screens' "Try again now" both come here.

A refusal by a linked row (an effect's move refused by its CHECK, its limit, its lock)
names that row in its `details.effect`; the record keeps the refusal's details, so the
log line, `adminium set-aside list`, the sweep's printout and the set-aside screen say
"refused by parts 3012: …" (`refused_by`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import Connection

from core.basics.errors import AdminiumError, PublicError
from core.store.refused_log import RefusedAttempt, keep_refused
from core.store.schema import set_aside

log = logging.getLogger(__name__)

SET_ASIDE_FOR = timedelta(hours=1)
"""How long a refused row is left alone (spec: "left alone for an hour")."""

REFUSED_WORDS = "timed move refused; left alone for an hour"
"""The spec's words for a row set aside."""


def refusal_details(error: AdminiumError) -> dict[str, Any]:
    """A refusal's details as JSON keeps them (a public refusal's are its params)."""
    details = error.params if isinstance(error, PublicError) else error.details
    return dict(json.loads(json.dumps(details, default=str)))


def refused_by(details: Mapping[str, Any] | None) -> str | None:
    """The linked row a refusal names, as words: "parts 3012" (an effect's row, or the
    parent whose total the write changes, held elsewhere); None when it names none."""
    found = details or {}
    effect = found.get("effect")
    if isinstance(effect, Mapping) and "table" in effect:
        return f"{effect['table']} {effect.get('key')}"
    if found.get("reason") == "total" and "table" in found:
        return f"{found['table']} {found.get('key')}"
    return None


def refusal_words(message: str, details: Mapping[str, Any] | None) -> str:
    """A refusal's words as the operator reads them: "refused by parts 3012: …" when a
    linked row refused, else the words alone."""
    linked = refused_by(details)
    return f"refused by {linked}: {message}" if linked else message


@dataclass(frozen=True)
class SetAside:
    """A row set aside: where it is, its rule's number, the refusal, its moment, until when."""

    app: str
    table: str
    key: str
    rule: int
    code: str
    moment: datetime
    until: datetime
    message: str = ""
    at: datetime | None = None
    details: Mapping[str, Any] | None = None

    @property
    def linked(self) -> str | None:
        """The linked row that refused, as words ("parts 3012"), if one did."""
        return refused_by(self.details)

    @property
    def words(self) -> str:
        """The refusal's words, naming the linked row that refused ("refused by parts 3012: …")."""
        return refusal_words(self.message, self.details)

    def stands_for(self, moment: datetime) -> bool:
        """Whether the record still speaks for the row: the moment it was refused at is the
        row's moment now (a re-dated row is judged on its new moment). Screens list such a
        row as set aside until a fix or the sweep takes it off."""
        return self.moment == moment

    def holds(self, moment: datetime, now: datetime) -> bool:
        """Whether the row is left alone at `now`: the record stands for its moment and its
        hour runs (the sweep passes the row by until then)."""
        return self.stands_for(moment) and self.until > now


RecordKey = tuple[str, str, str, int]
"""(app, table, row key as text, rule number)."""


def read_set_aside(
    conn: Connection, apps: list[str], *, table: str | None = None, key: str | None = None
) -> dict[RecordKey, SetAside]:
    """The set-aside records of the apps (of one table, or one row), oldest refusal first."""
    query = sa.select(set_aside).where(set_aside.c.app.in_(apps)).order_by(set_aside.c.at)
    if table is not None:
        query = query.where(set_aside.c.table_name == table)
    if key is not None:
        query = query.where(set_aside.c.row_key == key)
    found: dict[RecordKey, SetAside] = {}
    for row in conn.execute(query).mappings():
        record = SetAside(
            row["app"],
            row["table_name"],
            row["row_key"],
            row["rule"],
            row["code"],
            row["moment"],
            row["until"],
            row["message"],
            row["at"],
            row["details"],
        )
        found[(record.app, record.table, record.key, record.rule)] = record
    return found


def write_set_aside(conn: Connection, record: SetAside, *, message: str, at: datetime) -> None:
    """Record a refused row (or renew its record after another refusal), its details too."""
    values = {
        "app": record.app,
        "table_name": record.table,
        "row_key": record.key,
        "rule": record.rule,
        "code": record.code,
        "message": message,
        "moment": record.moment,
        "at": at,
        "until": record.until,
        "details": dict(record.details) if record.details else None,
    }
    renewed = ("code", "message", "moment", "at", "until", "details")
    statement = insert(set_aside).values(values)
    conn.execute(
        statement.on_conflict_do_update(
            index_elements=["app", "table_name", "row_key", "rule"],
            set_={k: statement.excluded[k] for k in renewed},
        )
    )


def drop_set_aside(conn: Connection, app: str, table: str, key: str, rule: int) -> None:
    """Forget a row's record: it moved."""
    conn.execute(
        sa.delete(set_aside).where(
            set_aside.c.app == app,
            set_aside.c.table_name == table,
            set_aside.c.row_key == key,
            set_aside.c.rule == rule,
        )
    )


def drop_left_from(
    conn: Connection, app: str, table: sa.Table, key: str, rule: int, state: str, from_: str
) -> int:
    """Forget the records of a rule's rows that have left `from`: they are never tried again."""
    still = sa.select(sa.literal(1)).where(
        sa.cast(table.c[key], sa.Text) == set_aside.c.row_key, table.c[state] == from_
    )
    gone = conn.execute(
        sa.delete(set_aside).where(
            set_aside.c.app == app,
            set_aside.c.table_name == table.name,
            set_aside.c.rule == rule,
            ~sa.exists(still),
        )
    )
    return gone.rowcount or 0


def sets_aside(error: AdminiumError) -> bool:
    """Whether a refusal sets the row aside: all but another writer holding it
    (WRITE_CONFLICT, or a *_BUSY lock), which is tried again the next minute."""
    return not (error.code == "WRITE_CONFLICT" or error.code.endswith("_BUSY"))


def set_aside_row(
    conn: Connection,
    *,
    connection: str,
    app: str,
    table: str,
    key: object,
    rule: int,
    moment: datetime,
    error: AdminiumError,
    now: datetime,
) -> SetAside:
    """Record a refused row for an hour (renewing any record) with the refusal's details, keep
    the refused attempt for the row's history and the clock's log, and log the spec's words
    (and the linked row that refused, if one did)."""
    details = refusal_details(error)
    until = now + SET_ASIDE_FOR
    record = SetAside(
        app, table, str(key), rule, error.code, moment, until, error.message, now, details
    )
    write_set_aside(conn, record, message=error.message, at=now)
    attempt = RefusedAttempt(
        app, table, str(key), rule, error.code, error.message, details, moment, now, until
    )
    keep_refused(conn, attempt)
    linked = refused_by(details)
    log.warning(
        "%s: connection=%s table=%s key=%s rule=%s code=%s%s",
        REFUSED_WORDS,
        connection,
        f"{app}.{table}",
        key,
        rule,
        error.code,
        f" refused by {linked}" if linked else "",
    )
    return record
