"""The steps a plan is made of, each an Alembic operation and the SQL it renders: a schema or
table made, a column added, renamed, retyped, emptied of NOT NULL or dropped, a CHECK of a
column's values replaced, a value renamed in the rows, an index made, and the SQL only a
DBA runs (never a migration)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic.operations import MigrateOperation, ops
from sqlalchemy.dialects.postgresql.base import PGDialect

from core.agreement.plan import Order, Step, render
from core.store.install import concurrently, index_item, index_name, index_table, made_with
from core.store.made import MadeItem, MadeKind


def raw(sql: str) -> sa.TextClause:
    """A statement of our own as SQLAlchemy text (a `:` in it is no parameter)."""
    return sa.text(sql.replace(":", r"\:"))


def step(order: Order, table: str, operation: MigrateOperation, ours: bool, **more: Any) -> Step:
    """A step whose SQL is what Alembic renders for its operation."""
    return Step(order, table, render(operation), (operation,), ours, **more)


def make_schema(schema: str) -> Step:
    """The app's schema, made when missing (it alters nothing there)."""
    operation = ops.ExecuteSQLOp(sa.schema.CreateSchema(schema, if_not_exists=True))
    return step(Order.schema, "", operation, True)


def make_table(table: sa.Table) -> Step:
    """A table the database lacks, made as Adminium makes it (recorded as Adminium's)."""
    return step(
        Order.table,
        table.name,
        ops.CreateTableOp.from_table(table),
        True,
        makes=tuple(made_with(table)),
    )


def add_column(
    schema: str, table: str, column: sa.Column[Any], ours: bool, breaks: str | None
) -> list[Step]:
    """A column the table lacks, with its default (which fills the rows already there); an
    enum is a varchar with a CHECK of its values, as `build_metadata` makes it."""
    added = column._copy()
    kind = column.type
    check: list[Step] = []
    if isinstance(kind, sa.Enum):
        added.type = sa.String(kind.length)
        name = str(kind.name)
        check = replace_check(schema, table, column.name, name, kind.enums, ours=ours, drop=None)
    made = (MadeItem(schema, table, MadeKind.column, column.name),)
    operation = ops.AddColumnOp(table, added, schema=schema)
    return [step(Order.add_column, table, operation, ours, breaks=breaks, makes=made), *check]


def rename_column(schema: str, table: str, old: str, new: str, ours: bool) -> Step:
    """A column renamed as asked (`--rename table.old=new`): destructive."""
    operation = ops.AlterColumnOp(table, old, schema=schema, modify_name=new)
    return step(
        Order.rename,
        table,
        operation,
        ours,
        destructive=True,
        makes=(MadeItem(schema, table, MadeKind.column, new),),
        unmakes=(MadeItem(schema, table, MadeKind.column, old),),
    )


def retype(
    schema: str,
    table: str,
    column: str,
    kind: sa.types.TypeEngine[Any],
    ours: bool,
    *,
    widen: bool,
    breaks: str | None = None,
) -> Step:
    """A column's type changed: widened (a longer varchar, text), or changed (destructive:
    every value is cast, and rows that do not cast refuse it)."""
    using = None if widen else f"{column}::{kind.compile(dialect=_DIALECT)}"
    operation = ops.AlterColumnOp(
        table, column, schema=schema, modify_type=kind, postgresql_using=using
    )
    return step(Order.alter_type, table, operation, ours, destructive=not widen, breaks=breaks)


def replace_check(
    schema: str,
    table: str,
    column: str,
    name: str,
    values: Sequence[str],
    *,
    ours: bool,
    drop: str | None,
    breaks: str | None = None,
) -> list[Step]:
    """The CHECK of a column's values made anew (the one named `drop` dropped first, before
    the column is widened and its rows renamed): the state or enum column then takes
    exactly the manifest's values."""
    check = sa.column(column).in_(list(values))
    added = ops.CreateCheckConstraintOp(name, table, check, schema=schema)
    made = (MadeItem(schema, table, MadeKind.constraint, name),)
    adding = step(Order.add_constraint, table, added, ours, breaks=breaks, makes=made)
    if drop is None:
        return [adding]
    dropped = ops.DropConstraintOp(drop, table, type_="check", schema=schema)
    unmade = (MadeItem(schema, table, MadeKind.constraint, drop),)
    return [step(Order.drop_constraint, table, dropped, ours, unmakes=unmade), adding]


def rename_value(schema: str, table: str, column: str, old: str, new: str, ours: bool) -> Step:
    """The rows holding `old` given `new` instead (`--rename table.column.old=new`)."""
    target = sa.table(table, sa.column(column, sa.Text), schema=schema)
    update = sa.update(target).where(target.c[column] == old).values({column: new})
    return step(Order.update, table, ops.ExecuteSQLOp(update), ours, destructive=True)


def drop_column(schema: str, table: str, column: str, ours: bool) -> Step:
    """A column of Adminium's the manifest no longer names, dropped (destructive)."""
    operation = ops.DropColumnOp(table, column, schema=schema)
    unmade = (MadeItem(schema, table, MadeKind.column, column),)
    return step(Order.drop_column, table, operation, ours, destructive=True, unmakes=unmade)


def nullable(
    schema: str, table: str, column: str, empty: bool, ours: bool, breaks: str | None = None
) -> Step:
    """A column let be empty (`DROP NOT NULL`), or made never empty (`SET NOT NULL`)."""
    operation = ops.AlterColumnOp(table, column, schema=schema, modify_nullable=empty)
    return step(Order.nullability, table, operation, ours, breaks=breaks)


def make_index(schema: str, statement: str, ours: bool, *, rebuild: bool = False) -> Step:
    """An index the clock wants: built plainly in a migration's transaction, printed for a
    DBA as a build that keeps the table open to writers; one a failed build left invalid
    (`rebuild`) is dropped first."""
    operations: list[MigrateOperation] = [ops.ExecuteSQLOp(raw(statement))]
    sql = concurrently(statement) + ";"
    if rebuild:
        drop = f'DROP INDEX IF EXISTS "{schema}"."{index_name(statement)}"'
        operations.insert(0, ops.ExecuteSQLOp(raw(drop)))
        sql = f"{drop.replace('DROP INDEX', 'DROP INDEX CONCURRENTLY', 1)}; {sql}"
    return Step(
        Order.index,
        index_table(statement),
        sql,
        tuple(operations),
        ours,
        makes=(index_item(schema, statement),),
        in_preview=False,
    )


def dba_only(order: Order, table: str, sql: str) -> Step:
    """SQL only the venue's DBA runs (never a migration): a unique key, row-level security,
    an enum type's new label, a default on a key."""
    return Step(order, table, sql, (ops.ExecuteSQLOp(raw(sql)),), ours=False, in_preview=False)


_DIALECT = PGDialect()  # type: ignore[no-untyped-call]
