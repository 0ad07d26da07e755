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
from core.sweep.fence import LET_GO_SQL, TAKE_SQL, Fence, autocommit, take_and_let_go_when
from core.sweep.report import SweepOutcome

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


_CALM_READ = "(SELECT NOT (calm.aside OR calm.due) FROM calm)"
"""Whether the minute is calm, read of the opening statement's CTE `calm`: no row of the
apps set aside and no row a candidate of their search (`core.sweep.idle`)."""


def _open_fenced(fingerprints: bool, candidates: tuple[Any, ...] = ()) -> sa.Select[Any]:
    """The fence taken (`TAKE_SQL`) and, only when it was, the connection's records of
    sweeps that went away closed and the minute's record opened: one statement, made once
    (its values are parameters: `record_connection`, `record_at`, and the fence's); with
    `fingerprints`, the apps' catalogue fingerprints read beside (`record_catalogue`).

    With `candidates` (one EXISTS per stream of the apps' search, `core.sweep.idle`), the
    statement also tells whether the minute is calm: no row a candidate and none of the
    apps' rows set aside, so the search would find nothing. A calm minute is done in this
    one statement: its record is written closed (`done`, nothing counted, `took_ms` the
    sweep's time until it sent the statement, `record_took_ms`, and the statement's own)
    and its fence let go of as it is taken; a minute that is not calm opens as before."""
    connection = sa.bindparam("record_connection", type_=sa.Text)
    # Whether the apps have rows set aside: when none, the sweep need not read them.
    aside = sa.exists().where(set_aside.c.app.in_(sa.bindparam("record_apps", expanding=True)))
    calm: sa.CTE | None = None
    if candidates:
        due = sa.or_(*candidates)
        calm = sa.select(aside.label("aside"), due.label("due")).cte("calm")
        take = take_and_let_go_when(_CALM_READ)
        is_calm: sa.ColumnElement[Any] = sa.select(~(calm.c.aside | calm.c.due)).scalar_subquery()
    else:
        take, is_calm = TAKE_SQL, sa.false()
    taken = sa.text(take).columns(sa.column("token")).cte("taken")
    took = sa.select(taken.c.token).exists()
    gone = close_gone(connection).where(took).returning(sweeps.c.id).cte("gone")
    values = _opening(connection, sa.bindparam("record_at", type_=sweeps.c.at.type))
    if calm is not None:
        # The statement's own time, added to what the sweep took before it sent it.
        own = sa.extract("epoch", sa.func.clock_timestamp() - sa.func.statement_timestamp())
        took_ms = sa.bindparam("record_took_ms", type_=sa.Float) + own * 1000
        values["outcome"] = sa.case((is_calm, SweepOutcome.done.value), else_=RUNNING)
        values["took_ms"] = sa.case((is_calm, took_ms), else_=sa.literal(0.0, sa.Float))
    row = sa.select(
        *(
            value if isinstance(value, sa.ColumnElement) else sa.literal(value, sweeps.c[name].type)
            for name, value in values.items()
        )
    ).where(took)
    opened = sa.insert(sweeps).from_select(list(values), row).returning(sweeps.c.id).cte("opened")
    # Each app's tables' catalogue fingerprint, read beside: the comparison of an app with
    # its tables runs again only when it moves (`services.agreement`), at no round trip.
    # Asked for one minute in five: the other minutes' statement leaves it out, for its
    # plan is most of the statement's (planned at each run through a pooler, which
    # prepares nothing: 1.0 ms with it, 0.3 without, docs/operations.md).
    catalogue = fingerprints_read("record_catalogue").columns(sa.column("fingerprints", JSONB))
    read = catalogue.scalar_subquery() if fingerprints else sa.null()
    # Every data-modifying WITH runs, read or not; `taken` is read by the others, and
    # `calm` (named first: `taken` reads it) by `taken` and `opened`.
    opening = sa.select(
        sa.select(opened.c.id).scalar_subquery(),
        sa.select(calm.c.aside).scalar_subquery() if calm is not None else aside,
        read,
        is_calm,
    ).where(_unhurried())
    if calm is not None:
        opening = opening.add_cte(calm)
    return opening.add_cte(gone)


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
    catalogue fingerprint (`core.agreement.catalogue`) of those asked for; `calm`, whether
    the statement found nothing to do and so wrote the record closed and let go of the
    fence (asked with `candidates`)."""

    record_id: int
    set_aside: bool
    fingerprints: Mapping[str, str] = field(default_factory=dict)
    beside: tuple[Any, ...] = ()
    """The values of the columns asked beside (`core.sweep.idle`), in their order."""
    calm: bool = False


_OPENINGS: dict[tuple[Any, ...], sa.Select[Any]] = {}
_OPENINGS_KEPT = 2000
"""How many opening statements with candidates and beside columns are kept made (one per
connection's set of apps: `core.sweep.idle` makes its columns once)."""


def _opening_with(
    fingerprints: bool, candidates: tuple[Any, ...], beside: tuple[Any, ...]
) -> sa.Select[Any]:
    """The opening statement with these candidates and these columns read beside, made once
    for them (its cache key then worked out once)."""
    if not candidates and not beside:
        return _OPEN_FENCED[fingerprints]
    key = (fingerprints, *(id(c) for c in candidates), None, *(id(c) for c in beside))
    found = _OPENINGS.get(key)
    if found is None:
        if len(_OPENINGS) >= _OPENINGS_KEPT:
            _OPENINGS.clear()
        # Without candidates the opening is the one made once (`_OPEN_FENCED`), not a copy.
        opening = (
            _open_fenced(fingerprints, candidates) if candidates else _OPEN_FENCED[fingerprints]
        )
        found = _OPENINGS[key] = opening.add_columns(*beside) if beside else opening
    return found


def open_fenced(
    conn: Connection,
    fence: Fence,
    at: datetime,
    apps: Sequence[str],
    catalogue: Mapping[str, Sequence[str]] | None = None,
    candidates: Sequence[Any] = (),
    beside: Sequence[Any] = (),
    params: Mapping[str, Any] | None = None,
    took_ms: float = 0.0,
) -> Opened | None:
    """Take the fence and record the sweep's minute as it starts, in one autocommitted
    statement (one round trip): the record, or None when another sweep's lease runs
    (nothing written; `fence.turned_away_by` says who). The connection's records of sweeps
    that went away are closed by it too, only when the fence was taken. `catalogue` names
    each app's tables (`core.agreement.catalogue.qualified`) whose fingerprint is read;
    `candidates`, the EXISTS of each stream of the apps' search: when none holds and no row
    is set aside, the minute is calm and done in this statement (`Opened.calm`: the record
    closed, `took_ms` the sweep's time so far, and the fence let go of); `beside`, scalar
    columns read in the same statement (`Opened.beside`); `params`, the parameters of
    both (the statement is made once for the same columns)."""
    statement_params = {
        **fence.take_params,
        **(params or {}),
        "record_connection": fence.connection,
        "record_at": at,
        "record_apps": list(apps),
    }
    if candidates:
        statement_params["record_took_ms"] = took_ms
    if catalogue is not None:
        statement_params["record_catalogue"] = json.dumps(
            {app: list(t) for app, t in catalogue.items()}
        )
    opening = _opening_with(catalogue is not None, tuple(candidates), tuple(beside))

    def take() -> Opened | None:
        record_id, aside, fingerprints, calm, *values = conn.execute(
            opening, statement_params
        ).one()
        if record_id is None:
            return None
        return Opened(
            int(record_id), bool(aside), dict(fingerprints or {}), tuple(values), bool(calm)
        )

    opened = fence.take_with(conn, take)
    if opened is not None and opened.calm:
        fence.taken = False
    return opened


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
