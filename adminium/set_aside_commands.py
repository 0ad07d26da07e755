"""Set-aside rows from the console: list them, try one again now, move a row by hand.

The same operations as the set-aside screen: `core.sweep.pending.set_aside_rows` reads the list,
`services.sweeps.retry_set_aside` tries a row again as the clock would, and
`services.writes.write_by_person` moves a row as a person. The console writes as a known
user (`--as EMAIL`), with that user's roles in the row's app, so the audit names who it
was and the moves they may not make on a screen are refused here too.
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import click
from sqlalchemy import select
from sqlalchemy.orm import Session

from adminium.control_commands import control_plane, redis_publisher
from adminium.refusals import Refused
from adminium.sweep_commands import venue_time
from core.basics.actors import Actor
from core.basics.errors import AdminiumError
from core.store.set_aside import refusal_details, refusal_words
from core.store.store import Store
from core.sweep.hold_reads import GiveBackAside, set_aside_give_backs
from core.sweep.pending import Aside, set_aside_rows
from services.apps import app_store, find_table, lookup_app, swept_stores
from services.connections import get_connection
from services.errors import NotFound
from services.events import Publisher
from services.ledgers import give_backs_aside, retry_give_back
from services.models import App, User
from services.sweeps import retry_set_aside
from services.writes import write_by_person


def utc_now() -> datetime:
    """The console's clock."""
    return datetime.now(UTC)


def _line(aside: Aside) -> str:
    """A set-aside row as one line; times on the venue's clock."""
    rule, zone = aside.rule, aside.rule.store.zone
    return (
        f"{rule.app}.{rule.table} {aside.key} rule {rule.number} ({rule.timed.from_} -> "
        f"{rule.timed.to}) at {venue_time(aside.moment, zone)}: {aside.code}: "
        f"{aside.record.words}; set aside until {venue_time(aside.until, zone)}"
    )


@click.group("set-aside")
def set_aside_group() -> None:
    """Rows the clock set aside: list them, or try one again now."""


def _give_back_line(aside: GiveBackAside, zone: ZoneInfo) -> str:
    """A give-back the ledger's cap set aside, as one line; times on the venue's clock."""
    posting, record = aside.posting, aside.record
    return (
        f"{aside.app}.{posting.table} {posting.key} give-back of posting {posting.posting}"
        f" ({posting.amount} to {posting.ledger} account {posting.account})"
        f" held until {venue_time(record.moment, zone)}: {record.code}: {record.message};"
        f" set aside until {venue_time(record.until, zone)}"
    )


@set_aside_group.command("list")
@click.argument("connection")
def set_aside_list(connection: str) -> None:
    """The rows of CONNECTION set aside now, and the give-backs of holds the ledger's cap
    set aside, with the refusal and when they go again."""
    with control_plane() as session:
        stores = swept_stores(get_connection(session, connection))
        asides = set_aside_rows(stores)
        give_backs = set_aside_give_backs(stores)
    if not asides and not give_backs:
        click.echo(f"no rows set aside on {connection}")
    for aside in asides:
        click.echo(_line(aside))
    for give_back in give_backs:
        click.echo(_give_back_line(give_back, stores[0].zone))


@set_aside_group.command("retry")
@click.argument("connection")
@click.argument("app")
@click.argument("table")
@click.argument("key")
def set_aside_retry(connection: str, app: str, table: str, key: str) -> None:
    """Try a set-aside row's timed move, or its hold's give-back the ledger's cap set
    aside, now, as the clock would ("Try again now")."""
    with control_plane() as session, redis_publisher() as publisher:
        found = lookup_app(session, connection, app)
        if found is None:
            raise NotFound(f"no app {app!r} on connection {connection!r}", {"app": app})
        store = app_store(found)
        if not set_aside_rows([store], table=table, key=key):
            if not give_backs_aside(store, table, key):
                raise Refused(f"{app}.{table} {key} is not set aside", "NOT_FOUND")
            _retry_give_back(store, table, key, publisher)
            return
        try:
            retry_set_aside(store, table, key, now=utc_now(), publisher=publisher)
        except AdminiumError as refused:
            again = set_aside_rows([store], table=table, key=key)
            until = f"; set aside until {venue_time(again[0].until, store.zone)}" if again else ""
            words = refusal_words(refused.message, refusal_details(refused))
            raise Refused(f"refused again: {words}{until}", refused.code) from None
    click.echo(f"{app}.{table} {key} moved on a retry")


def _retry_give_back(store: Store, table: str, key: str, publisher: Publisher) -> None:
    """Try a row's set-aside give-back again now; print what came of it (refused: exit 1)."""
    name = f"{store.app.name}.{table} {key}"
    try:
        given = retry_give_back(store, table, key, now=utc_now(), publisher=publisher)
    except AdminiumError as refused:
        again = give_backs_aside(store, table, key)
        until = (
            f"; set aside until {venue_time(again[0].record.until, store.zone)}" if again else ""
        )
        raise Refused(f"give-back refused again: {refused.message}{until}", refused.code) from None
    if not given:
        click.echo(f"{name}: nothing given back (a move settled it, or its hold runs on)")
    for hold in given:
        record = hold.record
        click.echo(
            f"{name} gave back posting {record.posting}: {record.amount} to {record.ledger}"
            f" account {record.account} on a retry"
        )


def console_actor(session: Session, email: str, app: App) -> Actor:
    """The person the console writes as: a known user, with their roles in the app."""
    user = session.scalar(select(User).where(User.email == email.strip().lower()))
    if user is None:
        raise NotFound(f"no user {email!r}: name one with --as", {"email": email})
    return Actor.person(user.email, user.acting_roles(app))


@click.command("move")
@click.argument("connection")
@click.argument("table")
@click.argument("key")
@click.argument("to")
@click.option("--as", "email", required=True, help="The user who moves it (their roles apply).")
@click.option("--from", "seen", default=None, help="The state you saw (an undo must name it).")
def move_command(
    connection: str, table: str, key: str, to: str, email: str, seen: str | None
) -> None:
    """Move a row of TABLE (app.table when several apps have one) by hand to TO."""
    with control_plane() as session, redis_publisher() as publisher:
        app = find_table(session, connection, table)
        actor = console_actor(session, email, app)
        store = app_store(app)
        name = table.rpartition(".")[2]
        try:
            result = write_by_person(
                store,
                name,
                store.coerce_key(name, key),
                actor=actor,
                clock=utc_now,
                publisher=publisher,
                move_to=to,
                seen_state=seen,
            )
        except AdminiumError as refused:
            raise Refused(f"not moved: {refused.message}", refused.code) from None
    click.echo(f"{app.name}.{name} {result.key} moved to {to} by {actor.name}")
