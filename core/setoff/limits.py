"""Limits: how many rows may count at once, per group (WHAT-A-MOVE-SETS-OFF.md "Limits").

A write that makes its row count (made counting, moved into a counted value, or its `per`
columns changed while it counts) is judged at step 4 of the pipeline: the writers of one
group queue on a transaction advisory lock keyed by the limit and the group (waited for
at most `BUSY_WAIT`; not taken: LIMIT_BUSY), then one query counts the group's rows. A
row in a held state whose hold's moment has passed does not count, by the clock: the
query returns the held rows' moment columns beside the others' count, and each is read
with the moment engine. Sample rows never count and are never refused.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.basics.actors import Actor, ActorKind
from core.basics.errors import LimitBusy, LimitReached
from core.ledgers.holds import hold_columns, hold_ended, is_held
from core.manifest.model import Limit, Table
from core.manifest.refs import SettingRef
from core.store.sample_marks import is_sample_row
from core.store.schema import sample_marks
from core.store.store import Store
from core.time.moments import Tables, read_setting

BUSY_WAIT = "2s"
"""How long a writer waits for the other writers of its group (PostgreSQL lock_timeout)."""

Row = Mapping[str, Any]
HELD, COUNT = "adminium held", "adminium count"
"""The count query's own labels: no manifest name (lower-case, no space) is either."""


def judge_limits(
    conn: Connection,
    store: Store,
    table: str,
    held: Row | None,
    after: Row,
    *,
    key: Any,
    actor: Actor,
    now: datetime,
) -> None:
    """Refuse a write that would make its row's group hold more counting rows than `max`."""
    spec = store.spec(table)
    if not spec.limits or actor.kind is ActorKind.sample:
        return
    judged = [limit for limit in spec.limits if _makes_count(spec, limit, held, after)]
    if not judged:
        return
    tables = store.read_clock_tables(conn, store.reads([spec.hold, *judged]).tables)
    hold = spec.hold
    if (
        hold is not None
        and is_held(spec, after)
        and hold_ended(hold, after, store.zone, tables, now)
    ):
        return  # its hold is over: it counts nowhere
    if key is not None and is_sample_row(conn, store.app.name, table, key):
        return
    # Fixed order, so two writers of two limits never wait on each other in a circle.
    for limit in sorted(judged, key=lambda found: found.name):
        group = {column: after.get(column) for column in limit.per}
        queue_for_group(conn, store, table, limit, group)
        most = _max(limit, tables)
        count = 1 + _count(conn, store, table, limit, group, key, tables, now)
        if most is None or count > most:
            raise LimitReached(
                f"the limit {limit.name} is reached: {count} rows would count"
                f" where {most or 0} may",
                {"limit": limit.name, "max": most, "count": count},
            )


def _counts(limit: Limit, row: Row | None) -> bool:
    return row is not None and row.get(limit.count.column) in limit.count.values


def _makes_count(spec: Table, limit: Limit, held: Row | None, after: Row) -> bool:
    """Whether the write makes the row count: made or moved into a counted value, or its
    group changed while it counts."""
    if not _counts(limit, after):
        return False
    if held is None or not _counts(limit, held):
        return True
    return any(held.get(column) != after.get(column) for column in limit.per)


def _max(limit: Limit, tables: Tables) -> int | None:
    """The limit's max: a whole number, or the setting's (no value: None, which leaves no room)."""
    value = read_setting(limit.max, tables) if isinstance(limit.max, SettingRef) else limit.max
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return None
    return int(value) if value >= 0 and float(value).is_integer() else None


def queue_for_group(conn: Connection, store: Store, table: str, limit: Limit, group: Row) -> None:
    """Wait for the group's advisory lock (held to the end of the transaction): tried at
    once, then waited for at most BUSY_WAIT; not taken: LIMIT_BUSY."""
    name = f"{store.app.schema_name}.{table}.{limit.name}:{_group_text(group)}"
    lock_key = sa.func.hashtextextended(sa.literal(name), 0)
    taken, before = conn.execute(
        sa.select(
            sa.func.pg_try_advisory_xact_lock(lock_key), sa.func.current_setting("lock_timeout")
        )
    ).one()
    if taken:
        return
    conn.execute(sa.select(sa.func.set_config("lock_timeout", BUSY_WAIT, True)))
    try:
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(lock_key)))
    except sa.exc.OperationalError as error:
        if getattr(error.orig, "sqlstate", None) != "55P03":
            raise
        raise LimitBusy(
            f"other writers hold the limit {limit.name} for this group; try again",
            {"limit": limit.name},
        ) from error
    conn.execute(sa.select(sa.func.set_config("lock_timeout", before, True)))


def _group_text(group: Row) -> str:
    """A group's values as one text, the same for equal values however they were written."""
    return json.dumps([_plain(group[column]) for column in sorted(group)])


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.timestamp()  # one instant, whatever its offset
    if isinstance(value, Decimal | float) and float(value).is_integer():
        return int(value)
    return value if isinstance(value, int | str | bool) or value is None else str(value)


def _count(
    conn: Connection,
    store: Store,
    table: str,
    limit: Limit,
    group: Row,
    key: Any,
    tables: Tables,
    now: datetime,
) -> int:
    """The rows besides this one counting in the group at `now`, in one query."""
    spec = store.spec(table)
    query = _count_query(store.table(table), spec, limit, tuple(sorted(group)), key is not None)
    params: dict[str, Any] = {f"g_{column}": value for column, value in group.items()}
    if key is not None:
        params["k_key"] = key
    params["s_app"], params["s_table"] = store.app.name, table
    count = 0
    for found in map(dict, conn.execute(query, params).mappings()):
        # A held row's hold over by the clock does not count: one row per held moment.
        if found[HELD] and spec.hold and hold_ended(spec.hold, found, store.zone, tables, now):
            continue
        count += found[COUNT]
    return count


def _count_query(
    table: sa.Table, spec: Table, limit: Limit, per: tuple[str, ...], has_key: bool
) -> sa.Select[Any]:
    """Counting rows of the group, not sample rows, by held or not and the held ones' moment
    columns: a group of many rows held to the same moment is one row of the answer."""
    where: list[Any] = [table.c[limit.count.column].in_(limit.count.values)]
    for column in per:
        value = sa.bindparam(f"g_{column}", type_=table.c[column].type)
        # `IS NOT DISTINCT FROM` would count empty groups together, but no index serves it.
        where.append(
            sa.or_(
                table.c[column] == value,
                sa.and_(value.is_(None), table.c[column].is_(None)),
            )
        )
    if has_key:
        where.append(table.c[spec.key] != sa.bindparam("k_key", type_=table.c[spec.key].type))
    marked = sa.select(sa.literal(1)).where(
        sample_marks.c.app == sa.bindparam("s_app"),
        sample_marks.c.table_name == sa.bindparam("s_table"),
        sample_marks.c.row_key == sa.cast(table.c[spec.key], sa.Text),
    )
    where.append(~sa.exists(marked))
    held: Any = sa.false()
    columns: list[Any] = []
    if spec.hold is not None and spec.states is not None:
        held = table.c[spec.states.column].in_(spec.hold.states)
        columns = [
            sa.case((held, table.c[name])).label(name) for name in hold_columns(spec.hold.until)
        ]
    # Grouped by position: the held test written twice would be two expressions to PostgreSQL.
    positions = [sa.text(str(number)) for number in range(1, len(columns) + 2)]
    return (
        sa.select(held.label(HELD), *columns, sa.func.count().label(COUNT))
        .where(*where)
        .group_by(*positions)
    )
