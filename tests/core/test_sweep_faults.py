"""Whose fault an error is: the connection's (the minute stops) or one app's (that app
stops, the others are swept), and the sentence an app's fault is recorded with."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from core.sweep.faults import adminium_missing, fault_words, is_connections


class Said(Exception):
    """A driver error as psycopg raises it: a message and its SQLSTATE."""

    def __init__(self, message: str, sqlstate: str | None) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


def database(message: str, sqlstate: str | None, *, invalidated: bool = False) -> sa.exc.DBAPIError:
    return sa.exc.DBAPIError(
        "SELECT 1", {}, Said(message, sqlstate), connection_invalidated=invalidated
    )


@pytest.mark.parametrize(
    ("error", "connections"),
    [
        (database("column orders.note does not exist", "42703"), False),
        (database('relation "public.orders" does not exist', "42P01"), False),
        (database("permission denied for table orders", "42501"), False),
        (database("orders are read-only during the stocktake", "P0001"), False),
        (database("canceling statement due to statement timeout", "57014"), False),
        (database("terminating connection due to administrator command", "57P01"), True),
        (database("server closed the connection unexpectedly", None), True),
        (database("could not connect to server", "08006"), True),
        (database("out of memory", "53200"), True),
        (database("column orders.note does not exist", "42703", invalidated=True), True),
        (LookupError("'voided' is not among the defined enum values"), False),
        (sa.exc.StatementError("a value that could not be bound", "SELECT 1", {}, None), False),
        (sa.exc.PendingRollbackError("roll back first"), True),
    ],
    ids=lambda value: type(value).__name__ if not isinstance(value, bool) else str(value),
)
def test_whose_fault_an_error_is(error: Exception, connections: bool) -> None:
    assert is_connections(error) is connections


def test_a_missing_column_is_said_with_what_it_means() -> None:
    words = fault_words(database("column orders.note does not exist", "42703"))
    assert words == (
        "column orders.note does not exist: the app's manifest names what its tables lack,"
        " so its timed moves wait until the two agree"
    )


def test_adminiums_own_tables_missing_is_a_sentence_and_nothing_else_is() -> None:
    missing = adminium_missing("appb", database('schema "adminium" does not exist', "3F000"))
    assert missing is not None
    assert missing.startswith(
        'the database of connection appb lacks Adminium\'s own tables (it has no schema "adminium")'
    )
    assert (
        adminium_missing("appb", database('relation "public.orders" does not exist', "42P01"))
        is None
    )
