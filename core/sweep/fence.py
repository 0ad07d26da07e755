"""The sweep's fence: one sweep per connection at a time, however many servers run.

The fence is a lease: a row of `adminium.fences` in the connection's own database, one per
connection, naming its holder (the worker's host and process) and running until `until`,
on the database's clock (one clock for every worker). A sweep takes it with one
statement that succeeds only when no lease runs (an upsert whose `WHERE` asks that the
row's `until` has passed); while moving, it renews the lease every second by a
conditional `UPDATE` of its own token whose row count it checks: 0 rows means the lease
ran out or another sweep took it over, and the sweep stops. A lease runs `LEASE` seconds
past its last renewal and never past the sweep's deadline, so a holder that is frozen
(SIGSTOP), cut off from PostgreSQL or killed loses it within `LEASE` seconds and at the
latest at its deadline: the next sweep of the connection takes over.

Every statement is one autocommitted statement on whatever server session a pooler gives
it: the fence holds through PgBouncer's transaction pooling, where a session-level
advisory lock is not kept (docs/operations.md, "Through PgBouncer"). The table is
UNLOGGED: a lease is worth nothing after a crash (every sweep's session is gone with it),
so it writes no WAL and its commits wait for no disk. Exactly once does not rest on the
fence: each move holds its row (`FOR UPDATE NOWAIT`) and re-reads it.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.store.install_lock import INSTALL_LOCK
from core.store.schema import ADMINIUM_SCHEMA, fences

log = logging.getLogger(__name__)
T = TypeVar("T")

LEASE = 10.0
"""Seconds a fence's lease runs past its last renewal (a sweep renews it every second
while it moves; never past the sweep's deadline)."""


_TABLE = f"{ADMINIUM_SCHEMA}.fences"
_LEASED = "t.now + make_interval(secs => least(:lease, :deadline))"


def take_sql(until: str = _LEASED) -> str:
    """The statement taking the fence (`TAKE_SQL`), its lease running `until` (an
    expression of `t.now`, the clock as it is taken)."""
    return f"""
    INSERT INTO {_TABLE} AS f (connection, holder, token, since, renewed, until, ends)
    SELECT :fence_connection, :holder, :token, t.now, t.now, {until},
           t.now + make_interval(secs => :deadline)
      FROM (SELECT clock_timestamp() AS now) AS t
    ON CONFLICT (connection) DO UPDATE
       SET holder = excluded.holder, token = excluded.token, since = excluded.since,
           renewed = excluded.renewed, until = excluded.until, ends = excluded.ends
     WHERE f.until <= clock_timestamp()
    RETURNING f.token
    """


TAKE_SQL = take_sql()
"""Take the fence unless another sweep's lease runs (a row returned: taken), with the
parameters `Fence.take_params`; a statement of its own, or a part of one (`WITH taken AS
(...)`, `core.sweep.records.open_fenced`)."""
_TAKE = sa.text(TAKE_SQL)


def take_and_let_go_when(condition: str) -> str:
    """`TAKE_SQL` whose lease ends as it is taken when `condition` (an SQL boolean read in
    the same statement) holds: taken and let go of at once, for a minute that has nothing
    to do; the lease runs as `TAKE_SQL`'s otherwise."""
    return take_sql(f"CASE WHEN {condition} THEN t.now ELSE {_LEASED} END")


_NO_TABLE = "42P01"
_HOLDER = sa.text(f"SELECT holder, since FROM {_TABLE} WHERE connection = :connection")
_RENEW = sa.text(
    f"""
    UPDATE {_TABLE}
       SET renewed = clock_timestamp(),
           until = least(clock_timestamp() + make_interval(secs => :lease), ends)
     WHERE connection = :connection AND token = :token AND until > clock_timestamp()
    """
)
LET_GO_SQL = (
    f"UPDATE {_TABLE} SET until = clock_timestamp()"
    " WHERE connection = :fence_connection AND token = :token AND until > clock_timestamp()"
)
"""Let the fence go if this sweep's lease still runs, with `Fence.let_go_params`; a
statement of its own, or a part of one (`core.sweep.records.close_fenced`)."""
_LET_GO = sa.text(LET_GO_SQL)


@contextmanager
def autocommit(conn: Connection) -> Iterator[None]:
    """Each statement in it commits by itself (autocommit: one round trip, no BEGIN or
    COMMIT of its own); `conn`, outside any transaction, is as it was after."""
    conn.execution_options(isolation_level="AUTOCOMMIT")
    try:
        yield
    except BaseException:
        # A session gone cannot be set back: the error raised is the one to tell.
        with suppress(sa.exc.SQLAlchemyError):
            conn.rollback()
            conn.execution_options(isolation_level=conn.default_isolation_level)
        raise
    conn.commit()  # ends SQLAlchemy's autobegun transaction: nothing is sent
    conn.execution_options(isolation_level=conn.default_isolation_level)


def worker_name() -> str:
    """This process as a fence names its holder: `worker <host>:<pid>`."""
    return f"worker {socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class Holder:
    """Who holds a connection's fence, and since when."""

    name: str
    since: datetime

    def sentence(self) -> str:
        """`fence held by worker host:4242 since 12:01:03Z`."""
        return f"fence held by {self.name} since {self.since.astimezone(UTC):%H:%M:%S}Z"


class Fence:
    """The lease `adminium.fences` of one connection, taken on the sweep's own session.

    `deadline` is the sweep's: the lease is never renewed past it. Each statement commits by itself.
    """

    def __init__(
        self, connection: str, *, deadline: float, lease: float = LEASE, holder: str = ""
    ) -> None:
        self.connection = connection
        self.deadline = deadline
        self.lease = lease
        self.holder = holder or worker_name()
        self.token = uuid.uuid4().hex
        self.taken = False
        self.turned_away_by: Holder | None = None
        """Who held the fence when `acquire` found it held (None when it was taken)."""

    @property
    def take_params(self) -> dict[str, Any]:
        """The parameters of `TAKE_SQL`."""
        return {
            "fence_connection": self.connection,
            "holder": self.holder,
            "token": self.token,
            "lease": self.lease,
            "deadline": self.deadline,
        }

    @property
    def let_go_params(self) -> dict[str, Any]:
        """The parameters of `LET_GO_SQL`."""
        return {"fence_connection": self.connection, "token": self.token}

    def acquire(self, conn: Connection) -> bool:
        """Take the fence unless another sweep's lease runs; False (and `turned_away_by`)
        otherwise."""
        self.take_with(conn, lambda: conn.execute(_TAKE, self.take_params).first())
        return self.taken

    def take_with(self, conn: Connection, take: Callable[[], T]) -> T:
        """Run `take`, one autocommitted statement holding `TAKE_SQL` whose answer is None
        when the fence was not taken (another sweep's lease runs: then `turned_away_by`
        is read); its answer. A database installed before the fence was a lease has its
        table made first."""
        try:
            with autocommit(conn):
                found = take()
        except sa.exc.ProgrammingError as error:
            if getattr(error.orig, "sqlstate", None) != _NO_TABLE:
                raise
            with conn.begin():
                conn.execute(INSTALL_LOCK)
                fences.create(conn, checkfirst=True)
            with autocommit(conn):
                found = take()
        self.taken = found is not None
        if not self.taken:
            with autocommit(conn):
                holder = conn.execute(_HOLDER, {"connection": self.connection}).first()
            # Let go of between the two statements: said as held by nobody known.
            self.turned_away_by = (
                Holder(str(holder[0]), holder[1])
                if holder is not None
                else Holder("another sweep", datetime.now(UTC))
            )
        return found

    def held(self, conn: Connection) -> bool:
        """Renew the lease; whether it was still this sweep's (False: it ran out, or
        another sweep took the fence over)."""
        if not self.taken:
            return False
        with autocommit(conn):
            renewed = conn.execute(
                _RENEW, {"connection": self.connection, "token": self.token, "lease": self.lease}
            ).rowcount
        if renewed != 1:
            self.taken = False
            log.warning(
                "sweep fence of connection %s lost: its lease ran out or another sweep took it",
                self.connection,
            )
        return renewed == 1

    def release(self, conn: Connection) -> None:
        """Let the fence go (a lease run out or taken over is left as it is)."""
        if not self.taken:
            return
        self.taken = False
        with autocommit(conn):
            conn.execute(_LET_GO, self.let_go_params)
