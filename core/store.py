"""A connection's database: the app's tables from its manifest, row reads, row locks.

Each app's tables live in the PostgreSQL schema the manifest names (`public` unless
named); Adminium's own bookkeeping lives in the schema `adminium` of the same database,
so everything one write makes commits in one transaction (DESIGN decision 1).
"""

from __future__ import annotations

import copy
import functools
import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from psycopg.conninfo import conninfo_to_dict
from pydantic import BaseModel
from sqlalchemy.engine import Connection, Engine

from core.audit import ADMINIUM_SCHEMA, AUDIT_UPGRADES, adminium_metadata
from core.automations import deliveries as _deliveries  # noqa: F401  (install makes it)
from core.fence import fences as _fences  # noqa: F401  (install makes it)
from core.install_lock import INSTALL_LOCK
from core.ledger_entries import postings as _postings  # noqa: F401  (install makes it)
from core.manifest.model import App, Column, Moment, Table
from core.manifest.outbox_model import Reminder
from core.manifest.refs import HoursRef, SettingCondition, SettingRef
from core.moments import MomentContext, Tables
from core.outbox import outbox as _outbox  # noqa: F401  (install makes it)
from core.reads import Reads, ReadsCache
from core.sample_marks import sample_marks as _sample_marks  # noqa: F401  (install makes it)
from core.set_aside import SET_ASIDE_UPGRADES
from core.set_aside import set_aside as _set_aside  # noqa: F401  (install makes it)
from core.sweep_records import SWEEP_UPGRADES
from core.sweep_records import sweeps as _sweep_tables  # noqa: F401  (install makes it)

Row = dict[str, Any]

_SIMPLE_TYPES: dict[str, sa.types.TypeEngine[Any]] = {
    "serial": sa.Integer(),
    "integer": sa.Integer(),
    "numeric": sa.Numeric(),
    "boolean": sa.Boolean(),
    "date": sa.Date(),
    "timestamptz": sa.DateTime(timezone=True),
}


NAME_BYTES = 63
"""PostgreSQL keeps the first 63 bytes of a name and drops the rest (NAMEDATALEN - 1)."""


def fitted_name(name: str) -> str:
    """A name that fits 63 bytes: as it is, or cut and ended with a short hash of the whole."""
    whole = name.encode()
    if len(whole) <= NAME_BYTES:
        return name
    digest = hashlib.sha256(whole).hexdigest()[:8]
    return f"{whole[: NAME_BYTES - len(digest) - 1].decode(errors='ignore')}_{digest}"


def engine_url(url: str) -> sa.engine.URL:
    """A connection's URL (`postgresql://…` or libpq `key=value`) as SQLAlchemy's psycopg 3 URL."""
    info: dict[str, Any] = conninfo_to_dict(url)
    host = info.pop("host", None)
    port = info.pop("port", None)
    # A unix socket folder (the embedded server) or several hosts go in the query, as
    # libpq reads them.
    if host and (str(host).startswith("/") or "," in str(host)):
        info["host"] = host
        host = None
    return sa.engine.URL.create(
        "postgresql+psycopg",
        username=info.pop("user", None),
        password=info.pop("password", None),
        host=host or None,
        port=int(port) if port and "," not in str(port) else None,
        database=info.pop("dbname", None),
        query={key: str(value) for key, value in info.items()},
    )


def make_engine(url: str, **options: Any) -> Engine:
    """An engine on a connection's database (psycopg 3)."""
    return sa.create_engine(engine_url(url), **options)


def _column_type(
    table_name: str, column: Column, states: Sequence[str]
) -> sa.types.TypeEngine[Any]:
    """The SQL type of a manifest column; an enum is text with a named CHECK of its values."""
    if column.type in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[column.type]
    if column.type == "enum":
        values = list(column.values or states)
        return sa.Enum(
            *values,
            native_enum=False,
            create_constraint=True,
            length=max(len(v) for v in values),
            name=fitted_name(f"ck_{table_name}_{column.ref}"),
            validate_strings=False,
        )
    return sa.String(column.max_length) if column.max_length else sa.Text()


def _server_default(column: Column) -> Any:
    """A manifest default as the column's server default."""
    if column.default is None:
        return None
    if isinstance(column.default, bool):
        return sa.true() if column.default else sa.false()
    if isinstance(column.default, int | float):
        return sa.text(repr(column.default))
    return column.default


def _states_of(table: Table) -> list[str]:
    """Every state a table's state column may hold."""
    if table.states is None:
        return []
    found = [table.states.initial, *table.states.moves]
    for moves in table.states.moves.values():
        found.extend(m if isinstance(m, str) else m.to for m in moves)
    return list(dict.fromkeys(found))


def build_metadata(app: App) -> sa.MetaData:
    """SQLAlchemy tables for the app's manifest, in the app's schema."""
    metadata = sa.MetaData(schema=app.schema_name)
    for name, table in app.tables.items():
        states = _states_of(table)
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
                    _column_type(name, column, states),
                    *args,
                    primary_key=is_key,
                    autoincrement=column.type == "serial" if is_key else False,
                    nullable=column.nullable and not is_key,
                    server_default=_server_default(column),
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


def upgrade_adminium(conn: Connection) -> None:
    """Add to Adminium's tables in an existing database what a newer version added to them
    (the columns `create_all` does not add to a table already there). Idempotent."""
    for upgrade in (*AUDIT_UPGRADES, *SWEEP_UPGRADES, *SET_ASIDE_UPGRADES):
        conn.execute(sa.text(upgrade))


def install_adminium(conn: Connection) -> None:
    """Create Adminium's schema and tables in the connection's database, and add what a
    newer version added to them, in the caller's transaction, after any other install in
    that database has committed. Idempotent."""
    conn.execute(INSTALL_LOCK)
    conn.execute(sa.schema.CreateSchema(ADMINIUM_SCHEMA, if_not_exists=True))
    adminium_metadata.create_all(conn, checkfirst=True)
    upgrade_adminium(conn)


def install_app(engine: Engine, app: App) -> None:
    """Create the app's schema, tables and timed-move indexes, and Adminium's schema, in one
    transaction taken in turn with any other install in that database. Idempotent."""
    with engine.begin() as conn:
        conn.execute(INSTALL_LOCK)
        conn.execute(sa.schema.CreateSchema(app.schema_name, if_not_exists=True))
        install_adminium(conn)
        build_metadata(app).create_all(conn, checkfirst=True)
        for statement in timed_indexes(app):
            conn.execute(sa.text(statement))


class Store:
    """One app on a connection's database: its tables, row reads and row locks."""

    def __init__(self, engine: Engine, app: App, zone: ZoneInfo, *, connection: str = "") -> None:
        self.engine = engine
        self.app = app
        self.zone = zone
        self.connection = connection
        # One MetaData per manifest, so statements built for its tables are reused across
        # stores made per request.
        self.metadata = _shared_metadata(app.model_dump_json(by_alias=True))
        # What each write's rules read besides the row, worked out once per rule.
        self.reads = ReadsCache()
        self._clock_tables: frozenset[str] | None = None

    def on_engine(self, engine: Engine) -> Store:
        """The same app, zone and tables on another engine (its tables and what its rules
        read kept, not built again)."""
        moved = copy.copy(self)
        moved.engine = engine
        return moved

    @contextmanager
    def transaction(self, conn: Connection | None = None) -> Iterator[Connection]:
        """One transaction: on `conn` (held by the caller, outside any transaction) or pooled."""
        if conn is None:
            with self.engine.begin() as fresh:
                yield fresh
        else:
            with conn.begin():
                yield conn

    def table(self, name: str) -> sa.Table:
        """The SQLAlchemy table of one of the app's tables."""
        return self.metadata.tables[f"{self.app.schema_name}.{name}"]

    def spec(self, name: str) -> Table:
        """The manifest of one of the app's tables."""
        return self.app.tables[name]

    def coerce_key(self, name: str, key: Any) -> Any:
        """A key as its column's type: a whole-number key given as text becomes an int."""
        spec = self.spec(name)
        column = next(c for c in spec.columns if c.ref == spec.key)
        if column.type in ("serial", "integer") and isinstance(key, str):
            return int(key) if key.strip().lstrip("-").isdigit() else None
        return key

    def read_row(self, conn: Connection, name: str, key: Any, *, lock: bool = False) -> Row | None:
        """A row by its key; with `lock`, held FOR UPDATE NOWAIT until the transaction ends."""
        query = _row_query(self.table(name), self.spec(name).key, lock)
        found = conn.execute(query, {"k_key": key}).mappings().first()
        return dict(found) if found is not None else None

    def read_rows(self, conn: Connection, name: str) -> list[Row]:
        """Every row of a table (settings and hours tables are a handful of rows)."""
        return [dict(row) for row in conn.execute(sa.select(self.table(name))).mappings()]

    def read_clock_tables(
        self, conn: Connection, names: Iterable[str] | None = None
    ) -> dict[str, list[Row]]:
        """The settings and hours tables' rows, by name (all the app's, by default): what
        moments read besides the row. The sweep reads them once a minute."""
        wanted = self.clock_tables() if names is None else set(names)
        return {name: self.read_rows(conn, name) for name in sorted(wanted)}

    def clock_tables(self) -> set[str]:
        """The tables the app's moments, conditions and stamps read as settings or hours
        (worked out once per store: a sweep asks every minute)."""
        if self._clock_tables is None:
            found: set[str] = set()
            _collect_tables(self.app, found)
            self._clock_tables = frozenset(found & set(self.app.tables))
        return set(self._clock_tables)

    def linked_rows(
        self, conn: Connection, name: str, row: Mapping[str, Any], vias: Iterable[str]
    ) -> dict[str, Row | None]:
        """The rows this row's foreign keys point at, by foreign-key column (None when missing)."""
        linked: dict[str, Row | None] = {}
        columns = {c.ref: c for c in self.spec(name).columns}
        for via in vias:
            target = columns[via].references
            value = row.get(via)
            linked[via] = (
                None if target is None or value is None else self.read_row(conn, target, value)
            )
        return linked

    def moment_context(
        self,
        conn: Connection,
        name: str,
        row: Mapping[str, Any],
        reads: Reads,
        given: Tables | None = None,
    ) -> MomentContext:
        """What moments read besides the row: the settings and hours tables (those `given`
        when they hold every one read, else read now) and the linked rows."""
        tables: Tables = {}
        if given is not None and reads.tables <= given.keys():
            tables = {table: given[table] for table in reads.tables}
        elif reads.tables:
            tables = self.read_clock_tables(conn, reads.tables)
        linked = self.linked_rows(conn, name, row, reads.vias) if reads.vias else {}
        return MomentContext(row=row, zone=self.zone, linked=linked, tables=tables)

    def find_by_code(self, name: str, column: str, code: str) -> Row | None:
        """The row whose code column holds exactly this code; None for an unknown or old code."""
        table = self.table(name)
        with self.engine.connect() as conn:
            found = conn.execute(sa.select(table).where(table.c[column] == code)).mappings().first()
        return dict(found) if found is not None else None


@functools.lru_cache(maxsize=64)
def _shared_metadata(manifest: str) -> sa.MetaData:
    """The tables of a manifest given as its JSON, built once."""
    return build_metadata(App.model_validate_json(manifest))


@functools.lru_cache(maxsize=256)
def _row_query(table: sa.Table, key_column: str, lock: bool) -> sa.Select[Any]:
    """The select of one row by its key, built once per table (optionally FOR UPDATE NOWAIT)."""
    key = sa.bindparam("k_key", type_=table.c[key_column].type)
    query = sa.select(table).where(table.c[key_column] == key)
    return query.with_for_update(nowait=True) if lock else query


def _collect_tables(node: Any, found: set[str]) -> None:
    """Every table a manifest part reads as a setting or an hours table."""
    if isinstance(node, SettingRef | SettingCondition | HoursRef):
        found.add(node.table)
    elif isinstance(node, BaseModel):
        for field in type(node).model_fields:
            _collect_tables(getattr(node, field), found)
    elif isinstance(node, list | tuple):
        for value in node:
            _collect_tables(value, found)
    elif isinstance(node, dict):
        for value in node.values():
            _collect_tables(value, found)
