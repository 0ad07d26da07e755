"""Set-aside rows from the console: list them, try one again now, move a row by hand.

The same operations as the set-aside screen: `core.pending.set_aside_rows` reads the list,
`services.sweeps.retry_set_aside` tries a row again as the clock would, and
`services.writes.write_by_person` moves a row as a person. The console writes as a known
user (`--as EMAIL`), with that user's roles in the row's app, so the audit names who it
was and the moves they may not make on a screen are refused here too.
"""

from __future__ import annotations

from datetime import UTC, datetime

import click
from sqlalchemy import select
from sqlalchemy.orm import Session

from adminium.control_commands import control_plane, redis_publisher
from adminium.sweep_commands import venue_time
from core.actors import Actor
from core.errors import AdminiumError
from core.pending import Aside, set_aside_rows
from core.set_aside import refusal_details, refusal_words
from services.apps import app_store, find_table, lookup_app, swept_stores
from services.connections import get_connection
from services.errors import NotFound
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


@set_aside_group.command("list")
@click.argument("connection")
def set_aside_list(connection: str) -> None:
    """The rows of CONNECTION set aside now, with the refusal and when they go again."""
    with control_plane() as session:
        asides = set_aside_rows(swept_stores(get_connection(session, connection)))
    if not asides:
        click.echo(f"no rows set aside on {connection}")
    for aside in asides:
        click.echo(_line(aside))


@set_aside_group.command("retry")
@click.argument("connection")
@click.argument("app")
@click.argument("table")
@click.argument("key")
def set_aside_retry(connection: str, app: str, table: str, key: str) -> None:
    """Try a set-aside row's timed move now, as the clock would ("Try again now")."""
    with control_plane() as session, redis_publisher() as publisher:
        found = lookup_app(session, connection, app)
        if found is None:
            raise NotFound(f"no app {app!r} on connection {connection!r}", {"app": app})
        store = app_store(found)
        if not set_aside_rows([store], table=table, key=key):
            raise click.ClickException(f"{app}.{table} {key} is not set aside")
        try:
            retry_set_aside(store, table, key, now=utc_now(), publisher=publisher)
        except AdminiumError as refused:
            again = set_aside_rows([store], table=table, key=key)
            until = f"; set aside until {venue_time(again[0].until, store.zone)}" if again else ""
            words = refusal_words(refused.message, refusal_details(refused))
            click.echo(f"refused again: {refused.code}: {words}{until}", err=True)
            raise click.exceptions.Exit(1) from None
    click.echo(f"{app}.{table} {key} moved on a retry")


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
            click.echo(f"refused: {refused.code}: {refused.message}", err=True)
            raise click.exceptions.Exit(1) from None
    click.echo(f"{app.name}.{name} {result.key} moved to {to} by {actor.name}")
