"""One app's fault stops only that app: the boundary each app of a connection is swept in.

A sweep reads and writes several apps on one connection. When a statement of one app fails
while the connection still answers (a column or table the manifest names and the database
lacks, a type that does not fit, a privilege missing, a value the app's code cannot read),
that is the app's fault: it is recorded for the app (`AppFault`, in the minute's record and
the log, naming the app and the sentence), the app is left alone for the rest of the
minute, and the other apps are swept as usual. Only the connection's own failures stop the
whole minute: the database gone away (a lost session, a server shutting down, out of
resources), or Adminium's own tables missing (`adminium_missing`).

Work done for several apps at once (one search, one transaction) is tried together first,
so a healthy minute costs what it did; only when it fails is it tried again one app at a
time, each alone, to find whose fault it was (`AppBoundaries.together`).

Another check may put an app out of the minute before its work starts (the manifest
compared with its tables): it calls `AppBoundaries.fault` with its sentence.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.store.schema import ADMINIUM_SCHEMA
from core.store.store import Store

log = logging.getLogger(__name__)
T = TypeVar("T")

_CONNECTION_CLASSES = ("08", "53", "57", "58", "XX")
"""SQLSTATE classes that are the connection's, never one app's: connection exceptions,
insufficient resources, operator intervention (a shutdown; a statement cancelled by its
timeout is the app's), system and internal errors."""
_NO_TABLE, _NO_SCHEMA, _NO_COLUMN, _CANCELLED = "42P01", "3F000", "42703", "57014"


@dataclass(frozen=True)
class AppFault:
    """Why one app of a connection was not swept (further) this minute: the sentence, what
    the sweep was doing, and how many of its due rows were found and not tried."""

    app: str
    error: str
    during: str
    left: int = 0

    def record(self) -> dict[str, object]:
        """As the minute's record keeps it (`adminium.sweeps.faults`, by app)."""
        return {"error": self.error, "during": self.during, "left": self.left}


def first_line(error: BaseException) -> str:
    """What the database (or the error) said, without the SQL."""
    if isinstance(error, sa.exc.DBAPIError):
        text = str(error.orig or error).strip()
    else:
        text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _sqlstate(error: BaseException) -> str:
    return str(getattr(getattr(error, "orig", None), "sqlstate", None) or "")


def adminium_missing(connection: str, error: BaseException) -> str | None:
    """The sentence for a database that lacks Adminium's own schema or one of its tables
    (the sweep cannot even record its minute), or None when that is not what failed."""
    state = _sqlstate(error)
    said = first_line(error)
    if state == _NO_SCHEMA and f'"{ADMINIUM_SCHEMA}"' in said:
        what = f'it has no schema "{ADMINIUM_SCHEMA}"'
    elif state == _NO_TABLE and f'"{ADMINIUM_SCHEMA}.' in said:
        what = said
    else:
        return None
    return (
        f"the database of connection {connection} lacks Adminium's own tables ({what}),"
        " where the audit, the rows set aside and each minute's sweep are kept:"
        " `adminium run` makes them as it starts (so does `adminium app add"
        f" {connection} FILE --replace`); the connection's database user needs CREATE on"
        f' the database for that, or the schema "{ADMINIUM_SCHEMA}" made for it by the'
        f" database's owner (`adminium connection check {connection}` says what it lacks)"
    )


def is_connections(error: BaseException) -> bool:
    """Whether an error is the connection's (the minute stops) rather than one app's."""
    if isinstance(error, sa.exc.DBAPIError):
        if error.connection_invalidated:
            return True
        state = _sqlstate(error)
        if state == _CANCELLED:
            return False  # that statement ran past its timeout: the session still answers
        return not state or state.startswith(_CONNECTION_CLASSES)
    # SQLAlchemy's own state errors (a closed or invalid connection); a value that could
    # not be bound (StatementError) is the app's.
    return isinstance(error, sa.exc.SQLAlchemyError) and not isinstance(
        error, sa.exc.StatementError
    )


def fault_words(error: BaseException) -> str:
    """The sentence an app's fault is recorded with: what failed, and what it means."""
    said = first_line(error)
    state = _sqlstate(error)
    if state in (_NO_TABLE, _NO_COLUMN):
        return (
            f"{said}: the app's manifest names what its tables lack, so its timed moves wait"
            " until the two agree"
        )
    if state == "42501":
        return f"{said}: the connection's database user may not read or write the app's tables"
    if isinstance(error, sa.exc.DBAPIError):
        return said
    return f"{type(error).__name__}: {said}"


@dataclass
class AppBoundaries:
    """The apps of one sweep that faulted this minute, and the boundary each app runs in."""

    connection: str
    faults: dict[str, AppFault] = field(default_factory=dict)

    def healthy(self, stores: Sequence[Store]) -> list[Store]:
        """The stores whose app has not faulted this minute."""
        return [store for store in stores if store.app.name not in self.faults]

    def fault(self, app: str, error: str, during: str) -> AppFault:
        """Put an app out of the rest of the minute, with its sentence (the first fault
        stands); logged once, naming the connection, the app and the sentence."""
        if app not in self.faults:
            self.faults[app] = AppFault(app, error, during)
            log.error(
                "sweep of connection %s: app %s stopped this minute while %s: %s;"
                " the connection's other apps are swept on",
                self.connection,
                app,
                during,
                error,
            )
        return self.faults[app]

    def left_behind(self, app: str, count: int = 1) -> None:
        """Count a due row of a faulted app that was not tried."""
        found = self.faults[app]
        self.faults[app] = AppFault(found.app, found.error, found.during, found.left + count)

    @contextmanager
    def guard(self, conn: Connection, store: Store, during: str) -> Iterator[None]:
        """Run one app's work: an error that is the app's (the connection still answers)
        is rolled back and recorded as its fault, and the block ends; the connection's own
        errors go on up and stop the minute."""
        try:
            yield
        except Exception as error:
            self._caught(conn, store, during, error)

    def _caught(self, conn: Connection, store: Store, during: str, error: Exception) -> None:
        """An error of `store`'s work: the connection's raised again, the app's rolled back
        and recorded as its fault."""
        if is_connections(error) or conn.invalidated:
            raise error
        try:
            conn.rollback()
        except sa.exc.SQLAlchemyError:
            raise error from None
        if not isinstance(error, sa.exc.SQLAlchemyError):
            log.warning("app %s faulted while %s", store.app.name, during, exc_info=error)
        self.fault(store.app.name, fault_words(error), during)

    def each(
        self, conn: Connection, stores: Sequence[Store], during: str, work: Callable[[Store], T]
    ) -> list[T]:
        """`work` for each healthy store, each in its own boundary; the answers of those
        that did not fault."""
        found: list[T] = []
        for store in self.healthy(stores):
            with self.guard(conn, store, during):
                found.append(work(store))
        return found

    def together(
        self,
        conn: Connection,
        stores: Sequence[Store],
        during: str,
        work: Callable[[Sequence[Store]], T],
    ) -> list[T]:
        """`work` for every healthy store at once (what a healthy minute costs); when it
        fails with an app's error (whose, the error may not say: one statement may read
        several apps), rolled back and tried again for each store alone, each in its own
        boundary. The answers: one, or one per store that did not fault."""
        healthy = self.healthy(stores)
        if len(healthy) <= 1:
            return self.each(conn, healthy, during, lambda store: work([store]))
        try:
            return [work(healthy)]
        except Exception as error:
            if is_connections(error) or conn.invalidated:
                raise
            try:
                conn.rollback()
            except sa.exc.SQLAlchemyError:
                raise error from None
            log.info(
                "sweep of connection %s: %s failed for its apps together (%s); each alone now",
                self.connection,
                during,
                first_line(error),
            )
        return self.each(conn, healthy, during, lambda store: work([store]))
