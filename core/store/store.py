"""A connection's database: the app's tables from its manifest, row reads, row locks.

Each app's tables live in the PostgreSQL schema the manifest names (`public` unless
named); Adminium's own bookkeeping lives in the schema `adminium` of the same database,
so everything one write makes commits in one transaction (DESIGN decision 1). How those
tables and their indexes are made and installed is `core.store.install`.
"""

from __future__ import annotations

import copy
import functools
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from psycopg.conninfo import conninfo_to_dict
from pydantic import BaseModel
from sqlalchemy.engine import Connection, Engine

from core.manifest.model import App, Table
from core.manifest.refs import HoursRef, SettingCondition, SettingRef
from core.store.install import build_metadata
from core.store.reads import Reads, ReadsCache
from core.time.moments import MomentContext, Tables

Row = dict[str, Any]


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


class Store:
    """One app on a connection's database: its tables, row reads and row locks."""

    def __init__(self, engine: Engine, app: App, zone: ZoneInfo, *, connection: str = "") -> None:
        self.engine = engine
        self.app = app
        self.zone = zone
        self.connection = connection
        # One MetaData per manifest, so statements built for its tables are reused across
        # stores made per request.
        self.metadata = _shared_metadata(app.model_dump_json(by_alias=True), zone.key)
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
        """A key as its column's type: a whole-number key given as text becomes an int, a
        UUID its canonical text; None when no row could have it."""
        spec = self.spec(name)
        column = next(c for c in spec.columns if c.ref == spec.key)
        if column.type in ("serial", "integer") and isinstance(key, str):
            return int(key) if key.strip().lstrip("-").isdigit() else None
        if column.type == "uuid" and key is not None:
            return uuid_text(key)
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
            collect_tables(self.app, found)
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


def uuid_text(key: Any) -> str | None:
    """A UUID (or its text in any form PostgreSQL reads) as its canonical text; None for
    anything else."""
    if isinstance(key, uuid.UUID):
        return str(key)
    try:
        return str(uuid.UUID(key)) if isinstance(key, str) else None
    except ValueError:
        return None


@functools.lru_cache(maxsize=64)
def _shared_metadata(manifest: str, zone: str) -> sa.MetaData:
    """The tables of a manifest given as its JSON, built once per venue zone (its
    `timestamp` columns read on that clock)."""
    return build_metadata(App.model_validate_json(manifest), ZoneInfo(zone))


@functools.lru_cache(maxsize=256)
def _row_query(table: sa.Table, key_column: str, lock: bool) -> sa.Select[Any]:
    """The select of one row by its key, built once per table (optionally FOR UPDATE NOWAIT)."""
    key = sa.bindparam("k_key", type_=table.c[key_column].type)
    query = sa.select(table).where(table.c[key_column] == key)
    return query.with_for_update(nowait=True) if lock else query


def collect_tables(node: Any, found: set[str]) -> None:
    """Every table a manifest part reads as a setting or an hours table."""
    if isinstance(node, SettingRef | SettingCondition | HoursRef):
        found.add(node.table)
    elif isinstance(node, BaseModel):
        for field in type(node).model_fields:
            collect_tables(getattr(node, field), found)
    elif isinstance(node, list | tuple):
        for value in node:
            collect_tables(value, found)
    elif isinstance(node, dict):
        for value in node.values():
            collect_tables(value, found)
