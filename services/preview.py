"""`preview`: what the clock will do differently after a change of rules, writing nothing.

A change is a new manifest for one app of a connection (`preview_manifest`), or new
values for rows of the tables its moments read: the settings row, an hours row
(`preview_values`, changes given as `TABLE.COLUMN=VALUE`, `TABLE[KEY].COLUMN=VALUE` or
`TABLE[COLUMN=VALUE].COLUMN=VALUE`). Both are read on the connection's database in one
transaction that is rolled back (`core.preview.preview` compares the two sides); the control
plane is only read. The console, the API and the row page all answer from here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy.engine import Connection as DbConnection
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from core.agreement.compare import Comparison
from core.agreement.plan import Step, apply_steps
from core.basics.errors import AdminiumError
from core.basics.values import checked_value
from core.manifest.model import App as AppModel
from core.manifest.model import load_app
from core.preview.changes import Side
from core.preview.preview import HORIZON, Preview, compare
from core.preview.reminders import lead_tables
from core.store.install import install_adminium
from core.store.install_lock import INSTALL_LOCK
from core.store.set_aside import read_set_aside
from core.store.store import Row, Store
from core.time.moments import Tables
from services.agreement import Asked, planned, read_comparison
from services.apps import app_store, refuse_failed_check, table_owner
from services.connections import get_connection
from services.errors import DatabaseRefused, InvalidValue, OtherAppsTables, first_line
from services.models import Connection
from services.storage import connection_engine

AT_ONCE_LIMIT = 5
"""`app add --replace` refuses without `--yes` when its change makes more rows due at once."""


@dataclass(frozen=True)
class ValueChange:
    """A new value for one column of a row of an app's table (`key` None: its one row;
    `where` a column and value that names the row instead of its key)."""

    table: str
    column: str
    value: Any
    key: Any = None
    where: tuple[str, Any] | None = None


_SET = re.compile(
    r"^(?P<table>[A-Za-z_][\w.]*?)(\[(?P<row>[^\]]*)\])?\.(?P<column>\w+)=(?P<value>.*)$", re.S
)


def parse_set(text: str) -> ValueChange:
    """`TABLE.COLUMN=VALUE`, `TABLE[KEY].COLUMN=VALUE` or `TABLE[COL=VAL].COLUMN=VALUE`
    (an empty VALUE: no value)."""
    found = _SET.match(text)
    if found is None:
        raise InvalidValue(
            f"a change is TABLE.COLUMN=VALUE or TABLE[KEY].COLUMN=VALUE, not {text!r}",
            {"set": text},
        )
    row = found["row"]
    key: Any = None
    where: tuple[str, Any] | None = None
    if row is not None:
        name, eq, value = row.partition("=")
        if eq:
            where = (name.strip(), value.strip())
        else:
            key = row.strip()
    value = found["value"]
    return ValueChange(found["table"], found["column"], value if value != "" else None, key, where)


def preview_manifest(
    session: Session,
    connection_name: str,
    manifest: dict[str, Any],
    *,
    now: datetime,
    horizon: timedelta = HORIZON,
    migration: Sequence[Step] = (),
) -> Preview:
    """What replacing (or adding) the app the manifest names would change at `now`; with
    a `migration`, read once its steps have run on the tables, inside the preview's own
    transaction, which is rolled back (PostgreSQL's DDL is transactional): a new column's
    default and a new timed move are read as the migrated tables would hold them."""
    connection = get_connection(session, connection_name)
    refuse_failed_check(manifest)
    model = load_app(manifest)
    refuse_other_tables(connection, model)
    stores = {app.name: app_store(app) for app in connection.apps}
    current = stores.get(model.name)
    engine = current.engine if current else _engine(connection)
    proposed = Store(engine, model, ZoneInfo(connection.zone_name), connection=connection.name)
    pairs = {model.name: (current, proposed)}
    return _run(connection_name, engine, pairs, {}, now, horizon, migration)


@dataclass(frozen=True)
class ReplacePreview:
    """The preview of `app add --replace`: the comparison of the new manifest with the
    tables, the migration it ran first (inside the preview's transaction, rolled back),
    and what the clock would do differently, or why the preview could not read."""

    comparison: Comparison
    migration: tuple[Step, ...]
    preview: Preview | None
    unread: str | None = None


def preview_replace(
    session: Session,
    connection_name: str,
    manifest: dict[str, Any],
    *,
    now: datetime,
    asked: Asked,
) -> ReplacePreview:
    """Preview replacing (or adding) an app as `app add` would make it: refused as the add
    would be (TablesDisagree) when the tables cannot serve it; else read after the
    migration asked for (`asked.migrate`, `asked.create_tables`) has run inside the
    preview's own transaction, which is rolled back. A preview that cannot read says why
    (`unread`), never a count it did not read."""
    connection = get_connection(session, connection_name)
    refuse_failed_check(manifest)
    model = load_app(manifest)
    refuse_other_tables(connection, model)  # before the comparison reads any table
    engine = connection_engine(connection)
    comparison = read_comparison(engine, model, connection_name, asked.renames)
    # An index changes nothing a preview reads: it is not built inside one.
    migration = tuple(step for step in planned(comparison, asked).run if step.in_preview)
    try:
        found = preview_manifest(session, connection_name, manifest, now=now, migration=migration)
    except DatabaseRefused as refused:
        return ReplacePreview(comparison, migration, None, refused.message)
    return ReplacePreview(comparison, migration, found)


def refuse_other_tables(connection: Connection, model: AppModel) -> None:
    """A manifest previewed reads only its own app's tables: the saved app's schema, and in
    it the tables the app has or new ones no other app of the connection keeps. Anything
    else is refused before a row is read (a preview lists the rows its rules would move)."""
    saved = next((a.model for a in connection.apps if a.name == model.name), None)
    schema = model.schema_name
    if saved is not None and schema != saved.schema_name:
        raise OtherAppsTables(
            f"app {model.name!r} keeps its tables in schema {saved.schema_name!r}: a preview"
            f" of it reads that schema, not {schema!r}",
            {"app": model.name, "schema": schema},
        )
    own = set(saved.tables) if saved is not None else set()
    kept = {
        table: other.name
        for other in connection.apps
        if other.name != model.name and other.model.schema_name == schema
        for table in other.model.tables
    }
    foreign = sorted(t for t in model.tables if t not in own and t in kept)
    if foreign:
        names = ", ".join(f"{schema}.{t}" for t in foreign)
        owners = sorted({kept[t] for t in foreign})
        whose = " and ".join(repr(o) for o in owners)
        raise OtherAppsTables(
            f"{names} {'is' if len(foreign) == 1 else 'are'} app {whose}'s"
            f" {'table' if len(foreign) == 1 else 'tables'}: a preview of app {model.name!r}"
            " reads only its own tables",
            {"app": model.name, "schema": schema, "tables": foreign},
        )


def preview_values(
    session: Session,
    connection_name: str,
    changes: list[ValueChange],
    *,
    now: datetime,
    horizon: timedelta = HORIZON,
) -> Preview:
    """What new values for rows of the tables moments read would change at `now`."""
    if not changes:
        raise InvalidValue("a preview needs at least one change", {})
    connection = get_connection(session, connection_name)
    stores = {app.name: app_store(app) for app in connection.apps}
    touched: dict[str, list[ValueChange]] = {}
    for change in changes:
        owners = ((s.app.name, s.app.tables, s) for s in stores.values())
        store, table = table_owner(connection_name, change.table, owners)
        if table not in store.clock_tables() | lead_tables(store):
            # A row's own columns are the row's to change; a preview reads what moments
            # read besides the row (and reading such a table whole would cost the table).
            raise InvalidValue(
                f"{table!r} is no table the app's moments read as settings or hours: a "
                "preview takes changes to those",
                {"table": table},
            )
        columns = {c.ref: c for c in store.spec(table).columns}
        if change.column not in columns:
            raise InvalidValue(
                f"table {table!r} has no column {change.column!r}",
                {"table": table, "column": change.column},
            )
        touched.setdefault(store.app.name, []).append(
            ValueChange(table, change.column, change.value, change.key, change.where)
        )
    pairs: dict[str, tuple[Store | None, Store]] = {
        name: (stores[name], stores[name]) for name in touched
    }
    engine = next(iter(stores.values())).engine
    return _run(connection_name, engine, pairs, touched, now, horizon)


def _engine(connection: Connection) -> Any:
    return connection_engine(connection)


def _run(
    connection_name: str,
    engine: Any,
    pairs: dict[str, tuple[Store | None, Store]],
    touched: dict[str, list[ValueChange]],
    now: datetime,
    horizon: timedelta,
    migration: Sequence[Step] = (),
) -> Preview:
    if now.utcoffset() is None:
        raise InvalidValue("a preview's time carries its offset", {"at": now.isoformat()})
    try:
        with engine.connect() as conn:
            try:
                # A new app's tables are read once migrated (they may lack its columns).
                before = {
                    name: _tables(conn, old, new, touched.get(name, []))
                    if old is not None or not migration
                    else {}
                    for name, (old, new) in pairs.items()
                }
                for name in pairs if migration else ():
                    _migrate(conn, name, migration)
                sides: dict[str, tuple[Side, Side]] = {}
                for name, (old, new) in pairs.items():
                    old_tables = before[name]
                    if migration:
                        # The new side's settings and hours as the migrated tables hold them.
                        old_tables = _tables(conn, None, new, [])
                    new_tables = _apply(old_tables, new, touched.get(name, []))
                    sides[name] = (Side(old, before[name]), Side(new, new_tables))
                records = read_set_aside(conn, sorted(sides))
                return compare(conn, sides, now=now, horizon=horizon, records=records)
            finally:
                conn.rollback()  # a preview writes nothing, its migration included
    except SQLAlchemyError as error:
        raise DatabaseRefused(
            f"could not read connection {connection_name!r}'s rows: {first_line(error)}",
            {"connection": connection_name},
        ) from None


def _migrate(conn: DbConnection, app: str, migration: Sequence[Step]) -> None:
    """Run an app's migration inside the preview's transaction, as `app add` would (under
    the install lock, with Adminium's schema made where it is missing); an index is not
    built (it changes nothing the preview reads)."""
    conn.execute(INSTALL_LOCK)
    install_adminium(conn)
    apply_steps(conn, app, [step for step in migration if step.in_preview])


def _tables(
    conn: DbConnection, old: Store | None, new: Store, changes: list[ValueChange]
) -> dict[str, list[Row]]:
    """The settings and hours tables either side's moments and leads read, as they are."""
    names: set[str] = {c.table for c in changes}
    for store in (old, new):
        if store is not None:
            names |= store.clock_tables() | lead_tables(store)
    reader = old or new
    names &= set(reader.app.tables)
    return reader.read_clock_tables(conn, names)


def _apply(tables: Tables, store: Store, changes: list[ValueChange]) -> dict[str, list[Row]]:
    """The tables with the changes made to copies of their rows."""
    changed = {name: [dict(row) for row in rows] for name, rows in tables.items()}
    for change in changes:
        spec = store.spec(change.table)
        rows = changed.setdefault(change.table, [])
        value = _value(store, change.table, change.column, change.value)
        if change.where is not None:
            column, wanted = change.where
            picked = [r for r in rows if str(r.get(column)) == wanted]
            named = f"{change.table}[{column}={wanted}]"
        elif change.key is not None:
            picked = [r for r in rows if str(r.get(spec.key)) == str(change.key)]
            named = f"{change.table}[{change.key}]"
        else:
            picked = rows
            named = change.table
        if len(picked) != 1:
            raise InvalidValue(
                f"{named} names {len(picked)} rows, not one: name the row, "
                f"{change.table}[KEY].{change.column}=VALUE",
                {"table": change.table, "rows": len(picked)},
            )
        picked[0][change.column] = value
    return changed


def _value(store: Store, table: str, column: str, value: Any) -> Any:
    """A value given as text read as its column's type."""
    kind = next(c for c in store.spec(table).columns if c.ref == column).type
    if not isinstance(value, str):
        return checked_value(column, kind, value)
    text = value.strip()
    try:
        if kind in ("integer", "serial"):
            return int(text)
        if kind == "numeric":
            return Decimal(text)
        if kind == "boolean":
            if text.lower() in ("true", "yes", "1", "on"):
                return True
            if text.lower() in ("false", "no", "0", "off"):
                return False
            raise ValueError(text)
    except (ValueError, InvalidOperation):
        raise InvalidValue(
            f"{table}.{column} takes a {kind}, not {value!r}", {"table": table, "column": column}
        ) from None
    try:
        return checked_value(column, kind, value)
    except AdminiumError as error:
        raise InvalidValue(str(error), {"table": table, "column": column}) from None


def preview_json(preview: Preview, stores_zone: ZoneInfo | None = None) -> dict[str, Any]:
    """The preview as the API answers it."""
    now = preview.now

    def at(instant: datetime | None) -> str | None:
        if instant is None:
            return None
        return (instant.astimezone(stores_zone) if stores_zone else instant).isoformat()

    return {
        "at": now.isoformat(),
        "horizon_hours": int(preview.horizon.total_seconds() // 3600),
        "read_to": at(preview.reach()),
        "summary": preview.summary(stores_zone or ZoneInfo("UTC")),
        "counts": preview.counts(),
        "more": preview.more,
        "changes": [
            {
                "kind": c.kind,
                "app": c.app,
                "table": c.table,
                "key": c.key,
                "what": c.what,
                "effect": c.effect(now),
                "old": at(c.old),
                "new": at(c.new),
                "old_read": c.old_read,
                "new_read": c.new_read,
            }
            for c in preview.changes
        ],
    }


def connection_zone(session: Session, connection_name: str) -> ZoneInfo:
    """The venue's clock of a connection (what a preview's times are shown on)."""
    return ZoneInfo(get_connection(session, connection_name).zone_name)
