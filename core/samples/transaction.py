"""A store held on one connection inside one transaction: a sample set is added in it
whole (committed at the end, or rolled back whole when a row is refused), and a sample's
preview adds it there and rolls it back."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.engine import Connection


class OneTransaction:
    """An engine stand-in over one connection held inside a transaction its caller ends:
    each `begin()` is a savepoint of it, each `connect()` that same connection."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        yield self.conn

    @contextmanager
    def begin(self) -> Iterator[Connection]:
        with self.conn.begin_nested():
            yield self.conn
