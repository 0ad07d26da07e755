"""The comparison's pure parts: the fit of each manifest type, the sentence a disagreement
is, the plan's order, and what a migration runs, leaves to the venue's DBA, or refuses."""

from __future__ import annotations

from typing import get_args

import pytest
import sqlalchemy as sa
from alembic.operations import ops

from core.agreement.disagreement import BLOCKING, Disagreement, Kind
from core.agreement.fit import ENUM, FITS, fits
from core.agreement.plan import Order, Step, judge, ordered, plan_sql, render
from core.agreement.steps import add_column, drop_column, make_index, replace_check
from core.manifest.model import ColumnType


def test_every_manifest_type_has_its_line_in_the_fit_table() -> None:
    assert set(FITS) == set(get_args(ColumnType))


@pytest.mark.parametrize(
    ("manifest_type", "base", "serves"),
    [
        pytest.param("integer", "bigint", True, id="bigint_serves_integer"),
        pytest.param("integer", "numeric", False, id="numeric_rounds_no_integer"),
        pytest.param("numeric", "integer", False, id="integer_rounds_a_numeric"),
        pytest.param("timestamptz", "timestamp without time zone", False, id="wall_time"),
        pytest.param("timestamp", "timestamp without time zone", True, id="wall_time_typed"),
        pytest.param("text", "character varying", True, id="varchar_is_text"),
        pytest.param("enum", ENUM, True, id="an_enum_type_serves_an_enum"),
        pytest.param("text", ENUM, False, id="an_enum_type_takes_no_free_text"),
        pytest.param("uuid", "text", False, id="text_is_no_uuid"),
        pytest.param("boolean", "integer", False, id="integer_is_no_boolean"),
    ],
)
def test_a_base_type_serves_a_manifest_type_or_not(
    manifest_type: str, base: str, serves: bool
) -> None:
    assert fits(manifest_type, base) is serves


def test_alembic_renders_each_step_as_a_dba_reads_it() -> None:
    column = sa.Column("table_no", sa.Integer(), nullable=False, server_default=sa.text("0"))
    [step] = add_column("kitchen", "orders", column, True, None)
    assert step.sql == "ALTER TABLE kitchen.orders ADD COLUMN table_no INTEGER DEFAULT 0 NOT NULL;"
    assert render(ops.DropColumnOp("orders", "note", schema="kitchen")) == (
        "ALTER TABLE kitchen.orders DROP COLUMN note;"
    )


def test_a_new_enum_column_is_a_varchar_and_a_check_of_its_values() -> None:
    column = sa.Column(
        "channel", sa.Enum("web", "phone", native_enum=False, length=5, name="ck_orders_channel")
    )
    steps = add_column("kitchen", "orders", column, True, None)
    assert [s.sql for s in steps] == [
        "ALTER TABLE kitchen.orders ADD COLUMN channel VARCHAR(5);",
        "ALTER TABLE kitchen.orders ADD CONSTRAINT ck_orders_channel CHECK (channel IN ('web', "
        "'phone'));",
    ]


def test_the_plan_drops_a_check_before_the_column_widens_and_adds_it_after() -> None:
    index = make_index(
        "kitchen", 'CREATE INDEX IF NOT EXISTS "ix" ON "kitchen"."orders" ("a")', True
    )
    check = replace_check("kitchen", "orders", "status", "ck", ["a", "b"], ours=True, drop="ck")
    widen = Step(Order.alter_type, "orders", "widen;", (), True)
    plan = ordered([index, *reversed(check), widen])
    assert [s.order for s in plan] == [
        Order.drop_constraint,
        Order.alter_type,
        Order.add_constraint,
        Order.index,
    ]
    assert index.sql == 'CREATE INDEX CONCURRENTLY IF NOT EXISTS "ix" ON "kitchen"."orders" ("a");'
    assert not index.in_preview


def step(order: Order = Order.add_column, **more: object) -> Step:
    """A step with SQL of its own (the judge reads its marks, not its SQL)."""
    fields = {"ours": True, **more}
    return Step(order, "orders", f"{order.name} {sorted(more)};", (), **fields)  # type: ignore[arg-type]


def test_a_migration_runs_adminiums_steps_and_leaves_the_venues() -> None:
    ours, theirs = step(), step(Order.nullability, ours=False)
    verdict = judge([theirs, ours], yes=False)
    assert verdict.run == (ours,) and verdict.left == (theirs,) and verdict.refusals == ()


def test_a_destructive_step_needs_yes_and_a_breaking_one_is_refused_anyway() -> None:
    drop = drop_column("kitchen", "orders", "items", True)
    breaking = step(Order.add_constraint, breaks="1 row holds 'x' (keys 3)")
    assert judge([drop], yes=False).refusals == (
        "orders: destructive, run again with --yes: ALTER TABLE kitchen.orders DROP COLUMN items;",
    )
    assert judge([drop], yes=True).run == (drop,)
    for yes in (False, True):
        verdict = judge([breaking], yes=yes)
        assert verdict.run == ()
        assert verdict.refusals == (
            f"orders: not migrated while 1 row holds 'x' (keys 3): {breaking.sql}",
        )


def test_a_disagreement_is_one_sentence_with_its_fix() -> None:
    column = sa.Column("table_no", sa.Integer(), nullable=True)
    found = Disagreement(
        Kind.column_missing,
        "orders",
        "table_no",
        "says integer",
        "has no such column",
        tuple(add_column("kitchen", "orders", column, True, None)),
    )
    assert found.sentence == (
        "orders.table_no: the manifest says integer, the database has no such column; fix: "
        "ALTER TABLE kitchen.orders ADD COLUMN table_no INTEGER;"
    )
    assert found.blocks and found.json()["sql"] == plan_sql(found.steps)
    note = Disagreement(Kind.rows_hidden, "orders", None, "shows every row", "hides", advice="ask")
    assert not note.blocks and note.sentence == (
        "orders: the manifest shows every row, the database hides; fix: ask"
    )


def test_what_blocks_is_what_a_write_or_read_would_fail_on() -> None:
    serving = set(Kind) - BLOCKING
    assert serving == {
        Kind.too_short,
        Kind.may_be_empty,
        Kind.rows_hidden,
        Kind.index_missing,
        Kind.unlisted_value,
    }
