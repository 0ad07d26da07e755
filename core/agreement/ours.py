"""The part of the comparison that is ours, table by table: the states and enum values a
column's length, enum type or CHECKs refuse, rows holding a value the manifest does not list
(or one it is asked to rename), a key that is not unique or a serial key with no default,
row-level security that hides rows from the connection's user, an index the clock wants."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.agreement.catalogue import Catalogue, ColumnFacts, TableFacts
from core.agreement.disagreement import Disagreement, Kind
from core.agreement.plan import Order
from core.agreement.steps import dba_only, make_index, rename_value, replace_check, retype
from core.agreement.values import (
    Holding,
    Valued,
    counted_rows,
    holding,
    not_labelled,
    quoted,
    refused_by,
    renamed_values,
    too_long,
    valued_columns,
)
from core.manifest.model import App, Column
from core.store.install import build_metadata, index_name, index_table, states_of, timed_indexes
from core.store.made import Made, MadeKind

CASTS = {
    "integer": r"^\s*[-+]?[0-9]+\s*$",
    "serial": r"^\s*[-+]?[0-9]+\s*$",
    "numeric": r"^\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\s*$",
}
"""What a text value must look like to be cast to a manifest type (the others are left to
the database: a value that does not cast refuses the whole migration)."""


@dataclass
class Context:
    """What one comparison reads once: the connection, the app, the catalogue, what
    Adminium made, and the value renames asked for."""

    conn: Connection
    app: App
    catalogue: Catalogue
    made: Made
    value_renames: Mapping[tuple[str, str, str], str]

    @property
    def schema(self) -> str:
        """The app's schema."""
        return self.app.schema_name

    def key(self, table: str) -> str | None:
        """The table's key column, when the database has it."""
        key = self.app.tables[table].key
        facts = self.catalogue.tables.get(table)
        return key if facts is not None and key in facts.columns else None

    @functools.cached_property
    def metadata(self) -> sa.MetaData:
        """The tables the manifest builds."""
        return build_metadata(self.app)

    def metadata_column(self, table: str, column: str) -> sa.Column[Any]:
        """The column the manifest builds."""
        return self.metadata.tables[f"{self.schema}.{table}"].c[column]

    def quoted_table(self, table: str) -> str:
        """`schema.table` as SQL names it."""
        quote = self.conn.dialect.identifier_preparer.quote
        return f"{quote(self.schema)}.{quote(table)}"

    def not_casting(self, table: str, spec: Column, facts: ColumnFacts) -> str | None:
        """Why the rows refuse a change of the column's type: those whose value would not
        cast (for the types whose values a pattern can judge)."""
        pattern = CASTS.get(spec.type)
        if pattern is None:
            return None
        value = sa.cast(sa.column(facts.name), sa.Text)
        held = counted_rows(
            self.conn,
            self.schema,
            table,
            self.key(table),
            value.regexp_match(pattern) == sa.false(),
        )
        if held is None:
            return None
        return f"{held.hold('a value that is no ' + spec.type)} ({held.keys_words()})"


def table_checks(context: Context, name: str) -> list[Disagreement]:
    """Our disagreements of one table the database has."""
    facts = context.catalogue.tables[name]
    out = _security(context, name, facts) + _key(context, name, facts)
    spec = context.app.tables[name]
    for valued in valued_columns(name, spec, states_of(spec)):
        column = facts.columns.get(valued.column)
        if column is not None:
            out += _values(context, valued, column, facts)
    return out + _indexes(context, name)


def _security(context: Context, name: str, facts: TableFacts) -> list[Disagreement]:
    """Row-level security that applies to the connection's user: rows may be hidden."""
    if not facts.hides_rows:
        return []
    sql = f"ALTER TABLE {context.quoted_table(name)} DISABLE ROW LEVEL SECURITY;"
    return [
        Disagreement(
            Kind.rows_hidden,
            name,
            None,
            "shows and moves every row",
            f"has row-level security on for {context.catalogue.user}: rows its policies hide"
            " are never shown or moved",
            (dba_only(Order.advice, name, sql),),
            f"(or a policy that lets {context.catalogue.user} see every row)",
        )
    ]


def _key(context: Context, name: str, facts: TableFacts) -> list[Disagreement]:
    """The manifest's key: unique in the database, and filled in by it when serial."""
    spec = context.app.tables[name]
    column = facts.columns.get(spec.key)
    if column is None:
        return []
    table = context.quoted_table(name)
    out: list[Disagreement] = []
    if (spec.key,) not in facts.unique:
        sql = f"ALTER TABLE {table} ADD PRIMARY KEY ({spec.key});"
        out.append(
            Disagreement(
                Kind.key_not_unique,
                name,
                spec.key,
                "reads and writes each row by its key",
                "has no primary key or unique index on it alone",
                (dba_only(Order.advice, name, sql),),
            )
        )
    kind = next((c.type for c in spec.columns if c.ref == spec.key), None)
    if kind == "serial" and not column.fills_itself:
        sql = f"ALTER TABLE {table} ALTER COLUMN {spec.key} ADD GENERATED BY DEFAULT AS IDENTITY;"
        out.append(
            Disagreement(
                Kind.no_key_default,
                name,
                spec.key,
                "says serial (the database gives each new row its key)",
                f"has {column.shown} with no default, so no new row gets a key",
                (dba_only(Order.advice, name, sql),),
            )
        )
    return out


def _values(
    context: Context, valued: Valued, facts: ColumnFacts, table: TableFacts
) -> list[Disagreement]:
    """The states or enum values the column refuses, and the values its rows hold that the
    manifest does not list (or is asked to rename)."""
    schema, name, column = context.schema, valued.table, valued.column
    ours = context.made.table(schema, name)
    renames = renamed_values(context.value_renames, name, column)
    held = holding(context.conn, schema, name, column, context.key(name), valued.values)
    breaking = [h for h in held if h.value not in renames]
    out: list[Disagreement] = []
    long = too_long(valued, facts)
    if long:
        width = max(len(v) for v in valued.values)
        step = retype(schema, name, column, sa.String(width), ours, widen=True)
        out.append(
            Disagreement(
                Kind.value_refused,
                name,
                column,
                f"{valued.says} {quoted(long)}",
                f"keeps at most {facts.length} characters ({facts.shown})",
                (step,),
            )
        )
    missing = not_labelled(valued, facts)
    if missing:
        steps = tuple(
            dba_only(
                Order.advice, name, f"ALTER TYPE {facts.enum_type} ADD VALUE IF NOT EXISTS '{v}';"
            )
            for v in missing
        )
        out.append(
            Disagreement(
                Kind.value_refused,
                name,
                column,
                f"{valued.says} {quoted(missing)}",
                f"has the enum type {facts.enum_type}, whose labels are {quoted(facts.labels)}",
                steps,
            )
        )
    if facts.enum_type is None:
        out += _checks(context, valued, table, breaking, ours)
    out += _held(context, valued, held, renames, ours)
    return out


def _checks(
    context: Context, valued: Valued, table: TableFacts, breaking: list[Holding], ours: bool
) -> list[Disagreement]:
    """Each CHECK of the column alone that refuses a value the manifest wants: made anew
    with exactly the manifest's values (refused while rows hold one it drops)."""
    schema, name, column = context.schema, valued.table, valued.column
    out: list[Disagreement] = []
    for check in table.checks:
        if check.columns != (column,):
            continue
        refused = refused_by(context.conn, check, column, valued.values)
        if not refused:
            continue
        mine = ours and context.made.has(schema, name, MadeKind.constraint, check.name)
        breaks = None
        if breaking:
            breaks = "; ".join(h.words() for h in breaking) + ", which the new CHECK refuses"
        steps = replace_check(
            schema,
            name,
            column,
            check.name,
            valued.values,
            ours=mine,
            drop=check.name,
            breaks=breaks,
        )
        which = "it" if len(refused) == 1 else "them"
        out.append(
            Disagreement(
                Kind.value_refused,
                name,
                column,
                f"{valued.says} {quoted(refused)}",
                f"has the CHECK {check.name}, which refuses {which}",
                tuple(steps),
            )
        )
    return out


def _held(
    context: Context,
    valued: Valued,
    held: list[Holding],
    renames: dict[str, str],
    ours: bool,
) -> list[Disagreement]:
    """Rows holding a value the manifest does not list: renamed as asked, or said."""
    schema, name, column = context.schema, valued.table, valued.column
    table = context.quoted_table(name)
    out: list[Disagreement] = []
    for found in held:
        new = renames.get(found.value)
        if new is not None and new in valued.values:
            step = rename_value(schema, name, column, found.value, new, ours)
            out.append(
                Disagreement(
                    Kind.value_renamed,
                    name,
                    column,
                    f"lists '{new}' in place of '{found.value}' (renamed, as asked)",
                    f"has {found.holding_words()}",
                    (step,),
                )
            )
            continue
        advice = (
            f"list '{found.value}' in the manifest, or move those rows (UPDATE {table} SET "
            f"{column} = '…' WHERE {column} = '{found.value}';)"
        )
        out.append(
            Disagreement(
                Kind.unlisted_value,
                name,
                column,
                f"does not list '{found.value}'",
                f"has {found.holding_words()}",
                advice=advice,
            )
        )
    return out


def _indexes(context: Context, name: str) -> list[Disagreement]:
    """The indexes the clock wants on this table that the database lacks (or holds invalid)."""
    out: list[Disagreement] = []
    ours = context.made.table(context.schema, name)
    for statement in timed_indexes(context.app):
        if index_table(statement) != name:
            continue
        index = index_name(statement)
        if context.catalogue.indexes.get(index):
            continue
        columns = ", ".join(re.findall(r'"([^"]+)"', statement.split("(", 1)[1].split(")")[0]))
        has = "holds it invalid" if index in context.catalogue.indexes else "has no such index"
        out.append(
            Disagreement(
                Kind.index_missing,
                name,
                None,
                f"reads it by ({columns}) each minute (index {index})",
                has,
                (
                    make_index(
                        context.schema, statement, ours, rebuild=index in context.catalogue.indexes
                    ),
                ),
            )
        )
    return out
