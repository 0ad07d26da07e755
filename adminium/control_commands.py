"""Console commands for the control plane: connections, apps, users, imports.

The control plane's database is DATABASE_URL, or the embedded PostgreSQL under the
instance folder when it is unset. Every command brings it to the newest migration
first. A refusal prints one clear line (or one per sentence) to stderr and exits 1.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from sqlalchemy.orm import Session

from adminium.embedded import Embedded, instance_folder, start_postgres
from adminium.refusals import Refused
from services import connections, users
from services.agreement import disagreeing
from services.apps import app_store, find_table
from services.events import Publisher
from services.storage import open_session, upgrade_control_plane
from services.writes import import_rows

log = logging.getLogger(__name__)


def control_plane_url() -> str:
    """DATABASE_URL, or the embedded server's (stopped when the command ends), migrated."""
    url = os.environ.get("DATABASE_URL", "")
    if not url:
        embedded = Embedded()
        click.get_current_context().call_on_close(embedded.stop)
        url = start_postgres(instance_folder() / "pg", embedded)
    upgrade_control_plane(url)
    return url


@contextmanager
def control_plane() -> Iterator[Session]:
    """A control-plane session. A refusal raised inside it (an `AdminiumError`, a database
    error) reaches `adminium.cli`, which prints it as the console's one `Error:` line."""
    with open_session(control_plane_url()) as session:
        yield session


def read_json(file: Path) -> Any:
    """A JSON file's content, or a clear error."""
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise Refused(f"cannot read {file}: {error}", "INVALID_VALUE") from None
    except json.JSONDecodeError as error:
        raise Refused(f"{file} is no JSON: {error}", "INVALID_VALUE") from None
    except RecursionError:
        raise Refused(f"{file} nests its JSON too deep to read", "INVALID_VALUE") from None


class Instant(click.ParamType):
    """An option's ISO instant with its offset (2026-10-24T09:00:00+01:00). A value that is
    none is a usage error naming the option as it was typed (`--at`, `--now`)."""

    name = "ISO instant"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> datetime:
        if isinstance(value, datetime):
            return value
        try:
            instant = datetime.fromisoformat(str(value))
        except ValueError:
            self.fail(f"{value!r} is no ISO date and time", param, ctx)
        if instant.utcoffset() is None:
            self.fail(f"{value!r} needs its offset, e.g. +00:00", param, ctx)
        return instant


INSTANT = Instant()
"""The type of every `--now` and `--at`."""


LOCALE_HELP = "The screens' language: en, de, fr, pt_PT or es (none: chosen further down)."

# --- connections ----------------------------------------------------------------


@click.group("connection")
def connection_group() -> None:
    """Connections: the venues' PostgreSQL databases."""


@connection_group.command("add")
@click.argument("name")
@click.option("--url", required=True, help="postgresql://user:password@host:5432/database")
@click.option("--zone", default=None, help="The venue's IANA time zone; none = UTC.")
@click.option(
    "--force", is_flag=True, help="Add it even if another connection uses the same database."
)
@click.option("--locale", default=None, help=LOCALE_HELP)
def connection_add(name: str, url: str, zone: str | None, force: bool, locale: str | None) -> None:
    """Add a connection to a venue's database."""
    with control_plane() as session:
        connection = connections.add_connection(
            session, name, url, zone, force=force, locale=locale
        )
        spoken = f", screens in {connection.locale}" if connection.locale else ""
        click.echo(
            f"connection {connection.name} added: {connection.safe_url}, "
            f"zone {connection.zone_name}{spoken}"
        )
        access = connections.check_access(session, connection.name)
    if access.unread:
        click.echo(f"  not checked what its database user may do ({access.unread})")
    for missing in access.missing:
        click.echo(f"  {missing.words}")


@connection_group.command("check")
@click.argument("name")
def connection_check(name: str) -> None:
    """Try what Adminium needs of the connection's database user; say what is missing and
    the GRANT that fixes it. Exits 0 when nothing is missing, 1 when something is."""
    with control_plane() as session:
        access = connections.check_access(session, name)
        apps = [app.name for app in connections.get_connection(session, name).apps]
    if access.unread:
        raise Refused(f"connection {name}: not checked: {access.unread}", "DATABASE_REFUSED")
    if not access.missing:
        what = f"its apps' tables ({', '.join(apps)})" if apps else "no app yet"
        click.echo(
            f"connection {name}: user {access.user} may do all Adminium needs in database "
            f"{access.database}: its schema adminium, {what}"
        )
        return
    click.echo(
        f"connection {name}: user {access.user} lacks {len(access.missing)} of what Adminium"
        f" needs in database {access.database}:"
    )
    for missing in access.missing:
        click.echo(f"  {missing.words}")
    raise click.exceptions.Exit(1)


@connection_group.command("list")
def connection_list() -> None:
    """List the connections (passwords hidden)."""
    with control_plane() as session:
        found = connections.list_connections(session)
        if not found:
            click.echo("no connections yet: adminium connection add NAME --url URL")
        for c in found:
            apps = ", ".join(a.name for a in c.apps) or "no apps"
            state = "paused" if c.paused else "running"
            click.echo(f"{c.name}\t{state}\t{c.zone_name}\t{c.safe_url}\t{apps}")
            disagree = disagreeing(c.apps)
            if disagree is not None:
                click.echo(f"  {disagree.words()}")


@connection_group.command("locale")
@click.argument("name")
@click.argument("locale", required=False, default="")
def connection_locale(name: str, locale: str) -> None:
    """Set the language a connection's screens speak to its users who chose none (one of
    en, de, fr, pt_PT, es); without LOCALE, none: each browser's."""
    with control_plane() as session:
        connection = connections.set_locale(session, name, locale)
    shown = connection.locale or "none (each browser's language)"
    click.echo(f"connection {name}: screens in {shown}")


@connection_group.command("pause")
@click.argument("name")
def connection_pause(name: str) -> None:
    """Pause a connection: the clock moves none of its rows."""
    _set_paused(name, True)


@connection_group.command("resume")
@click.argument("name")
def connection_resume(name: str) -> None:
    """Resume a connection: every row already due moves at the next minute."""
    _set_paused(name, False)


def _set_paused(name: str, paused: bool) -> None:
    """Pause or resume, tell the open screens, and say so."""
    with control_plane() as session, redis_publisher() as publisher:
        connections.set_paused(session, name, paused, publisher)
    click.echo(f"connection {name} {'paused' if paused else 'resumed'}")


# --- users ----------------------------------------------------------------------


@click.group("user")
def user_group() -> None:
    """Users: staff and their roles."""


@user_group.command("add")
@click.argument("email")
@click.option("--role", required=True, help="admin (every app), or one of the app's roles.")
@click.option("--app", "app", default=None, help="The app the role is in (connection/app).")
@click.option("--password-stdin", is_flag=True, help="Read the password from stdin.")
@click.option("--locale", default=None, help=LOCALE_HELP)
def user_add(
    email: str, role: str, app: str | None, password_stdin: bool, locale: str | None
) -> None:
    """Add a user, or give one another role; prints a new user's API token once."""
    password = None
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
        if not password:
            raise Refused("no password on stdin", "INVALID_VALUE")
    with control_plane() as session, redis_publisher() as publisher:
        added = users.add_user(session, email, role, app, password, publisher, locale)
        where = f"app {app}" if app else "every app"
        click.echo(f"user {added.user.email} holds {role} in {where}")
        if added.token:
            click.echo(f"API token (shown once, keep it): {added.token}")


@user_group.command("remove")
@click.argument("email")
@click.option("--role", default=None, help="Take this role away instead of the whole user.")
@click.option("--app", "app", default=None, help="The app the role is in (connection/app).")
def user_remove(email: str, role: str | None, app: str | None) -> None:
    """Remove a user, or take one role away (--role); their open screens close."""
    if app and not role:
        raise click.UsageError("--app names the app of a --role")
    with control_plane() as session, redis_publisher() as publisher:
        if role:
            user = users.remove_role(session, email, role, app, publisher)
            click.echo(f"user {user.email} no longer holds {role} in {app or 'every app'}")
        else:
            users.remove_user(session, email, publisher)
            click.echo(f"user {email.strip().lower()} removed")


@user_group.command("locale")
@click.argument("email")
@click.argument("locale", required=False, default="")
def user_locale(email: str, locale: str) -> None:
    """Set the language the screens speak to a user (one of en, de, fr, pt_PT, es); without
    LOCALE, none of their own: their connection's, else their browser's."""
    with control_plane() as session:
        user = users.set_locale(session, email, locale)
    shown = user.locale or "none of their own (the connection's or the browser's)"
    click.echo(f"user {user.email}: screens in {shown}")


@user_group.command("token")
@click.argument("email")
def user_token(email: str) -> None:
    """Give a user a new API token; the old one opens nothing from then on."""
    with control_plane() as session:
        token = users.renew_token(session, email)
        click.echo(f"API token (shown once, keep it): {token}")


@user_group.command("unlock")
@click.argument("email")
def user_unlock(email: str) -> None:
    """Let an email sign in again at once from the addresses its wrong passwords throttled."""
    import redis

    from adminium.embedded import start_redis
    from services import redis_client
    from services.sign_in_limits import unlock

    database_url = control_plane_url()
    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url:
        embedded = Embedded()
        click.get_current_context().call_on_close(embedded.stop)
        redis_url = start_redis(instance_folder() / "redis.db", embedded)
    try:
        cleared = unlock(redis_client.connect(redis_url), database_url, email)
    except redis.RedisError as error:
        raise Refused(f"Redis does not answer: {error}", "DATABASE_REFUSED") from None
    shown = email.strip().lower()
    if not cleared:
        click.echo(f"nothing to unlock: no refused sign-ins of {shown} are counted")
        return
    addresses = "1 address" if cleared == 1 else f"{cleared} addresses"
    click.echo(f"sign-in of {shown} unlocked ({addresses} cleared)")


# --- import ---------------------------------------------------------------------


def read_rows(file: Path) -> list[dict[str, Any]]:
    """The rows of an import file: a JSON array of objects."""
    rows = read_json(file)
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise Refused(f"{file} holds no rows: a JSON array of objects is expected", "INVALID_VALUE")
    return rows


def redis_publisher() -> Publisher:
    """A publisher to the live screens, when REDIS_URL names the Redis they listen on."""
    return Publisher.from_url(os.environ.get("REDIS_URL"))


@click.command("import")
@click.argument("connection")
@click.argument("table")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--now", type=INSTANT, default=None, help="Write as of this instant (ISO, offset).")
def import_command(connection: str, table: str, file: Path, now: datetime | None) -> None:
    """Import FILE's JSON array of rows into TABLE, each row a write by `Import`."""
    rows = read_rows(file)
    now = now or datetime.now(UTC)
    with control_plane() as session, redis_publisher() as publisher:
        app = find_table(session, connection, table)
        name = table.rpartition(".")[2]
        report = import_rows(app_store(app), name, rows, now=now, publisher=publisher)
    click.echo(f"imported {report.imported} of {len(rows)} rows into {app.name}.{name}")
    if report.refused:
        codes = ", ".join(dict.fromkeys(error.code for _, error in report.refused))
        raise Refused(
            f"{len(report.refused)} of {len(rows)} rows refused",
            codes,
            [f"row {number}: {error.code}: {error.message}" for number, error in report.refused],
        )
