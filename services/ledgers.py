"""Ledgers as the console and screens read them: an account's statement by ledger name."""

from __future__ import annotations

from sqlalchemy.orm import Session

from core.ledger_statement import AccountStatement, read_statement
from core.manifest.model import Ledger
from core.store import Store
from services.apps import app_store
from services.connections import get_connection
from services.errors import InvalidValue, NotFound


def find_ledger(session: Session, connection_name: str, name: str) -> tuple[Store, Ledger]:
    """The store and ledger of a connection's app that keeps `name`; `app.ledger` when
    several apps keep one."""
    connection = get_connection(session, connection_name)
    app_name, _, name = name.rpartition(".")
    found = [
        (app, ledger)
        for app in connection.apps
        if app_name in ("", app.name)
        for ledger in app.model.ledgers or ()
        if ledger.name == name
    ]
    if not found:
        raise NotFound(
            f"no app of connection {connection_name!r} keeps a ledger {name!r}",
            {"connection": connection_name, "ledger": name},
        )
    if len(found) > 1:
        raise InvalidValue(
            f"several apps keep a ledger {name!r}: write app.{name}", {"ledger": name}
        )
    app, ledger = found[0]
    return app_store(app), ledger


def account_statement(
    session: Session, connection_name: str, ledger_name: str, key: str
) -> tuple[Store, AccountStatement]:
    """An account's entries and whether its balance adds up (core.ledger_statement)."""
    store, ledger = find_ledger(session, connection_name, ledger_name)
    return store, read_statement(store, ledger, key)
