"""The one comparison of an app's manifest with the connection's tables.

Alembic's autogenerate comparison (`alembic.autogenerate.compare_metadata`) of the tables the
manifest builds (`core.store.install.build_metadata`) with the database finds the tables and
columns missing, the columns the manifest does not know, and the types and NOT NULLs that
differ; the fit of each type is judged by `core.agreement.fit`. Ours (`core.agreement.ours`)
adds what Alembic does not compare: the states and enum values a column's length, enum type
or CHECKs refuse, the rows holding a value the manifest does not list, a key that is not
unique, row-level security, an index the clock wants. Each is a `Disagreement`: one sentence
with the SQL that fixes it; together their steps are the plan (`core.agreement.plan`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.engine import Connection

from core.agreement.catalogue import ColumnFacts, qualified, read_catalogue, read_fingerprint
from core.agreement.disagreement import Disagreement, Kind
from core.agreement.fit import fits, type_words
from core.agreement.ours import Context, table_checks
from core.agreement.plan import Step, Verdict, judge, ordered
from core.agreement.steps import (
    add_column,
    drop_column,
    make_index,
    make_schema,
    make_table,
    nullable,
    rename_column,
    retype,
)
from core.agreement.values import counted_rows
from core.manifest.model import App, Column
from core.store.install import index_table, timed_indexes
from core.store.made import MadeKind, read_made


@dataclass(frozen=True)
class Renames:
    """Renames a migration is asked to make (`--rename`): columns, and values of a column."""

    columns: Mapping[tuple[str, str], str] = field(default_factory=dict)
    """(table, old column) -> new column."""
    values: Mapping[tuple[str, str, str], str] = field(default_factory=dict)
    """(table, column, old value) -> new value."""


NO_RENAMES = Renames()


@dataclass(frozen=True)
class Comparison:
    """Whether an app's manifest and its tables agree: each disagreement, and the
    catalogue's fingerprint it was read at."""

    app: str
    schema: str
    disagreements: tuple[Disagreement, ...]
    fingerprint: str
    unused: tuple[str, ...] = ()
    """Renames asked for that name no column the database has."""

    @property
    def agree(self) -> bool:
        """No disagreement at all."""
        return not self.disagreements

    @property
    def blocking(self) -> list[Disagreement]:
        """The disagreements the tables cannot serve the manifest with."""
        return [d for d in self.disagreements if d.blocks]

    @property
    def steps(self) -> list[Step]:
        """The plan: every disagreement's steps, in order, each statement once."""
        return ordered(step for d in self.disagreements for step in d.steps)

    def verdict(self, *, yes: bool) -> Verdict:
        """What `--migrate` (and `--yes`) would run, leave to the DBA, and refuse: besides
        the steps refused, each disagreement the tables cannot serve that only the venue's
        DBA may fix (Adminium did not make what it alters)."""
        judged = judge(self.steps, yes=yes)
        theirs = []
        for disagreement in self.blocking:
            sql = " ".join(s.sql for s in disagreement.steps if not s.ours)
            if sql:
                theirs.append(
                    f"{disagreement.where}: Adminium did not make it, so it never alters it;"
                    f" its DBA runs: {sql}"
                )
        return Verdict(judged.run, judged.left, (*judged.refusals, *theirs))

    def install_verdict(self, *, create_tables: bool, migrate: bool, yes: bool) -> Verdict:
        """What `app add` runs on the tables and what it refuses: with `migrate`, the plan
        (`verdict`); else, with `create_tables`, the tables the database lacks and the
        indexes the clock wants on Adminium's tables; and the disagreements left that the
        tables cannot serve the manifest with, each refused by its sentence."""
        if migrate:
            return self.verdict(yes=yes)
        made = {Kind.table_missing, Kind.index_missing} if create_tables else set()
        run = [s for d in self.disagreements if d.kind in made for s in d.steps if s.ours]
        left = [s for s in self.steps if s not in run]
        refusals = [d.sentence for d in self.blocking if d.kind not in made]
        return Verdict(tuple(ordered(run)), tuple(left), tuple(refusals))

    def sentences(self) -> list[str]:
        """Each disagreement's sentence, the blocking first."""
        return [d.sentence for d in sorted(self.disagreements, key=lambda d: not d.blocks)]


def compare_tables(conn: Connection, app: App, *, renames: Renames = NO_RENAMES) -> Comparison:
    """Compare the app's manifest with the tables of `conn`'s database (read only; a
    query the connection's user may not run is left out, in a savepoint of its own)."""
    schema = app.schema_name
    catalogue = read_catalogue(conn, schema, app.tables)
    context = Context(conn, app, catalogue, read_made(conn, [schema]), renames.values)
    out: list[Disagreement] = []
    renamed = _renames(context, renames, out)
    for diff in _alembic_diffs(conn, app, context.metadata):
        out.extend(_judged(context, diff, renamed))
    for name in app.tables:
        if name in catalogue.tables:
            out.extend(table_checks(context, name))
    fingerprint = read_fingerprint(conn, qualified(schema, app.tables))
    unused = tuple(
        f"--rename {table}.{old}={new}: {table} has no column {old}"
        for (table, old), new in renames.columns.items()
        if (table, old) not in renamed.old
    )
    return Comparison(app.name, schema, tuple(out), fingerprint, unused)


def _alembic_diffs(conn: Connection, app: App, metadata: sa.MetaData) -> list[tuple[Any, ...]]:
    """Alembic's differences between the manifest's tables and the database's, of the app's
    tables only (the venue's other tables are not the manifest's business)."""
    schema, tables = app.schema_name, set(app.tables)
    default = conn.dialect.default_schema_name

    def include_name(name: str | None, kind: str, parent: Any) -> bool:
        if kind == "schema":
            return name == schema or (name is None and schema == default)
        return name in tables if kind == "table" else True

    context = MigrationContext.configure(
        conn, opts={"include_schemas": True, "include_name": include_name, "compare_type": True}
    )
    flat: list[tuple[Any, ...]] = []
    with warnings.catch_warnings():
        # SQLAlchemy's reflection of a CHECK made NOT VALID hands the CHECK a keyword of
        # its own it then warns it cannot place; the CHECK is judged as ours, not Alembic's.
        warnings.filterwarnings(
            "ignore", "Can't validate argument 'dialect_options'", sa.exc.SAWarning
        )
        diffs = compare_metadata(context, metadata)
    for diff in diffs:
        flat.extend(diff if isinstance(diff, list) else [diff])
    return flat


@dataclass
class _Renamed:
    """The column renames the database can make: (table, old) and (table, new) each."""

    old: set[tuple[str, str]] = field(default_factory=set)
    new: set[tuple[str, str]] = field(default_factory=set)


def _renames(context: Context, renames: Renames, out: list[Disagreement]) -> _Renamed:
    """The column renames asked that the database can make, each a disagreement of its own
    (and its type judged on the column as it is)."""
    done = _Renamed()
    for (table, old), new in renames.columns.items():
        facts = context.catalogue.tables.get(table)
        if facts is None or old not in facts.columns or new in facts.columns:
            continue
        spec = _column(context.app, table, new)
        if spec is None:
            continue
        ours = context.made.table(context.schema, table)
        steps = [rename_column(context.schema, table, old, new, ours)]
        out.append(
            Disagreement(
                Kind.column_renamed,
                table,
                new,
                f"names {new} (renamed from {old}, as asked)",
                f"has {old}",
                tuple(steps),
            )
        )
        done.old.add((table, old))
        done.new.add((table, new))
        out.extend(_typed(context, table, spec, facts.columns[old], ours))
    return done


def _judged(context: Context, diff: tuple[Any, ...], renamed: _Renamed) -> list[Disagreement]:
    """One of Alembic's differences as our disagreements (none when it serves)."""
    kind = diff[0]
    if kind == "add_table":
        return [_table_missing(context, diff[1])]
    if kind not in ("add_column", "remove_column", "modify_type", "modify_nullable"):
        return []  # indexes, keys and foreign keys are judged as ours, or not at all
    table = diff[2]
    facts = context.catalogue.tables.get(table)
    if facts is None:
        return []
    if kind == "add_column":
        column: sa.Column[Any] = diff[3]
        if (table, column.name) in renamed.new:
            return []
        return [_column_missing(context, table, column)]
    name = diff[3].name if kind == "remove_column" else diff[3]
    if kind == "remove_column":
        if (table, name) in renamed.old or name not in facts.columns:
            return []
        return _unknown(context, table, facts.columns[name])
    spec = _column(context.app, table, name)
    if spec is None or name not in facts.columns:
        return []
    ours = context.made.table(context.schema, table)
    if kind == "modify_type":
        return _typed(context, table, spec, facts.columns[name], ours)
    return _nullability(context, table, spec, facts.columns[name], ours)


def _column(app: App, table: str, name: str) -> Column | None:
    """The manifest's column of that name (the state column may be left unlisted)."""
    return next((c for c in app.tables[table].columns if c.ref == name), None)


def _table_missing(context: Context, table: sa.Table) -> Disagreement:
    """A table the manifest names and the database lacks: made, with its indexes."""
    schema = context.schema
    steps = [] if context.catalogue.schema_there else [make_schema(schema)]
    steps.append(make_table(table))
    wanted = [s for s in timed_indexes(context.app) if index_table(s) == table.name]
    steps += [make_index(schema, statement, True) for statement in wanted]
    return Disagreement(
        Kind.table_missing,
        table.name,
        None,
        f"names a table {table.name}",
        f"has none in schema {schema}",
        tuple(steps),
    )


def _column_missing(context: Context, table: str, column: sa.Column[Any]) -> Disagreement:
    """A column the manifest names and the table lacks: added with its default."""
    spec = _column(context.app, table, column.name)
    ours = context.made.table(context.schema, table)
    breaks = None
    if not column.nullable and column.server_default is None:
        rows = counted_rows(context.conn, context.schema, table, None, None)
        if rows is not None:
            breaks = (
                f"{table} holds {rows.rows()} and the manifest gives {column.name} no default "
                '(give it a "default", or "nullable": true)'
            )
    words = type_words(spec.type) if spec is not None else "text"
    if spec is not None and spec.max_length:
        words += f" of at most {spec.max_length} characters"
    return Disagreement(
        Kind.column_missing,
        table,
        column.name,
        f"says {words}",
        "has no such column",
        tuple(add_column(context.schema, table, column, ours, breaks)),
    )


def _unknown(context: Context, table: str, facts: ColumnFacts) -> list[Disagreement]:
    """A column the manifest does not know: a disagreement only when no new row can be made
    without it (NOT NULL, no default). Adminium's own column is dropped (destructive); the
    venue's is let be empty, by its DBA."""
    if not facts.not_null or facts.fills_itself:
        return []
    schema = context.schema
    ours = context.made.has(schema, table, MadeKind.column, facts.name)
    if ours:
        steps = [drop_column(schema, table, facts.name, True)]
        held = counted_rows(context.conn, schema, table, None, sa.column(facts.name).is_not(None))
        lost = f" ({held.hold('a value there')}, lost with it)" if held else ""
        advice = "or add it to the manifest with a default"
    else:
        steps = [nullable(schema, table, facts.name, True, False)]
        lost = ""
        advice = "or add it to the manifest with a default, or give it one in the database"
    return [
        Disagreement(
            Kind.unknown_not_null,
            table,
            facts.name,
            "does not know this column",
            f"has it {facts.shown} NOT NULL with no default, so creates will be refused{lost}",
            tuple(steps),
            advice,
        )
    ]


def _typed(
    context: Context, table: str, spec: Column, facts: ColumnFacts, ours: bool
) -> list[Disagreement]:
    """A column whose type Alembic sees differ: a disagreement when its base type does not
    serve the manifest's type, or a text column keeps fewer characters than `maxLength`
    (the values of a state or enum column are judged as ours)."""
    schema = context.schema
    if fits(spec.type, facts.base):
        short = spec.type == "text" and spec.max_length and facts.length
        if not short or facts.length is None or spec.max_length is None:
            return []
        if facts.length >= spec.max_length:
            return []
        widen = retype(schema, table, spec.ref, sa.String(spec.max_length), ours, widen=True)
        return [
            Disagreement(
                Kind.too_short,
                table,
                spec.ref,
                f"lets it hold {spec.max_length} characters",
                f"keeps at most {facts.length} characters ({facts.shown})",
                (widen,),
            )
        ]
    target = _sql_type(context, table, spec.ref)
    breaks = context.not_casting(table, spec, facts)
    step = retype(schema, table, spec.ref, target, ours, widen=False, breaks=breaks)
    return [
        Disagreement(
            Kind.type_differs,
            table,
            spec.ref,
            f"says {type_words(spec.type)}",
            f"has {facts.shown}",
            (step,),
        )
    ]


def _sql_type(context: Context, table: str, column: str) -> sa.types.TypeEngine[Any]:
    """The type Adminium makes for a manifest column (an enum as the varchar it is)."""
    kind = context.metadata_column(table, column).type
    return sa.String(kind.length) if isinstance(kind, sa.Enum) else kind


def _nullability(
    context: Context, table: str, spec: Column, facts: ColumnFacts, ours: bool
) -> list[Disagreement]:
    """A column the manifest lets be empty that the database keeps NOT NULL (a write
    leaving it empty fails), or the other way about (rows may hold no value)."""
    schema, name = context.schema, spec.ref
    if spec.nullable and facts.not_null:
        step = nullable(schema, table, name, True, ours)
        return [
            Disagreement(Kind.not_null, table, name, "lets it be empty", "has it NOT NULL", (step,))
        ]
    if spec.nullable or facts.not_null or name == context.app.tables[table].key:
        return []
    held = counted_rows(context.conn, schema, table, context.key(table), sa.column(name).is_(None))
    breaks = f"{held.hold('no value there')} ({held.keys_words()})" if held else None
    step = nullable(schema, table, name, False, ours, breaks)
    return [
        Disagreement(
            Kind.may_be_empty,
            table,
            name,
            'says it is never empty (no "nullable": true)',
            "lets it be empty",
            (step,),
        )
    ]
