"""A due row's timed move, tried as the clock in its own transaction through the pipeline:
moved, its set-aside record goes; refused, it is set aside for an hour (unless another writer
holds it). The sweep tries each due row so, and an operator's *Try again now* one row."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Connection

from core.basics.errors import AdminiumError, RowNotDue
from core.store.set_aside import (
    RecordKey,
    SetAside,
    drop_left_from,
    drop_set_aside,
    set_aside_row,
    sets_aside,
)
from core.store.store import Store
from core.sweep.due_streams import Rule, timed_rules
from core.time.moments import Tables
from core.writes.pipeline import WriteResult, make_timed_move


@dataclass(frozen=True)
class Attempt:
    """One timed move tried: moved (`result`), refused (`refused`), or neither: the row was
    moved or re-dated since it was found, and is left as it is."""

    result: WriteResult | None = None
    refused: AdminiumError | None = None


def try_timed_move(
    rule: Rule,
    key: Any,
    moment: datetime,
    *,
    connection: str,
    now: datetime,
    tables: Tables | None = None,
    conn: Connection | None = None,
    record: SetAside | None = None,
) -> Attempt:
    """A row's timed move made now as the clock, in its own transaction (on `conn` when
    given): moved, its set-aside record goes; refused, it is set aside (unless another
    writer holds it) with the spec's words in the log."""
    try:
        result = make_timed_move(
            rule.store, rule.table, key, rule.timed, now=now, tables=tables, conn=conn
        )
    except RowNotDue:
        return Attempt()
    except AdminiumError as error:
        if sets_aside(error):
            with rule.store.transaction(conn) as held:
                set_aside_row(
                    held,
                    connection=connection,
                    app=rule.app,
                    table=rule.table,
                    key=key,
                    rule=rule.number,
                    moment=moment,
                    error=error,
                    now=now,
                )
        return Attempt(refused=error)
    if record is not None:
        with rule.store.transaction(conn) as held:
            drop_set_aside(held, rule.app, rule.table, str(key), rule.number)
    return Attempt(result=result)


def forget_left_from(
    conn: Connection, stores: Sequence[Store], records: Mapping[RecordKey, SetAside]
) -> None:
    """Drop the set-aside records of rows that left `from`: they are never tried again."""
    kept = {(app, table, rule) for app, table, _, rule in records}
    for store in stores:
        for rule in timed_rules(store):
            if (rule.app, rule.table, rule.number) in kept:
                drop_left_from(
                    conn,
                    rule.app,
                    store.table(rule.table),
                    rule.key_column,
                    rule.number,
                    rule.state_column,
                    rule.timed.from_,
                )
    conn.commit()
