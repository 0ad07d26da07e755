"""Set-aside rows: the one home of the rule (DESIGN decision 5, the spec's "Set aside").

A timed move refused by anything but another writer is set aside: a record (table, row
key, rule number from 1, refusal code, the moment it was judged at, until = now + one
hour) and the spec's warning in the log. While the record holds, the sweep passes the row
by; a row whose moment has changed since is judged on its new moment; a row that left
`from` is never tried again. The sweep and the screens' "Try again now" both come here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import Connection

from core.audit import adminium_metadata
from core.errors import AdminiumError

log = logging.getLogger(__name__)

SET_ASIDE_FOR = timedelta(hours=1)
"""How long a refused row is left alone (spec: "left alone for an hour")."""

REFUSED_WORDS = "timed move refused; left alone for an hour"
"""The spec's words for a row set aside."""

set_aside = sa.Table(
    "set_aside",
    adminium_metadata,
    sa.Column("app", sa.Text, primary_key=True),
    sa.Column("table_name", sa.Text, primary_key=True),
    sa.Column("row_key", sa.Text, primary_key=True),
    sa.Column("rule", sa.Integer, primary_key=True),
    sa.Column("code", sa.Text, nullable=False),
    sa.Column("message", sa.Text, nullable=False, server_default=""),
    sa.Column("moment", sa.DateTime(timezone=True), nullable=False),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("until", sa.DateTime(timezone=True), nullable=False),
)
"""A refused timed move: its row, rule (from 1), code, the moment it was judged at, until."""


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
        )
        found[(record.app, record.table, record.key, record.rule)] = record
    return found


def write_set_aside(conn: Connection, record: SetAside, *, message: str, at: datetime) -> None:
    """Record a refused row (or renew its record after another refusal)."""
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
    }
    statement = insert(set_aside).values(values)
    conn.execute(
        statement.on_conflict_do_update(
            index_elements=["app", "table_name", "row_key", "rule"],
            set_={k: statement.excluded[k] for k in ("code", "message", "moment", "at", "until")},
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
    """Record a refused row for an hour (renewing any record) and log the spec's words."""
    record = SetAside(app, table, str(key), rule, error.code, moment, now + SET_ASIDE_FOR)
    write_set_aside(conn, record, message=error.message, at=now)
    log.warning(
        "%s: connection=%s table=%s key=%s rule=%s code=%s",
        REFUSED_WORDS,
        connection,
        f"{app}.{table}",
        key,
        rule,
        error.code,
    )
    return record
