"""Whether a connection's apps and tables agree: the one comparison as an operation, its
result kept per app on the control plane (`models.Agreement`), what the screens and the
console say of it ("tables disagree with the manifest: N" and the first sentence), and the
fingerprint check that compares an app again only when its tables changed.

`compare_app` is the operation every adapter asks (`app diff`, `app add`, the sweep's
check); what it returns is `core.agreement.compare.Comparison`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection as DbConnection
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from core.agreement.catalogue import qualified, read_fingerprint
from core.agreement.compare import NO_RENAMES, Comparison, Renames, compare_tables
from core.agreement.plan import Step, Verdict, apply_steps, plan_sql
from core.agreement.privileges import Missing, missing_privileges
from core.manifest.model import App as AppManifest
from core.manifest.model import load_app
from core.store.install import install_adminium
from core.store.install_lock import INSTALL_LOCK
from core.store.schema import ADMINIUM_SCHEMA, adminium_metadata
from services.connections import get_connection
from services.errors import DatabaseRefused, InvalidValue, NotFound, TablesDisagree, first_line
from services.manifests import refuse_failed_check
from services.models import Agreement, App, Connection
from services.storage import connection_engine

log = logging.getLogger(__name__)


def compare_app(
    session: Session,
    connection_name: str,
    app_name: str | None = None,
    manifest: dict[str, Any] | None = None,
    *,
    renames: Renames = NO_RENAMES,
) -> Comparison:
    """Compare a manifest with the connection's tables: `manifest` (checked first) when
    given, else the saved app `app_name` (the connection's one app when it has one).

    Returns `core.agreement.compare.Comparison`: `.agree`; `.disagreements`, each with its
    `.sentence` (`table.column`, what the manifest says, what the database has, the SQL
    that fixes it), `.kind`, `.blocks` (the tables cannot serve the manifest while it
    stands) and `.steps`; `.steps` the plan in order (`.sql` each); `.verdict(yes=…)` what
    `--migrate` would run, leave to the venue's DBA and refuse; `.fingerprint`. Nothing is
    written. Raises NotFound, ManifestRefused, DatabaseRefused."""
    connection = get_connection(session, connection_name)
    if manifest is not None:
        refuse_failed_check(manifest)
        model = load_app(manifest)
    else:
        model = saved_app(session, connection, app_name).model
    return read_comparison(connection_engine(connection), model, connection_name, renames)


def saved_app(session: Session, connection: Connection, name: str | None) -> App:
    """The connection's app of that name, or its one app when no name is given."""
    if name is None:
        if len(connection.apps) != 1:
            names = ", ".join(a.name for a in connection.apps) or "none"
            raise InvalidValue(
                f"connection {connection.name!r} has several apps or none ({names}): name one",
                {"connection": connection.name},
            )
        return connection.apps[0]
    found = next((app for app in connection.apps if app.name == name), None)
    if found is None:
        raise NotFound(f"connection {connection.name!r} has no app named {name!r}", {"app": name})
    return found


def read_comparison(
    engine: Engine, model: AppManifest, connection_name: str, renames: Renames = NO_RENAMES
) -> Comparison:
    """The comparison, read in a transaction that is rolled back."""
    try:
        with engine.connect() as conn:
            try:
                return compare_tables(conn, model, renames=renames)
            finally:
                conn.rollback()
    except SQLAlchemyError as error:
        raise DatabaseRefused(
            f"could not compare app {model.name}'s manifest with connection "
            f"{connection_name!r}'s tables: {first_line(error)}",
            {"connection": connection_name, "app": model.name},
        ) from None


@dataclass(frozen=True)
class Asked:
    """What `app add` is asked to do to the tables."""

    create_tables: bool = False
    migrate: bool = False
    yes: bool = False
    renames: Renames = NO_RENAMES


def planned(comparison: Comparison, asked: Asked) -> Verdict:
    """What `app add` would run on the tables; refused (TablesDisagree, nothing done) when
    the tables cannot serve the manifest and the migration asked for cannot make them."""
    if comparison.unused:
        raise InvalidValue("; ".join(comparison.unused), {"renames": list(comparison.unused)})
    verdict = comparison.install_verdict(
        create_tables=asked.create_tables, migrate=asked.migrate, yes=asked.yes
    )
    if verdict.refusals:
        raise tables_disagree(comparison, verdict, asked)
    return verdict


def tables_disagree(comparison: Comparison, verdict: Verdict, asked: Asked) -> TablesDisagree:
    """The refusal of an app whose tables cannot serve it: every sentence, what the
    migration refuses, the plan, and what to do."""
    if asked.migrate:
        message = f"the migration of app {comparison.app}'s tables is refused: nothing was changed"
        hint = (
            "a step rows would break waits until those rows are moved; a destructive step "
            "needs --yes; the SQL for a table Adminium did not make is its DBA's to run"
        )
    else:
        message = f"the tables cannot serve app {comparison.app}'s manifest: nothing was saved"
        hint = (
            "--create-tables makes the tables the database lacks; --migrate applies the plan "
            "to the tables Adminium made (--yes too for its destructive steps); the SQL for "
            "the venue's own tables is for its DBA (adminium app diff … --sql)"
        )
    return TablesDisagree(
        message,
        {
            "app": comparison.app,
            "sentences": comparison.sentences(),
            "refusals": list(verdict.refusals) if asked.migrate else [],
            "plan": plan_sql(comparison.steps),
            "hint": hint,
        },
    )


@dataclass(frozen=True)
class Installed:
    """What `install_tables` did: the steps it ran, the comparison after them, and what
    the connection's user may not do that the app would have it do (none of it blocking:
    a write refused for it is refused as it comes)."""

    ran: tuple[Step, ...]
    after: Comparison
    lacking: tuple[Missing, ...] = ()


def install_tables(
    engine: Engine, model: AppManifest, connection_name: str, asked: Asked
) -> Installed:
    """Compare the app's manifest with the tables and make or migrate them as asked, in one
    transaction under the install lock, with Adminium's schema made first (it is
    Adminium's own); the steps run and the comparison of the tables then. Raises
    TablesDisagree (nothing done) or DatabaseRefused (the database refused, nothing done)."""
    try:
        with engine.begin() as conn:
            conn.execute(INSTALL_LOCK)
            make_adminium_schema(conn, engine)
            lacking = refuse_unreadable(conn, model)
            comparison = compare_tables(conn, model, renames=asked.renames)
            verdict = planned(comparison, asked)
            if not verdict.run:
                return Installed((), comparison, lacking)
            apply_steps(conn, model.name, verdict.run)
            log.info(
                "app %s on connection %s: %s steps made on its tables",
                model.name,
                connection_name,
                len(verdict.run),
            )
            return Installed(verdict.run, compare_tables(conn, model), lacking)
    except SQLAlchemyError as error:
        raise DatabaseRefused(
            f"could not make app {model.name}'s tables agree in connection "
            f"{connection_name!r}'s database: {first_line(error)}",
            {"connection": connection_name, "app": model.name},
        ) from None


def refuse_unreadable(conn: DbConnection, model: AppManifest) -> tuple[Missing, ...]:
    """What the connection's user may not do of the app's tables and Adminium's own
    (`core.agreement.privileges`); refused (DatabaseRefused, with each GRANT) when it may
    not use the app's schema or read its tables."""
    who, lacking = missing_privileges(conn, [model])
    blocking = [m.words for m in lacking if m.blocks]
    if blocking:
        raise DatabaseRefused(
            f"user {who.user} may not read app {model.name}'s tables: " + "; ".join(blocking),
            {"lacking": blocking},
        )
    return tuple(lacking)


def make_adminium_schema(conn: DbConnection, engine: Engine) -> None:
    """Adminium's schema and tables made where missing (`install_adminium`), or refused with
    the GRANT that lets the connection's user make them. A user that may write Adminium's
    tables but not alter them (its DBA made them) goes on when every one is there."""
    try:
        with conn.begin_nested():
            install_adminium(conn)
    except sa.exc.ProgrammingError as error:
        missing = [
            table.name
            for table in adminium_metadata.sorted_tables
            if not conn.execute(_THERE, {"name": f"{ADMINIUM_SCHEMA}.{table.name}"}).scalar()
        ]
        if not missing:
            log.warning("Adminium's tables not upgraded: %s", first_line(error))
            return
        quote = engine.dialect.identifier_preparer.quote
        database, user = conn.execute(sa.text("SELECT current_database(), current_user")).one()
        raise DatabaseRefused(
            f"Adminium keeps its bookkeeping in a schema {ADMINIUM_SCHEMA} of the connection's"
            f" database and could not make it: {first_line(error)}; grant it with "
            f"GRANT CREATE ON DATABASE {quote(database)} TO {quote(user)}; (or make it for "
            f"that user: CREATE SCHEMA {ADMINIUM_SCHEMA} AUTHORIZATION {quote(user)};)",
            {"schema": ADMINIUM_SCHEMA, "missing": missing},
        ) from None


_THERE = sa.text("SELECT to_regclass(:name) IS NOT NULL")


_RENAME = re.compile(r"^(?P<table>\w+)\.(?P<column>\w+)(\.(?P<value>\w+))?=(?P<new>\w+)$")


def parse_renames(texts: Iterable[str]) -> Renames:
    """`--rename TABLE.OLD=NEW` (a column) and `--rename TABLE.COLUMN.OLD=NEW` (a value)."""
    columns: dict[tuple[str, str], str] = {}
    values: dict[tuple[str, str, str], str] = {}
    for text in texts:
        found = _RENAME.match(text.strip())
        if found is None:
            raise InvalidValue(
                f"a rename is TABLE.OLD=NEW (a column) or TABLE.COLUMN.OLD=NEW (a value of "
                f"it), not {text!r}",
                {"rename": text},
            )
        if found["value"]:
            values[(found["table"], found["column"], found["value"])] = found["new"]
        else:
            columns[(found["table"], found["column"])] = found["new"]
    return Renames(columns, values)


def record_comparison(session: Session, app: App, comparison: Comparison, now: datetime) -> None:
    """Keep the comparison as the app's agreement (the caller commits)."""
    found = [d.json() for d in comparison.disagreements]
    found.sort(key=lambda d: not d["blocks"])
    agreement = app.agreement
    if agreement is None:
        agreement = Agreement(app=app)
        session.add(agreement)
    agreement.fingerprint = comparison.fingerprint
    agreement.manifest_at = app.updated_at
    agreement.checked_at = now
    agreement.disagreements = found


@dataclass(frozen=True)
class Disagreeing:
    """What a connection's card, `connection list` and /status say of its apps' tables."""

    count: int
    app: str
    first: str

    def words(self) -> str:
        """`tables disagree with the manifest: 2 (app takeaway: orders.table_no: …)`."""
        return f"tables disagree with the manifest: {self.count} (app {self.app}: {self.first})"


def disagreeing(apps: Sequence[App]) -> Disagreeing | None:
    """How many disagreements the apps' last comparisons found, and the first (the blocking
    before the others); None when they agree or were never compared."""
    count, first = 0, None
    for app in apps:
        agreement = app.agreement
        if agreement is None or not agreement.disagreements:
            continue
        count += len(agreement.disagreements)
        sentence = agreement.disagreements[0]
        if first is None or (sentence["blocks"] and not first[1]["blocks"]):
            first = (app.name, sentence)
    if first is None:
        return None
    return Disagreeing(count, first[0], str(first[1]["sentence"]))


def stale(app: App, fingerprint: str | None) -> bool:
    """Whether the app's kept comparison no longer holds: none kept, the manifest saved
    since, or the tables' catalogue fingerprint moved (`None`: not read)."""
    agreement = app.agreement
    if agreement is None or agreement.manifest_at != app.updated_at:
        return True
    return fingerprint is not None and fingerprint != agreement.fingerprint


def refresh_agreements(
    session: Session, connection: Connection, *, now: datetime, engine: Engine | None = None
) -> list[str]:
    """Compare again each app of the connection whose kept comparison no longer holds
    (one catalogue read per app finds out; the whole comparison runs only then), keep the
    new ones, and commit; the apps compared. A database that does not answer is logged."""
    engine = engine or connection_engine(connection)
    compared: list[str] = []
    for app in connection.apps:
        model = app.model
        try:
            with engine.connect() as conn:
                names = qualified(model.schema_name, model.tables)
                fingerprint = read_fingerprint(conn, names)
                conn.rollback()
        except SQLAlchemyError as error:
            log.warning(
                "app %s on connection %s: tables not compared: %s",
                app.name,
                connection.name,
                first_line(error),
            )
            continue
        if not stale(app, fingerprint):
            continue
        try:
            comparison = read_comparison(engine, model, connection.name)
        except DatabaseRefused as refused:
            log.warning("app %s: %s", app.name, refused.message)
            continue
        record_comparison(session, app, comparison, now)
        compared.append(app.name)
        log_comparison(connection.name, comparison)
    if compared:
        session.commit()
    return compared


def compare_again(
    session: Session, connection_name: str, apps: Sequence[str], *, now: datetime
) -> list[str]:
    """Compare these apps of a connection with their tables again and keep the comparisons
    (the sweep asks once an app's catalogue fingerprint moved, or its manifest was saved,
    since its kept one); the apps compared. A database that does not answer, or a control
    plane that does not, is logged: the sweep is not the worse for it."""
    compared: list[str] = []
    try:
        connection = get_connection(session, connection_name)
        engine = connection_engine(connection)
        for app in connection.apps:
            if app.name not in apps:
                continue
            try:
                comparison = read_comparison(engine, app.model, connection_name)
            except DatabaseRefused as refused:
                log.warning("app %s: %s", app.name, refused.message)
                continue
            record_comparison(session, app, comparison, now)
            compared.append(app.name)
            log_comparison(connection_name, comparison)
        session.commit()
    except SQLAlchemyError as error:
        session.rollback()
        log.warning("connection %s: comparisons not kept: %s", connection_name, first_line(error))
    return compared


def log_comparison(connection: str, comparison: Comparison) -> None:
    """The log's line for a comparison: that they agree, or how many disagree and the first."""
    if comparison.agree:
        log.info(
            "app %s on connection %s: tables agree with the manifest", comparison.app, connection
        )
        return
    # Said at INFO: the card, /status and `connection list` say it to whom it concerns,
    # and a worker's console stays for what stopped (docs/operations.md).
    log.info(
        "app %s on connection %s: tables disagree with the manifest: %s (%s)",
        comparison.app,
        connection,
        len(comparison.disagreements),
        comparison.sentences()[0],
    )
