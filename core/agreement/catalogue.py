"""What the database's catalogue says of an app's tables, beyond what Alembic compares: each
column's base type, length and enum labels, the CHECKs, the keys that are unique, whether
row-level security hides rows from the connection's user, the indexes there; and the
catalogue's fingerprint, which changes whenever any of it does."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

import sqlalchemy as sa
from sqlalchemy.engine import Connection


@dataclass(frozen=True)
class ColumnFacts:
    """One column as the catalogue keeps it."""

    name: str
    base: str
    """Its base type as `format_type` names it (`character varying`; a domain's base type),
    or `ENUM` for any enum type (`core.agreement.fit.ENUM`)."""
    shown: str
    """Its type as a person reads it (`character varying(9)`, a domain's or enum's name)."""
    length: int | None
    not_null: bool
    default: str | None
    identity: bool
    enum_type: str | None = None
    """The enum type's qualified name, for a column of an enum type."""
    labels: tuple[str, ...] = ()
    """The enum type's labels, in order."""

    @property
    def fills_itself(self) -> bool:
        """Whether a new row gets a value without one given (a default, an identity)."""
        return self.default is not None or self.identity


@dataclass(frozen=True)
class Check:
    """A CHECK constraint of a table: its name, the expression, the columns it reads."""

    name: str
    expression: str
    columns: tuple[str, ...]


@dataclass
class TableFacts:
    """One table as the catalogue keeps it."""

    name: str
    hides_rows: bool = False
    """Row-level security is on and applies to the connection's user."""
    columns: dict[str, ColumnFacts] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)
    unique: set[tuple[str, ...]] = field(default_factory=set)
    """The column lists a primary key, unique constraint or unique index holds unique."""


@dataclass(frozen=True)
class Catalogue:
    """An app's tables (those the database has) and the indexes of its schema."""

    schema: str
    schema_there: bool
    user: str
    tables: dict[str, TableFacts]
    indexes: dict[str, bool]
    """Index name -> whether it is valid."""


_TABLES = sa.text(
    """
    SELECT c.relname, c.relrowsecurity
           AND (c.relforcerowsecurity OR c.relowner <> r.oid)
           AND NOT (r.rolsuper OR r.rolbypassrls)
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_roles r ON r.rolname = current_user
    WHERE n.nspname = :schema AND c.relname = ANY(:tables) AND c.relkind IN ('r', 'p')
    """
)
_COLUMNS = sa.text(
    """
    SELECT c.relname, a.attname,
           CASE WHEN e.typtype = 'e' THEN 'ENUM'
                ELSE format_type(COALESCE(NULLIF(t.typbasetype, 0), a.atttypid), NULL) END,
           format_type(a.atttypid, a.atttypmod),
           CASE WHEN COALESCE(NULLIF(t.typbasetype, 0), a.atttypid)
                     IN ('varchar'::regtype, 'bpchar'::regtype)
                 AND COALESCE(NULLIF(t.typtypmod, -1), a.atttypmod) > 4
                THEN COALESCE(NULLIF(t.typtypmod, -1), a.atttypmod) - 4 END,
           a.attnotnull OR COALESCE(t.typnotnull, false),
           pg_get_expr(d.adbin, d.adrelid),
           a.attidentity <> '' OR a.attgenerated <> '',
           CASE WHEN e.typtype = 'e' THEN format('%I.%I', en.nspname, e.typname) END,
           CASE WHEN e.typtype = 'e' THEN ARRAY(
               SELECT enumlabel::text FROM pg_enum WHERE enumtypid = e.oid ORDER BY enumsortorder
           ) END
    FROM pg_attribute a
    JOIN pg_class c ON c.oid = a.attrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_type t ON t.oid = a.atttypid
    JOIN pg_type e ON e.oid = COALESCE(NULLIF(t.typbasetype, 0), a.atttypid)
    JOIN pg_namespace en ON en.oid = e.typnamespace
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE n.nspname = :schema AND c.relname = ANY(:tables) AND c.relkind IN ('r', 'p')
      AND a.attnum > 0 AND NOT a.attisdropped
    ORDER BY c.relname, a.attnum
    """
)
_CHECKS = sa.text(
    """
    SELECT c.relname, k.conname, pg_get_constraintdef(k.oid),
           ARRAY(SELECT a.attname::text FROM pg_attribute a
                 WHERE a.attrelid = k.conrelid AND a.attnum = ANY(k.conkey) ORDER BY a.attnum)
    FROM pg_constraint k
    JOIN pg_class c ON c.oid = k.conrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = :schema AND c.relname = ANY(:tables) AND k.contype = 'c'
    ORDER BY c.relname, k.conname
    """
)
_UNIQUE = sa.text(
    """
    SELECT c.relname, ARRAY(
               SELECT a.attname::text FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
               JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
               ORDER BY k.ord)
    FROM pg_index i
    JOIN pg_class c ON c.oid = i.indrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = :schema AND c.relname = ANY(:tables)
      AND i.indisunique AND i.indisvalid AND i.indpred IS NULL AND i.indexprs IS NULL
    """
)
_INDEXES = sa.text(
    """
    SELECT c.relname, i.indisvalid FROM pg_index i
    JOIN pg_class c ON c.oid = i.indexrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = :schema
    """
)

_WHO = sa.text("SELECT current_user, EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = :schema)")


def read_catalogue(conn: Connection, schema: str, tables: Collection[str]) -> Catalogue:
    """What the catalogue says of these tables of `schema` (those missing are left out)."""
    params = {"schema": schema, "tables": sorted(tables)}
    found = {name: TableFacts(name, bool(hides)) for name, hides in conn.execute(_TABLES, params)}
    for row in conn.execute(_COLUMNS, params):
        table, name, base, shown, length, not_null, default, identity, enum_type, labels = row
        found[table].columns[name] = ColumnFacts(
            name,
            base,
            shown,
            length,
            bool(not_null),
            default,
            bool(identity),
            enum_type,
            tuple(labels or ()),
        )
    for table, name, definition, columns in conn.execute(_CHECKS, params):
        found[table].checks.append(Check(name, check_expression(definition), tuple(columns)))
    for table, columns in conn.execute(_UNIQUE, params):
        found[table].unique.add(tuple(columns))
    indexes = {name: bool(valid) for name, valid in conn.execute(_INDEXES, params)}
    user, there = conn.execute(_WHO, params).one()
    return Catalogue(schema, bool(there), str(user), found, indexes)


def check_expression(definition: str) -> str:
    """The expression of `CHECK (…)` as `pg_get_constraintdef` gives it (`NOT VALID` off)."""
    text = definition.strip().removesuffix(" NOT VALID")
    return text.removeprefix("CHECK ").strip()


def _fingerprint_of(names: str) -> str:
    """The SQL of one catalogue read whose answer changes whenever a table of `names` (an
    SQL expression of a text array, each `schema.table`) is made, dropped or made anew, or
    any of its columns, types, CHECKs, keys, indexes, enum labels or row-level security
    changes. Each table is found by its name in the catalogue's index, then read by its
    oid: a few index lookups however many tables the database holds, and no privilege on
    the tables or their schema is needed to read it."""
    return f"""
    (WITH t AS (
        SELECT c.oid FROM unnest({names}) AS x
        JOIN pg_namespace n ON n.nspname = split_part(x, '.', 1)
        JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = split_part(x, '.', 2))
    SELECT md5(coalesce(string_agg(part, '|' ORDER BY part), '')) FROM (
        SELECT format('t %s %s %s %s', c.oid::int, c.oid::regclass, c.relrowsecurity,
                      c.relforcerowsecurity) AS part
        FROM pg_class c WHERE c.oid IN (SELECT oid FROM t)
        UNION ALL
        SELECT format('c %s %s %s %s %s %s %s', a.attrelid::int, a.attname, a.atttypid,
                      a.atttypmod, a.attnotnull, a.atthasdef, a.attidentity)
        FROM pg_attribute a
        WHERE a.attrelid IN (SELECT oid FROM t) AND a.attnum > 0 AND NOT a.attisdropped
        UNION ALL
        SELECT format('k %s %s %s', k.conrelid::int, k.conname, pg_get_constraintdef(k.oid))
        FROM pg_constraint k WHERE k.conrelid IN (SELECT oid FROM t)
        UNION ALL
        SELECT format('i %s %s %s %s', i.indrelid::int, i.indexrelid::regclass, i.indisvalid,
                      i.indisunique)
        FROM pg_index i WHERE i.indrelid IN (SELECT oid FROM t)
        UNION ALL
        SELECT format('e %s %s %s', e.enumtypid, e.enumsortorder, e.enumlabel)
        FROM pg_enum e WHERE e.enumtypid IN (
            SELECT a.atttypid FROM pg_attribute a WHERE a.attrelid IN (SELECT oid FROM t))
    ) AS parts)
    """


FINGERPRINT = sa.text(f"SELECT {_fingerprint_of('CAST(:qualified AS text[])')}")
"""The catalogue's fingerprint of the tables named (`:qualified`): what the sweep compares
before it compares the whole."""


def fingerprints_read(param: str) -> sa.TextClause:
    """Each app's fingerprint at once, as a JSON object app -> fingerprint, from the
    parameter `param`: a JSON object of app -> its tables (`qualified`). A scalar
    subquery of it rides in another statement (the sweep's opening one)."""
    names = "ARRAY(SELECT json_array_elements_text(a.value))"
    return sa.text(
        f"SELECT coalesce(json_object_agg(a.key, {_fingerprint_of(names)}), '{{}}')"
        f" FROM json_each(CAST(:{param} AS json)) AS a"
    )


def qualified(schema: str, tables: Iterable[str]) -> list[str]:
    """`schema.table` for each table (a manifest's names hold no dot): what `FINGERPRINT`
    takes."""
    return sorted(f"{schema}.{table}" for table in tables)


def read_fingerprint(conn: Connection, names: list[str]) -> str:
    """The catalogue's fingerprint of these tables (`qualified`)."""
    return str(conn.execute(FINGERPRINT, {"qualified": names}).scalar_one())
