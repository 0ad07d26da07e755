"""A connection's tables as the database makes them: the app's tables, their CHECKs and the
indexes its timed moves, reminders and holds want, and Adminium's own schema; installs
that are idempotent and taken in turn with any other install in that database.

Each app's tables live in the PostgreSQL schema the manifest names (`public` unless
named); Adminium's own bookkeeping lives in the schema `adminium` of the same database
(`core.store.schema`: every table of it is defined there, on `adminium_metadata`).
"""

from __future__ import annotations

import hashlib
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from core.manifest.model import App, Column, Moment, Table
from core.manifest.outbox_model import Reminder
from core.store.install_lock import INSTALL_LOCK
from core.store.made import MadeItem, MadeKind, read_made, record_made
from core.store.schema import (
    ADMINIUM_SCHEMA,
    AUDIT_UPGRADES,
    SENDING_UPGRADES,
    SET_ASIDE_UPGRADES,
    SWEEP_UPGRADES,
    adminium_metadata,
)
from core.store.schema import made as made_table
from core.store.types import UTC_ZONE, column_type

NAME_BYTES = 63
"""PostgreSQL keeps the first 63 bytes of a name and drops the rest (NAMEDATALEN - 1)."""


def fitted_name(name: str) -> str:
    """A name that fits 63 bytes: as it is, or cut and ended with a short hash of the whole."""
    whole = name.encode()
    if len(whole) <= NAME_BYTES:
        return name
    digest = hashlib.sha256(whole).hexdigest()[:8]
    return f"{whole[: NAME_BYTES - len(digest) - 1].decode(errors='ignore')}_{digest}"


def _server_default(column: Column, is_key: bool) -> Any:
    """A manifest default as the column's server default (a `uuid` key: a random one)."""
    if column.default is None:
        return sa.text("gen_random_uuid()") if is_key and column.type == "uuid" else None
    if isinstance(column.default, bool):
        return sa.true() if column.default else sa.false()
    if isinstance(column.default, int | float):
        return sa.text(repr(column.default))
    return column.default


def states_of(table: Table) -> list[str]:
    """Every state a table's state column may hold."""
    if table.states is None:
        return []
    found = [table.states.initial, *table.states.moves]
    for moves in table.states.moves.values():
        found.extend(m if isinstance(m, str) else m.to for m in moves)
    return list(dict.fromkeys(found))


def build_metadata(app: App, zone: ZoneInfo = UTC_ZONE) -> sa.MetaData:
    """SQLAlchemy tables for the app's manifest, in the app's schema; its `timestamp`
    columns read on the clock of `zone` (`core.store.types.VenueWallTime`)."""
    metadata = sa.MetaData(schema=app.schema_name)
    for name, table in app.tables.items():
        states = states_of(table)
        columns: list[sa.Column[Any]] = []
        for column in table.columns:
            args: list[Any] = []
            if column.references is not None:
                target = app.tables[column.references].key
                args.append(sa.ForeignKey(f"{app.schema_name}.{column.references}.{target}"))
            is_key = column.ref == table.key
            columns.append(
                sa.Column(
                    column.ref,
                    column_type(
                        column,
                        states,
                        check_name=fitted_name(f"ck_{name}_{column.ref}"),
                        zone=zone,
                    ),
                    *args,
                    primary_key=is_key,
                    autoincrement=column.type == "serial" if is_key else False,
                    nullable=column.nullable and not is_key,
                    server_default=_server_default(column, is_key),
                )
            )
        if table.states is not None and table.states.column not in {c.ref for c in table.columns}:
            columns.append(sa.Column(table.states.column, sa.Text(), nullable=False))
        sa.Table(name, metadata, *columns)
    return metadata


def _moment_columns(moment: Moment) -> list[str]:
    """The row's own columns a moment reads, its fallbacks included."""
    found = [moment.column] if moment.via is None else []
    for fallback in moment.or_ or ():
        found.extend(_moment_columns(fallback))
    return found


def timed_indexes(app: App) -> list[str]:
    """The CREATE INDEX statements the app's timed moves want: (state column, moment column),
    then those its reminders want (`reminder_indexes`).

    Each is named `ix_<table>_<state>_<column>`, cut to fit with a hash when longer.
    """
    statements: list[str] = []
    for name, table in app.tables.items():
        if table.states is None:
            continue
        state = table.states.column
        for rule in table.states.timed or ():
            for column in _moment_columns(rule.at):
                index = fitted_name(f"ix_{name}_{state}_{column}")
                statement = (
                    f'CREATE INDEX IF NOT EXISTS "{index}"'
                    f' ON "{app.schema_name}"."{name}" ("{state}", "{column}")'
                )
                if statement not in statements:
                    statements.append(statement)
    statements.extend(s for s in reminder_indexes(app) if s not in statements)
    statements.extend(s for s in hold_indexes(app) if s not in statements)
    return statements


def hold_indexes(app: App) -> list[str]:
    """The CREATE INDEX statements the holds the clock gives back want: per column their
    moment reads, (state column, moment column) over the rows still paid (a posting's
    amount above 0, from an account; a give-back sets it to 0), so the minute job's search
    reads the rows near due, never the holds long given back
    (`ix_<table>_<state>_<column>_held`)."""
    statements: list[str] = []
    for name, table in app.tables.items():
        if table.hold is None or table.states is None or not table.postings:
            continue
        state = table.states.column
        pairs = dict.fromkeys((posting.amount, posting.via) for posting in table.postings)
        paid = " OR ".join(f'("{amount}" > 0 AND "{via}" IS NOT NULL)' for amount, via in pairs)
        for column in _moment_columns(table.hold.until):
            index = fitted_name(f"ix_{name}_{state}_{column}_held")
            statements.append(
                f'CREATE INDEX IF NOT EXISTS "{index}"'
                f' ON "{app.schema_name}"."{name}" ("{state}", "{column}") WHERE ({paid})'
            )
    return statements


def reminder_indexes(app: App) -> list[str]:
    """The CREATE INDEX statements the app's reminders want: their moment column, which the
    minute job reads bounded by now and the largest lead (`ix_<table>_<column>`)."""
    statements: list[str] = []
    for producer in app.outbox.producers if app.outbox is not None else ():
        if isinstance(producer, Reminder):
            table, column = producer.before.table, producer.before.at
            index = fitted_name(f"ix_{table}_{column}")
            statement = (
                f'CREATE INDEX IF NOT EXISTS "{index}"'
                f' ON "{app.schema_name}"."{table}" ("{column}")'
            )
            if statement not in statements:
                statements.append(statement)
    return statements


_THERE_IN_ADMINIUM = sa.text(
    "SELECT c.relname, a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
    " JOIN pg_namespace n ON n.oid = c.relnamespace"
    " WHERE n.nspname = :schema AND a.attnum > 0 AND NOT a.attisdropped"
    " UNION ALL SELECT tablename, indexname FROM pg_indexes WHERE schemaname = :schema"
)
"""Every column and index of Adminium's tables, as (table, name), whatever the user may read
of them (the catalogue is every user's)."""


def upgrade_adminium(conn: Connection) -> None:
    """Add to Adminium's tables in an existing database what a newer version added to them
    (the columns and indexes `create_all` does not add to a table already there), each only
    where it is missing: a database that has them all is read, never locked, so an install
    waits on no screen reading Adminium's tables (nor they on it). The caller holds the
    install lock. Idempotent."""
    there = {
        (str(table), str(name))
        for table, name in conn.execute(_THERE_IN_ADMINIUM, {"schema": ADMINIUM_SCHEMA})
    }
    for upgrade in (*AUDIT_UPGRADES, *SWEEP_UPGRADES, *SET_ASIDE_UPGRADES, *SENDING_UPGRADES):
        if (upgrade.table, upgrade.name) not in there:
            conn.execute(sa.text(upgrade.statement))


def install_adminium(conn: Connection) -> None:
    """Create Adminium's schema and tables in the connection's database, and add what a
    newer version added to them, in the caller's transaction, after any other install in
    that database has committed. Idempotent."""
    conn.execute(INSTALL_LOCK)
    conn.execute(sa.schema.CreateSchema(ADMINIUM_SCHEMA, if_not_exists=True))
    adminium_metadata.create_all(conn, checkfirst=True)
    upgrade_adminium(conn)


def install_app(engine: Engine, app: App) -> None:
    """Create the app's schema, the tables it lacks and their timed-move indexes, and
    Adminium's schema, in one transaction taken in turn with any other install in that
    database; what it made is recorded (`core.store.made`). Idempotent."""
    with engine.begin() as conn:
        conn.execute(INSTALL_LOCK)
        conn.execute(sa.schema.CreateSchema(app.schema_name, if_not_exists=True))
        install_adminium(conn)
        make_tables(conn, app)


def make_tables(conn: Connection, app: App) -> list[str]:
    """Create the app's tables the database lacks, in the caller's transaction (which holds
    the install lock), record them as Adminium's, and make the indexes the app's rules want
    on the tables Adminium made; a table of the venue's own is left as it is. The tables
    made, by name."""
    metadata = build_metadata(app)
    there = set(sa.inspect(conn).get_table_names(schema=app.schema_name))
    new = [table for table in metadata.sorted_tables if table.name not in there]
    metadata.create_all(conn, tables=new, checkfirst=False)
    record_made(conn, app.name, [item for table in new for item in made_with(table)])
    made = read_made(conn, [app.schema_name])
    # An index already there is not asked for again: CREATE INDEX IF NOT EXISTS locks its
    # table against writes before it finds the index there.
    indexed = set(conn.execute(_INDEXES, {"schema": app.schema_name}).scalars())
    statements = [
        s
        for s in timed_indexes(app)
        if made.table(app.schema_name, index_table(s)) and index_name(s) not in indexed
    ]
    for statement in statements:
        conn.execute(sa.text(statement))
    record_made(conn, app.name, [index_item(app.schema_name, s) for s in statements])
    return [table.name for table in new]


_INDEXES = sa.text("SELECT indexname FROM pg_indexes WHERE schemaname = :schema")


def made_with(table: sa.Table) -> list[MadeItem]:
    """What making `table` made: the table, its columns and its named CHECKs."""
    schema = str(table.schema)
    items = [MadeItem(schema, table.name, MadeKind.table)]
    items += [MadeItem(schema, table.name, MadeKind.column, c.name) for c in table.columns]
    for column in table.columns:
        if isinstance(column.type, sa.Enum) and column.type.name:
            items.append(MadeItem(schema, table.name, MadeKind.constraint, column.type.name))
    return items


def index_name(statement: str) -> str:
    """The name a `CREATE INDEX IF NOT EXISTS "name" ON …` statement gives its index."""
    return statement.split('"')[1]


def concurrently(statement: str) -> str:
    """The statement as a build that keeps the table open to writers."""
    return statement.replace("CREATE INDEX", "CREATE INDEX CONCURRENTLY", 1)


def index_table(statement: str) -> str:
    """The table a `CREATE INDEX … ON "schema"."table" (…)` statement indexes."""
    return statement.split('"')[5]


def index_item(schema: str, statement: str) -> MadeItem:
    """The record of an index a `CREATE INDEX IF NOT EXISTS "name" ON …` statement makes."""
    return MadeItem(schema, index_table(statement), MadeKind.index, index_name(statement))


def drop_made_tables(conn: Connection, app: App) -> tuple[list[str], list[str]]:
    """Drop the app's tables Adminium made (`adminium.made`), those that refer to others
    first, and forget what it made of them, in the caller's transaction; never a table of
    the venue's own, nor what refers to them from outside the app (no CASCADE: the database
    refuses a drop another table's foreign key or a view still needs). The tables dropped
    and those kept, by name."""
    schema = app.schema_name
    ours = read_made(conn, [schema])
    there = set(sa.inspect(conn).get_table_names(schema=schema))
    ordered_tables = [t.name for t in reversed(build_metadata(app).sorted_tables)]
    dropped = [t for t in ordered_tables if t in there and ours.table(schema, t)]
    kept = [t for t in app.tables if t not in dropped]
    quote = conn.dialect.identifier_preparer.quote
    for table in dropped:
        conn.execute(sa.text(f"DROP TABLE {quote(schema)}.{quote(table)}"))
    if dropped:
        conn.execute(
            sa.delete(made_table).where(
                made_table.c.schema_name == schema, made_table.c.table_name.in_(dropped)
            )
        )
    return dropped, kept
