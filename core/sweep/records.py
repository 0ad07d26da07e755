"""Each minute's sweep of a connection, recorded in the connection's database.

Its table is `core.store.schema.sweeps`, which `install_app` makes with the audit table
(schema `adminium`), idempotently.

A sweep records its minute as it starts (outcome `running`, with the audit's last id) and
closes the record when it ends. A record still running when the next sweep of its
connection takes the fence belongs to a sweep that went away (its worker killed, or frozen
past its lease): that sweep closes it as `stopped`, "the worker went away", with the moves
it made counted from the audit (the clock's moves stamped with its minute since that id),
so "Moved in the last hour" and the table count them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Connection

from core.agreement.catalogue import fingerprints_read
from core.basics.actors import ActorKind
from core.store.schema import (
    RUNNING,
    audit,
    set_aside,
    sweeps,
)
from core.sweep.fence import LET_GO_SQL, TAKE_SQL, Fence, autocommit

STOPPED = "stopped"
WENT_AWAY = "the worker went away"
"""The error of a record that was still running when the next sweep took the fence."""


def write_sweep(conn: Connection, values: Mapping[str, Any]) -> None:
    """Record one minute's sweep of a connection."""
    conn.execute(sa.insert(sweeps).values(dict(values)))


def moves_since_start(record: sa.FromClause | sa.Table = sweeps) -> sa.ScalarSelect[Any]:
    """The timed moves a sweep's record made so far, read from the audit: the clock's
    entries stamped with the sweep's minute after the audit id it started at (a row that an
    effect moved has a cause, a give-back no move)."""
    return (
        sa.select(sa.func.count())
        .select_from(audit)
        .where(
            audit.c.id > record.c.audit_from,
            audit.c.at == record.c.at,
            audit.c.actor_kind == ActorKind.clock.value,
            audit.c.cause.is_(None),
            audit.c.move_to.is_not(None),
        )
        .scalar_subquery()
    )


def close_gone(connection: str | sa.BindParameter[str]) -> sa.Update:
    """The statement closing the connection's records still running: their sweeps went
    away (the caller holds the fence). Stopped, "the worker went away", moves counted."""
    return (
        sa.update(sweeps)
        .where(sweeps.c.connection == connection, sweeps.c.outcome == RUNNING)
        .values(outcome=STOPPED, error=WENT_AWAY, moved=moves_since_start())
    )


def _opening(connection: Any, at: Any) -> dict[str, Any]:
    """A sweep's record as it starts: running, nothing counted yet, from the audit's last id."""
    return {
        "connection": connection,
        "at": at,
        "outcome": RUNNING,
        "moved": 0,
        "set_aside": 0,
        "conflicts": 0,
        "passed_by": 0,
        "left_alone": 0,
        "refused": {},
        "took_ms": 0.0,
        "audit_from": sa.select(sa.func.coalesce(sa.func.max(audit.c.id), 0)).scalar_subquery(),
    }


def open_sweep(conn: Connection, connection: str, at: datetime) -> int:
    """Record a sweep's minute as it starts (running, nothing counted yet); its id. The
    connection's records of sweeps that went away are closed in the same statement."""
    gone = close_gone(connection).returning(sweeps.c.id).cte("gone")
    # PostgreSQL runs a data-modifying WITH whether or not the statement reads it.
    opened = sa.insert(sweeps).values(_opening(connection, at)).returning(sweeps.c.id).add_cte(gone)
    return int(conn.execute(opened).scalar_one())


def _unhurried() -> sa.ColumnElement[bool]:
    """A condition that is always true and, on the way, lets its statement's transaction
    commit without waiting for the disk (`synchronous_commit` off for that transaction
    alone, as SET LOCAL would; nothing is left set on the session, so it holds through a
    pooler's transaction mode).

    Safe for the sweep's bookkeeping and for nothing else: the fence's row is UNLOGGED
    (lost in a crash whatever the setting), and a sweep's record is worth no more than a
    crash's last fraction of a second. PostgreSQL writes its log in order, so any later
    commit that waits for the disk (every move does) takes the record there with it: a
    crash loses an opening record only when no move followed it, and a closing one leaves
    the record running, which the next sweep closes as `stopped` with its moves counted
    from the audit. A move's own commit is never made so."""
    setting = sa.func.set_config("synchronous_commit", "off", sa.true())
    return sa.select(setting).scalar_subquery().is_not(None)


def _open_fenced(fingerprints: bool) -> sa.Select[Any]:
    """The fence taken (`TAKE_SQL`) and, only when it was, the connection's records of
    sweeps that went away closed and the minute's record opened: one statement, made once
    (its values are parameters: `record_connection`, `record_at`, and the fence's); with
    `fingerprints`, the apps' catalogue fingerprints read beside (`record_catalogue`)."""
    taken = sa.text(TAKE_SQL).columns(sa.column("token")).cte("taken")
    took = sa.select(taken.c.token).exists()
    connection = sa.bindparam("record_connection", type_=sa.Text)
    gone = close_gone(connection).where(took).returning(sweeps.c.id).cte("gone")
    values = _opening(connection, sa.bindparam("record_at", type_=sweeps.c.at.type))
    row = sa.select(
        *(
            value if isinstance(value, sa.ColumnElement) else sa.literal(value, sweeps.c[name].type)
            for name, value in values.items()
        )
    ).where(took)
    opened = sa.insert(sweeps).from_select(list(values), row).returning(sweeps.c.id).cte("opened")
    # Whether the apps have rows set aside: when none, the sweep need not read them.
    aside = sa.exists().where(set_aside.c.app.in_(sa.bindparam("record_apps", expanding=True)))
    # Each app's tables' catalogue fingerprint, read beside: the comparison of an app with
    # its tables runs again only when it moves (`services.agreement`), at no round trip.
    # Asked for one minute in five: the other minutes' statement leaves it out, for its
    # plan is most of the statement's (planned at each run through a pooler, which
    # prepares nothing: 1.0 ms with it, 0.3 without, docs/operations.md).
    catalogue = fingerprints_read("record_catalogue").columns(sa.column("fingerprints", JSONB))
    read = catalogue.scalar_subquery() if fingerprints else sa.null()
    # Every data-modifying WITH runs, read or not; `taken` is read by the others.
    return (
        sa.select(sa.select(opened.c.id).scalar_subquery(), aside, read)
        .where(_unhurried())
        .add_cte(gone)
    )


_OPEN_FENCED = {asked: _open_fenced(asked) for asked in (False, True)}
"""The opening statement without the fingerprints and with them."""
_CLOSE_FENCED = (
    sa.update(sweeps)
    .where(sweeps.c.id == sa.bindparam("record_id"), _unhurried())
    .add_cte(sa.text(LET_GO_SQL).columns().cte("let_go"))
)
"""The record closed with the values given as parameters (named as its columns), and
the fence let go of (`LET_GO_SQL`): one statement, made once."""


@dataclass(frozen=True)
class Opened:
    """A sweep's record opened with its fence taken: its id, whether its apps had rows set
    aside as it started (none: the sweep need not read them), and each app's tables'
    catalogue fingerprint (`core.agreement.catalogue`) of those asked for."""

    record_id: int
    set_aside: bool
    fingerprints: Mapping[str, str] = field(default_factory=dict)
    beside: tuple[Any, ...] = ()
    """The values of the columns asked beside (`core.sweep.idle`), in their order."""


_BESIDE: dict[tuple[Any, ...], sa.Select[Any]] = {}
_BESIDE_KEPT = 2000
"""How many sets of beside columns keep their opening statement made (one per connection's
set of apps: `core.sweep.idle` makes its columns once)."""


def _with_beside(opening: sa.Select[Any], beside: tuple[Any, ...]) -> sa.Select[Any]:
    """The opening statement with these columns read beside, made once for them (its cache
    key then worked out once)."""
    key = (id(opening), *(id(column) for column in beside))
    found = _BESIDE.get(key)
    if found is None:
        if len(_BESIDE) >= _BESIDE_KEPT:
            _BESIDE.clear()
        found = _BESIDE[key] = opening.add_columns(*beside)
    return found


def open_fenced(
    conn: Connection,
    fence: Fence,
    at: datetime,
    apps: Sequence[str],
    catalogue: Mapping[str, Sequence[str]] | None = None,
    beside: Sequence[Any] = (),
    beside_params: Mapping[str, Any] | None = None,
) -> Opened | None:
    """Take the fence and record the sweep's minute as it starts, in one autocommitted
    statement (one round trip): the record, or None when another sweep's lease runs
    (nothing written; `fence.turned_away_by` says who). The connection's records of sweeps
    that went away are closed by it too, only when the fence was taken. `catalogue` names
    each app's tables (`core.agreement.catalogue.qualified`) whose fingerprint is read;
    `beside`, scalar columns read in the same statement (`Opened.beside`), with their
    parameters `beside_params` (the statement is made once for the same columns)."""
    params = {
        **fence.take_params,
        "record_connection": fence.connection,
        "record_at": at,
        "record_apps": list(apps),
    }
    if catalogue is not None:
        params["record_catalogue"] = json.dumps({app: list(t) for app, t in catalogue.items()})
    opening = _OPEN_FENCED[catalogue is not None]
    if beside:
        opening = _with_beside(opening, tuple(beside))
        params.update(beside_params or {})

    def take() -> Opened | None:
        record_id, aside, fingerprints, *values = conn.execute(opening, params).one()
        if record_id is None:
            return None
        return Opened(int(record_id), bool(aside), dict(fingerprints or {}), tuple(values))

    return fence.take_with(conn, take)


def close_fenced(conn: Connection, fence: Fence, record_id: int, values: Mapping[str, Any]) -> None:
    """Close a sweep's record with what it did and let its fence go, in one autocommitted
    statement (one round trip): no other sweep can take the fence while the record still
    says running. A lease run out or taken over is left as it is."""
    params = {**values, **fence.let_go_params, "record_id": record_id}
    with autocommit(conn):
        conn.execute(_CLOSE_FENCED, params)
    fence.taken = False


def close_sweep(conn: Connection, record_id: int, values: Mapping[str, Any]) -> None:
    """Close a sweep's record with what it did (the values `write_sweep` takes)."""
    conn.execute(sa.update(sweeps).where(sweeps.c.id == record_id).values(dict(values)))


def recent_sweeps(conn: Connection, connection: str, limit: int = 60) -> list[dict[str, Any]]:
    """A connection's latest sweep records, newest first (screens and the CLI read these)."""
    query = (
        sa.select(sweeps)
        .where(sweeps.c.connection == connection)
        .order_by(sweeps.c.at.desc(), sweeps.c.id.desc())
        .limit(limit)
    )
    return [dict(row) for row in conn.execute(query).mappings()]
