"""The audit entry every write leaves, in the same statement as the write (its table is
`core.store.schema.audit`), and who moved a row last, as the audit says."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import distinct_on
from sqlalchemy.engine import Connection

from core.store.schema import audit


def write_and_audit(
    table: sa.Table,
    key_column: str,
    key: Any,
    changes: Mapping[str, Any],
    entry: Mapping[str, Any],
    *,
    with_id: bool = False,
) -> tuple[sa.Select[Any], dict[str, Any]]:
    """One statement and its parameters: write the row (key None: insert) and audit it.

    The row before is read in the same snapshot as the update, and the row after is the
    one the database returns, both as JSON: one round trip makes the write and its audit
    entry. The statement is built once per shape and reused with new parameters. With
    `with_id`, the entry's id follows the row's columns (as `AUDIT_ID`), so a write that
    changes the row again before its commit (its totals) can make `after` say so.
    """
    shape = (tuple(changes), tuple(entry), with_id)
    statement = _statement(table, key_column, key is None, *shape)
    params = {f"v_{name}": value for name, value in changes.items()}
    params.update({f"a_{name}": value for name, value in entry.items()})
    if key is not None:
        params["k_key"] = key
    return statement, params


@functools.lru_cache(maxsize=512)
def _statement(
    table: sa.Table,
    key_column: str,
    creating: bool,
    columns: tuple[str, ...],
    entry: tuple[str, ...],
    with_id: bool = False,
) -> sa.Select[Any]:
    """The write-and-audit statement for one shape of write, with bound parameters."""
    values = {name: sa.bindparam(f"v_{name}", type_=table.c[name].type) for name in columns}
    before: Any
    if creating:
        written = sa.insert(table).values(values).returning(*table.c).cte("written")
        before = sa.null()
    else:
        key = sa.bindparam("k_key", type_=table.c[key_column].type)
        held = table.alias("held")
        before = (
            sa.select(sa.func.to_jsonb(held.table_valued()))
            .where(held.c[key_column] == key)
            .scalar_subquery()
        )
        written = (
            sa.update(table)
            .where(table.c[key_column] == key)
            .values(values)
            .returning(*table.c)
            .cte("written")
        )
    audited_values = sa.select(
        *(sa.bindparam(f"a_{name}", type_=audit.c[name].type).label(name) for name in entry),
        sa.cast(written.c[key_column], sa.Text).label("row_key"),
        before.label("before"),
        sa.func.to_jsonb(written.table_valued()).label("after"),
    )
    audited_insert = sa.insert(audit).from_select(
        [*entry, "row_key", "before", "after"], audited_values
    )
    if not with_id:  # RETURNING would need SELECT on the audit table, which a role may lack
        return sa.select(*written.c).add_cte(audited_insert.cte("audited"))
    audited = audited_insert.returning(audit.c.id).cte("audited")
    entry_id = sa.select(audited.c.id).scalar_subquery().label(AUDIT_ID)
    return sa.select(*written.c, entry_id).add_cte(audited)


AUDIT_ID = "adminium audit id"
"""The label of the audit entry's id in a write-and-audit statement `with_id`."""


def settle_after(parent: sa.Table, key_column: str) -> sa.Update:
    """The statement that makes audit entries' `after` the row as it is now (executemany
    with `a_id` and `p_key`): a write whose totals were recomputed after its entry."""
    row = parent.alias("settled")
    return (
        sa.update(audit)
        .where(audit.c.id == sa.bindparam("a_id"))
        .where(row.c[key_column] == sa.bindparam("p_key", type_=parent.c[key_column].type))
        .where(sa.cast(row.c[key_column], sa.Text) == audit.c.row_key)
        .values(after=sa.func.to_jsonb(row.table_valued()))
    )


def audit_entry(
    *,
    at: datetime,
    actor: str,
    actor_kind: str,
    app: str,
    table: str,
    move_from: str | None,
    move_to: str | None,
    cause: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The audit columns a write knows before it is made; `cause` for a row an effect moved."""
    entry = {
        "at": at,
        "actor": actor,
        "actor_kind": actor_kind,
        "app": app,
        "table_name": table,
        "move_from": move_from,
        "move_to": move_to,
    }
    if cause is not None:
        entry["cause"] = dict(cause)
    return entry


@dataclass(frozen=True)
class LastMove:
    """The last move of a row's state in its audit: who made it, when, from and to, and the
    row as that write left it (a timed move's `set` values are read from it)."""

    key: str
    at: datetime
    actor: str
    actor_kind: str
    move_from: str
    move_to: str
    after: Mapping[str, Any]


def last_moves(conn: Connection, app: str, table: str, keys: Sequence[str]) -> dict[str, LastMove]:
    """Each row's last move of its state (not its creation), by key as text, in one read
    served by the audit's row index."""
    if not keys:
        return {}
    query = (
        sa.select(
            audit.c.row_key,
            audit.c.at,
            audit.c.actor,
            audit.c.actor_kind,
            audit.c.move_from,
            audit.c.move_to,
            audit.c.after,
        )
        .where(
            audit.c.app == app,
            audit.c.table_name == table,
            audit.c.row_key.in_(list(dict.fromkeys(keys))),
            audit.c.move_from.is_not(None),
            audit.c.move_to.is_not(None),
        )
        .ext(distinct_on(audit.c.row_key))
        .order_by(audit.c.row_key, audit.c.id.desc())
    )
    return {
        row.row_key: LastMove(
            row.row_key,
            row.at,
            row.actor,
            row.actor_kind,
            row.move_from,
            row.move_to,
            row.after or {},
        )
        for row in conn.execute(query)
    }
