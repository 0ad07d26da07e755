"""The sweep's fence: one sweep per connection at a time, however many servers run.

The fence is a session-level PostgreSQL advisory lock in the connection's own database,
held on a session of its own for the whole sweep. The database lets it go when that
session ends, so a worker killed mid-sweep never leaves it held. While the session
answers with the backend it started on, the lock is still held.
"""

from __future__ import annotations

import logging

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

log = logging.getLogger(__name__)

_KEY = "hashtextextended('adminium sweep ' || :name, 0)"


class Fence:
    """The advisory lock `adminium sweep <connection>` on a dedicated session."""

    def __init__(self, engine: Engine, connection: str) -> None:
        self.engine = engine
        self.connection = connection
        self._session: Connection | None = None
        self._backend: int | None = None

    def acquire(self) -> bool:
        """Take the fence if no other sweep of the connection holds it; False otherwise."""
        session = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        try:
            got = session.execute(
                sa.text(f"SELECT pg_try_advisory_lock({_KEY}), pg_backend_pid()"),
                {"name": self.connection},
            ).one()
        except BaseException:
            session.close()
            raise
        if not got[0]:
            session.close()
            return False
        self._session, self._backend = session, int(got[1])
        return True

    def held(self) -> bool:
        """Whether the fence is still held: its session answers from the same backend."""
        if self._session is None:
            return False
        try:
            backend = self._session.execute(sa.text("SELECT pg_backend_pid()")).scalar_one()
        except sa.exc.DBAPIError:
            log.warning("sweep fence of connection %s lost: its session ended", self.connection)
            return False
        return int(backend) == self._backend

    def release(self) -> None:
        """Let the fence go (a dead session has let it go already)."""
        session, self._session = self._session, None
        if session is None:
            return
        try:
            session.execute(
                sa.text(f"SELECT pg_advisory_unlock({_KEY})"), {"name": self.connection}
            )
        except sa.exc.DBAPIError:
            session.invalidate()
        finally:
            session.close()
