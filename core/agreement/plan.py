"""The plan: the SQL that makes an app's tables agree with its manifest, one step a
statement, rendered as Alembic's offline `--sql` renders a migration (statements a person
can read and apply), and applied on the tables Adminium made in one transaction.

A step knows what it alters (a table of Adminium's, or the venue's), whether it is
destructive (drops or renames a column, narrows a type: `--yes` as well as `--migrate`),
and which rows would refuse it (then it is refused, naming how many and which). A table
Adminium did not make is never altered here: its steps are for its DBA.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum

from alembic.migration import MigrationContext
from alembic.operations import MigrateOperation, Operations
from sqlalchemy.engine import Connection

from core.store.made import MadeItem, forget_made, record_made


class Order(IntEnum):
    """Where a step goes in the plan: a schema before its tables, a CHECK dropped before the
    column is widened and its rows renamed, added again after; indexes last."""

    schema = 0
    table = 1
    rename = 2
    drop_constraint = 3
    add_column = 4
    alter_type = 5
    update = 6
    add_constraint = 7
    nullability = 8
    drop_column = 9
    index = 10
    advice = 11


@dataclass(frozen=True)
class Step:
    """One statement of the plan."""

    order: Order
    table: str
    sql: str
    """The statement as a DBA reads and runs it (`CREATE INDEX CONCURRENTLY` for an index)."""
    operations: tuple[MigrateOperation, ...]
    """What a migration runs, in turn (in its one transaction)."""
    ours: bool
    """Whether it alters only what Adminium made (a migration may run it)."""
    destructive: bool = False
    breaks: str | None = None
    """Why rows of the table refuse it (`3 rows hold 'picked_up' (keys 4, 7, 9)`)."""
    makes: tuple[MadeItem, ...] = ()
    unmakes: tuple[MadeItem, ...] = ()
    in_preview: bool = True
    """Whether a preview runs it before reading (an index changes nothing it reads)."""


def render(operation: MigrateOperation) -> str:
    """An operation as the SQL Alembic's offline mode writes for it."""
    buffer = io.StringIO()
    context = MigrationContext.configure(
        dialect_name="postgresql",
        opts={"as_sql": True, "output_buffer": buffer, "literal_binds": True},
    )
    Operations(context).invoke(operation)
    return buffer.getvalue().strip()


def plan_sql(steps: Iterable[Step]) -> list[str]:
    """The plan's statements, in order, each once."""
    return list(dict.fromkeys(step.sql for step in ordered(steps)))


def ordered(steps: Iterable[Step]) -> list[Step]:
    """Steps in the plan's order, each statement once (a step two disagreements share)."""
    unique = {step.sql: step for step in steps}
    return sorted(unique.values(), key=lambda step: step.order)


@dataclass(frozen=True)
class Verdict:
    """What a migration may do with a plan: the steps it runs, the steps left to the
    venue's DBA (tables Adminium did not make), and why it refuses (empty: it may run)."""

    run: tuple[Step, ...]
    left: tuple[Step, ...]
    refusals: tuple[str, ...]


def judge(steps: Sequence[Step], *, yes: bool) -> Verdict:
    """Which steps a migration runs (`--migrate`, `--yes` for the destructive), which it
    leaves to the venue's DBA, and the refusals: a step rows would break, a destructive
    step without `yes`."""
    run: list[Step] = []
    left: list[Step] = []
    refusals: list[str] = []
    for step in ordered(steps):
        if not step.ours:
            left.append(step)
        elif step.breaks is not None:
            refusals.append(f"{step.table}: not migrated while {step.breaks}: {step.sql}")
        elif step.destructive and not yes:
            refusals.append(f"{step.table}: destructive, run again with --yes: {step.sql}")
        else:
            run.append(step)
    return Verdict(tuple(run), tuple(left), tuple(refusals))


def apply_steps(conn: Connection, app: str, steps: Iterable[Step]) -> None:
    """Run the steps in order on `conn`, in the caller's transaction (which holds the install
    lock), and record what they made and took away."""
    operations = Operations(MigrationContext.configure(connection=conn))
    for step in ordered(steps):
        for operation in step.operations:
            operations.invoke(operation)
        forget_made(conn, step.unmakes)
        record_made(conn, app, step.makes)
