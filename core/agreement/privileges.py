"""What Adminium needs of a connection's database user, and what it lacks, each with the
GRANT that gives it: CREATE on the database to make Adminium's schema (or, the schema made,
the use of it and of its tables), and the use of each app's schema, SELECT, INSERT and
UPDATE on its tables and columns, and the sequence that numbers a serial key."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.manifest.model import App
from core.store.schema import ADMINIUM_SCHEMA, adminium_metadata

PRIVILEGES = ("SELECT", "INSERT", "UPDATE")
"""What Adminium does with an app's tables: reads rows, makes them, writes them."""
ADMINIUM_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE")
"""What Adminium does with its own tables (a set-aside record is deleted once done)."""


@dataclass(frozen=True)
class Missing:
    """One thing the connection's user may not do that Adminium needs, and the fix."""

    sentence: str
    grant: str
    blocks: bool = True
    """Whether Adminium cannot work without it (it cannot use the schema, read the table
    or write its own tables); a write of some columns or of new rows refused is the
    venue's to decide, and each such write is refused as it comes."""

    @property
    def words(self) -> str:
        """The sentence and its GRANT."""
        return f"{self.sentence}; fix: {self.grant}"


@dataclass(frozen=True)
class Who:
    """The connection's database user and database."""

    user: str
    database: str


_WHO = sa.text(
    "SELECT current_user, current_database(), to_regnamespace(:schema) IS NOT NULL,"
    " has_database_privilege(current_database(), 'CREATE')"
)
_SCHEMA = sa.text("SELECT has_schema_privilege(:schema, :privilege)")
_TABLE = sa.text("SELECT has_table_privilege(CAST(:table AS regclass), :privilege)")
_COLUMN = sa.text("SELECT has_column_privilege(CAST(:table AS regclass), :column, :privilege)")
_THERE = sa.text("SELECT to_regclass(:table) IS NOT NULL")
_COLUMNS = sa.text(
    "SELECT attname FROM pg_attribute WHERE attrelid = CAST(:table AS regclass)"
    " AND attnum > 0 AND NOT attisdropped"
)
_SEQUENCE = sa.text(
    "SELECT s, has_sequence_privilege(s, 'USAGE')"
    " FROM pg_get_serial_sequence(:table, :column) AS s WHERE s IS NOT NULL"
)


def missing_privileges(conn: Connection, apps: Sequence[App] = ()) -> tuple[Who, list[Missing]]:
    """The connection's user and database, and what that user lacks (read only)."""
    user, database, there, create = conn.execute(_WHO, {"schema": ADMINIUM_SCHEMA}).one()
    who = Who(str(user), str(database))
    quote = conn.dialect.identifier_preparer.quote
    found: list[Missing] = []
    if not there and not create:
        found.append(
            Missing(
                f"user {user} may not make Adminium's schema {ADMINIUM_SCHEMA} in database "
                f"{database} (CREATE on the database)",
                f"GRANT CREATE ON DATABASE {quote(str(database))} TO {quote(str(user))};"
                f" (or: CREATE SCHEMA {ADMINIUM_SCHEMA} AUTHORIZATION {quote(str(user))};)",
            )
        )
    elif there:
        found += _adminium(conn, who)
    for app in apps:
        found += _app(conn, who, app)
    return who, found


def _schema_missing(conn: Connection, who: Who, schema: str) -> Missing | None:
    """The use of a schema, when the user lacks it."""
    quote = conn.dialect.identifier_preparer.quote
    if conn.execute(_SCHEMA, {"schema": schema, "privilege": "USAGE"}).scalar():
        return None
    return Missing(
        f"user {who.user} may not use schema {schema} (USAGE)",
        f"GRANT USAGE ON SCHEMA {quote(schema)} TO {quote(who.user)};",
    )


def _adminium(conn: Connection, who: Who) -> list[Missing]:
    """What the user lacks of Adminium's own schema and tables."""
    quote = conn.dialect.identifier_preparer.quote
    used = _schema_missing(conn, who, ADMINIUM_SCHEMA)
    if used is not None:
        return [Missing(used.sentence, used.grant, blocks=False)]
    lacking: dict[str, list[str]] = {}
    for table in adminium_metadata.sorted_tables:
        name = f"{ADMINIUM_SCHEMA}.{table.name}"
        if not conn.execute(_THERE, {"table": name}).scalar():
            continue
        for privilege in ADMINIUM_PRIVILEGES:
            if not conn.execute(_TABLE, {"table": name, "privilege": privilege}).scalar():
                lacking.setdefault(privilege, []).append(name)
    if not lacking:
        return []
    kinds = [p for p in ADMINIUM_PRIVILEGES if p in lacking]
    tables = sorted({t for names in lacking.values() for t in names})
    # Said, not blocking: a connection the venue keeps to writes alone (the sweep's
    # records are then refused as they come, and its card says so).
    return [
        Missing(
            f"user {who.user} may not {'/'.join(kinds)} Adminium's tables {', '.join(tables)}",
            f"GRANT {', '.join(kinds)} ON ALL TABLES IN SCHEMA {ADMINIUM_SCHEMA}"
            f" TO {quote(who.user)};",
            blocks=False,
        )
    ]


def _app(conn: Connection, who: Who, app: App) -> list[Missing]:
    """What the user lacks of one app's schema, tables, columns and key sequences."""
    schema = app.schema_name
    if not conn.execute(sa.text("SELECT to_regnamespace(:s) IS NOT NULL"), {"s": schema}).scalar():
        return []  # the comparison says the tables are missing
    used = _schema_missing(conn, who, schema)
    if used is not None:
        return [used]
    quote = conn.dialect.identifier_preparer.quote
    found: list[Missing] = []
    for name, table in app.tables.items():
        qualified = f"{quote(schema)}.{quote(name)}"
        if not conn.execute(_THERE, {"table": qualified}).scalar():
            continue
        there = {str(c) for (c,) in conn.execute(_COLUMNS, {"table": qualified})}
        columns = [c.ref for c in table.columns if c.ref in there]
        for privilege in PRIVILEGES:
            found += _columns_missing(conn, who, qualified, name, columns, privilege)
        for sequence, usable in conn.execute(_SEQUENCE, {"table": qualified, "column": table.key}):
            if not usable:
                found.append(
                    Missing(
                        f"user {who.user} may not number new {name} rows (USAGE on {sequence})",
                        f"GRANT USAGE ON SEQUENCE {sequence} TO {quote(who.user)};",
                        blocks=False,
                    )
                )
    return found


def _columns_missing(
    conn: Connection, who: Who, qualified: str, name: str, columns: list[str], privilege: str
) -> list[Missing]:
    """A privilege the user lacks on a table, or on some of its columns."""
    quote = conn.dialect.identifier_preparer.quote
    if conn.execute(_TABLE, {"table": qualified, "privilege": privilege}).scalar():
        return []
    lacking = [
        column
        for column in columns
        if not conn.execute(
            _COLUMN, {"table": qualified, "column": column, "privilege": privilege}
        ).scalar()
    ]
    if not lacking:
        return []
    blocks = privilege == "SELECT"
    if len(lacking) == len(columns):
        return [
            Missing(
                f"user {who.user} may not {privilege} {name}",
                f"GRANT {privilege} ON {qualified} TO {quote(who.user)};",
                blocks,
            )
        ]
    listed = ", ".join(f"{name}.{c}" for c in lacking)
    return [
        Missing(
            f"user {who.user} may not {privilege} {listed}",
            f"GRANT {privilege} ({', '.join(quote(c) for c in lacking)}) ON {qualified}"
            f" TO {quote(who.user)};",
            blocks,
        )
    ]
