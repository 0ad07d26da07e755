"""Ledgers as the console and screens read them: an account's statement by ledger name;
and "Try again now" on a give-back the ledger's cap set aside."""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy.orm import Session

from core.ledgers.give_back import GiveBack, try_give_back
from core.ledgers.statement import AccountStatement, read_statement
from core.manifest.ledger_model import Ledger
from core.store.store import Store
from core.sweep.hold_reads import GiveBackAside, set_aside_give_backs
from services.apps import app_store
from services.connections import get_connection
from services.errors import InvalidValue, NotFound
from services.events import Publisher

log = logging.getLogger(__name__)


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
    """An account's entries and whether its balance adds up (core.ledgers.statement)."""
    store, ledger = find_ledger(session, connection_name, ledger_name)
    return store, read_statement(store, ledger, key)


def give_backs_aside(store: Store, table: str, key: str) -> list[GiveBackAside]:
    """The give-backs of one row the ledger's cap set aside (not those to an account)."""
    return [
        aside
        for aside in set_aside_give_backs([store], table, key)
        if (aside.posting.table, aside.posting.key) == (table, key)
    ]


def retry_give_back(
    store: Store, table: str, key: str, *, now: datetime, publisher: Publisher
) -> list[GiveBack]:
    """Try a row's set-aside give-backs now, as the clock would: given back, each leaves
    the list; refused again, it is set aside for a new hour and the refusal is raised.
    The holds given back (none when a move settled it or its row was re-dated since)."""
    given: list[GiveBack] = []
    for aside in give_backs_aside(store, table, key):
        attempt = try_give_back(
            store,
            aside.posting,
            aside.record.moment,
            connection=store.connection,
            now=now,
            aside=True,
        )
        if attempt.refused is not None:
            raise attempt.refused
        if attempt.given is not None:
            publisher.rows(attempt.given.events)
            given.append(attempt.given)
            log.info(
                "set-aside give-back %s.%s key=%s posting=%s given back on a retry",
                store.app.name,
                table,
                key,
                aside.posting.posting,
            )
    return given
