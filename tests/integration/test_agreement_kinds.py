"""The comparison of a manifest with the venue's own tables: each kind of disagreement, one
sentence naming `table.column`, what the manifest says, what the database has and the SQL
that fixes it; none where they agree. Each case is a POS table made by hand in a schema of
its own (the venue's: Adminium made nothing there), compared on real PostgreSQL."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa
from psycopg import sql

from core.agreement.compare import Comparison, Renames, compare_tables
from core.agreement.disagreement import Kind
from core.manifest.model import load_app
from core.store.store import make_engine

pytestmark = pytest.mark.integration

TABS = """CREATE TABLE {s}.tabs (
    id serial PRIMARY KEY,
    status varchar(12) NOT NULL,
    opened_at timestamptz NOT NULL,
    note text
)"""


def pos(schema: str) -> dict[str, Any]:
    """The manifest of the venue's till: tabs that are open, then paid or voided."""
    return {
        "name": "pos",
        "schema": schema,
        "tables": {
            "tabs": {
                "key": "id",
                "columns": [
                    {"ref": "id", "type": "serial"},
                    {"ref": "status", "type": "text", "maxLength": 12},
                    {"ref": "opened_at", "type": "timestamptz"},
                    {"ref": "note", "type": "text", "nullable": True},
                ],
                "states": {
                    "column": "status",
                    "initial": "open",
                    "moves": {"open": ["paid", "voided"]},
                },
            }
        },
    }


@pytest.fixture(scope="module")
def database(server_database_url: str) -> Iterator[sa.Engine]:
    """One database for the module; each case keeps its tables in a schema of its own."""
    name = f"adm_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_database_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    info = psycopg.conninfo.conninfo_to_dict(server_database_url)
    engine = make_engine(psycopg.conninfo.make_conninfo(**{**info, "dbname": name}))
    yield engine
    engine.dispose()
    with psycopg.connect(server_database_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


Compare = Callable[..., Comparison]


@pytest.fixture
def compared(database: sa.Engine) -> Compare:
    """Factory: make the venue's tables in a fresh schema (`ddl`, `{s}` for the schema),
    change the manifest as `change` says, and compare the two."""

    def compare(
        ddl: list[str],
        change: Callable[[dict[str, Any]], None] = lambda m: None,
        renames: Renames | None = None,
    ) -> Comparison:
        schema = f"s{uuid.uuid4().hex[:8]}"
        with database.begin() as conn:
            conn.execute(sa.text(f"CREATE SCHEMA {schema}"))
            for statement in ddl:
                conn.execute(sa.text(statement.format(s=schema)))
        manifest = pos(schema)
        change(manifest)
        with database.connect() as conn:
            return compare_tables(conn, load_app(manifest), renames=renames or Renames())

    return compare


def tabs(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest's tabs table."""
    table: dict[str, Any] = manifest["tables"]["tabs"]
    return table


def column(manifest: dict[str, Any], ref: str) -> dict[str, Any]:
    """One column of the tabs table."""
    found: dict[str, Any] = next(c for c in tabs(manifest)["columns"] if c["ref"] == ref)
    return found


def only(comparison: Comparison) -> str:
    """The one sentence of a comparison that found exactly one disagreement."""
    sentences = comparison.sentences()
    assert len(sentences) == 1, sentences
    return sentences[0].replace(comparison.schema, "S")


def test_tables_made_as_the_manifest_says_agree(compared: Compare) -> None:
    found = compared([TABS])
    assert found.agree and found.sentences() == []
    assert found.steps == []


def test_a_table_the_database_lacks(compared: Compare) -> None:
    def add_tips(manifest: dict[str, Any]) -> None:
        manifest["tables"]["tips"] = {
            "key": "id",
            "columns": [{"ref": "id", "type": "serial"}, {"ref": "amount", "type": "numeric"}],
        }

    found = compared([TABS], add_tips)
    [disagreement] = found.disagreements
    assert disagreement.kind is Kind.table_missing and disagreement.blocks
    assert disagreement.sentence.replace(found.schema, "S") == (
        "tips: the manifest names a table tips, the database has none in schema S; fix: "
        "CREATE TABLE S.tips (\n    id SERIAL NOT NULL, \n    amount NUMERIC NOT NULL, \n"
        "    PRIMARY KEY (id)\n);"
    )


def test_a_column_the_table_lacks(compared: Compare) -> None:
    def add(manifest: dict[str, Any]) -> None:
        tabs(manifest)["columns"].append({"ref": "table_no", "type": "integer"})

    assert only(compared([TABS], add)) == (
        "tabs.table_no: the manifest says integer, the database has no such column; "
        "fix: ALTER TABLE S.tabs ADD COLUMN table_no INTEGER NOT NULL;"
    )


def test_a_type_that_does_not_fit(compared: Compare) -> None:
    ddl = TABS.replace("opened_at timestamptz", "opened_at text")
    found = compared([ddl])
    assert found.disagreements[0].kind is Kind.type_differs
    assert only(found) == (
        "tabs.opened_at: the manifest says timestamptz, the database has text; fix: ALTER TABLE "
        "S.tabs ALTER COLUMN opened_at TYPE TIMESTAMP WITH TIME ZONE USING "
        "opened_at::TIMESTAMP WITH TIME ZONE;"
    )


@pytest.mark.parametrize(
    ("kind", "manifest_type"),
    [
        pytest.param("bigint", "integer", id="bigint_holds_an_integer"),
        pytest.param("smallint", "serial", id="smallint_holds_a_serial"),
        pytest.param("double precision", "numeric", id="double_holds_a_numeric"),
        pytest.param("character varying(40)", "text", id="varchar_holds_text"),
    ],
)
def test_a_wider_or_kin_type_fits(compared: Compare, kind: str, manifest_type: str) -> None:
    ddl = TABS.replace("note text", f"note {kind}")

    def retype(manifest: dict[str, Any]) -> None:
        column(manifest, "note")["type"] = manifest_type

    assert compared([ddl], retype).agree


def test_a_text_column_shorter_than_max_length(compared: Compare) -> None:
    ddl = TABS.replace("note text", "note varchar(10)")

    def longer(manifest: dict[str, Any]) -> None:
        column(manifest, "note")["maxLength"] = 40

    found = compared([ddl], longer)
    assert not found.disagreements[0].blocks  # a longer note is refused, the rest serves
    assert only(found) == (
        "tabs.note: the manifest lets it hold 40 characters, the database keeps at most 10 "
        "characters (character varying(10)); fix: ALTER TABLE S.tabs ALTER COLUMN note TYPE "
        "VARCHAR(40);"
    )


def test_a_state_longer_than_the_column_keeps(compared: Compare) -> None:
    ddl = TABS.replace("status varchar(12)", "status varchar(4)")

    def short(manifest: dict[str, Any]) -> None:
        column(manifest, "status")["maxLength"] = 4

    found = compared([ddl], short)
    assert only(found) == (
        "tabs.status: the manifest moves into 'voided', the database keeps at most 4 "
        "characters (character varying(4)); fix: ALTER TABLE S.tabs ALTER COLUMN status TYPE "
        "VARCHAR(6);"
    )
    assert found.disagreements[0].kind is Kind.value_refused and found.disagreements[0].blocks


def test_a_state_the_enum_type_has_no_label_for(compared: Compare) -> None:
    ddl = [
        "CREATE TYPE {s}.tab_state AS ENUM ('open', 'paid')",
        TABS.replace("status varchar(12)", "status {s}.tab_state"),
    ]

    def as_enum(manifest: dict[str, Any]) -> None:
        column(manifest, "status").update(type="enum", values=["open", "paid", "voided"])
        column(manifest, "status").pop("maxLength")

    found = compared(ddl, as_enum)
    assert only(found) == (
        "tabs.status: the manifest moves into 'voided', the database has the enum type "
        "S.tab_state, whose labels are 'open' and 'paid'; fix: ALTER TYPE S.tab_state ADD VALUE "
        "IF NOT EXISTS 'voided';"
    )


def test_a_check_of_the_venues_that_refuses_a_state(compared: Compare) -> None:
    ddl = TABS.replace(
        "status varchar(12) NOT NULL",
        "status varchar(12) NOT NULL CONSTRAINT tabs_status CHECK (status IN ('open', 'paid'))",
    )
    found = compared([ddl])
    assert only(found) == (
        "tabs.status: the manifest moves into 'voided', the database has the CHECK tabs_status,"
        " which refuses it; fix: ALTER TABLE S.tabs DROP CONSTRAINT tabs_status; ALTER TABLE "
        "S.tabs ADD CONSTRAINT tabs_status CHECK (status IN ('open', 'paid', 'voided'));"
    )
    # The venue's CHECK is its DBA's to change: a migration never runs it.
    assert found.verdict(yes=True).refusals == (
        "tabs.status: Adminium did not make it, so it never alters it; its DBA runs: ALTER TABLE "
        f"{found.schema}.tabs DROP CONSTRAINT tabs_status; ALTER TABLE {found.schema}.tabs ADD "
        "CONSTRAINT tabs_status CHECK (status IN ('open', 'paid', 'voided'));",
    )


def test_a_check_that_lets_every_state_through_agrees(compared: Compare) -> None:
    ddl = TABS.replace(
        "status varchar(12) NOT NULL", "status varchar(12) NOT NULL CHECK (length(status) > 2)"
    )
    assert compared([ddl]).agree


def test_a_not_null_column_the_manifest_does_not_know(compared: Compare) -> None:
    ddl = TABS.replace("note text", "note text, till text NOT NULL")
    found = compared([ddl])
    assert found.disagreements[0].kind is Kind.unknown_not_null
    assert only(found) == (
        "tabs.till: the manifest does not know this column, the database has it text NOT NULL "
        "with no default, so creates will be refused; fix: ALTER TABLE S.tabs ALTER COLUMN till "
        "DROP NOT NULL; or add it to the manifest with a default, or give it one in the database"
    )


def test_a_column_the_manifest_does_not_know_that_fills_itself_agrees(compared: Compare) -> None:
    ddl = TABS.replace("note text", "note text, till text NOT NULL DEFAULT 'bar', extra int")
    assert compared([ddl]).agree


def test_a_column_the_manifest_lets_be_empty_that_the_database_does_not(compared: Compare) -> None:
    ddl = TABS.replace("note text", "note text NOT NULL")
    assert only(compared([ddl])) == (
        "tabs.note: the manifest lets it be empty, the database has it NOT NULL; fix: ALTER "
        "TABLE S.tabs ALTER COLUMN note DROP NOT NULL;"
    )


def test_a_column_the_manifest_says_is_never_empty_that_may_be(compared: Compare) -> None:
    ddl = [
        TABS.replace("opened_at timestamptz NOT NULL", "opened_at timestamptz"),
        "INSERT INTO {s}.tabs (status) VALUES ('open'), ('open')",
    ]
    found = compared(ddl)
    [disagreement] = found.disagreements
    assert disagreement.kind is Kind.may_be_empty and not disagreement.blocks
    assert only(found) == (
        'tabs.opened_at: the manifest says it is never empty (no "nullable": true), the database '
        "lets it be empty; fix: ALTER TABLE S.tabs ALTER COLUMN opened_at SET NOT NULL;"
    )
    assert disagreement.steps[0].breaks == "2 rows hold no value there (keys 1, 2)"


def test_a_key_that_is_not_unique_and_has_no_default(compared: Compare) -> None:
    ddl = TABS.replace("id serial PRIMARY KEY", "id integer NOT NULL")
    found = compared([ddl])
    assert [d.kind for d in found.disagreements] == [Kind.key_not_unique, Kind.no_key_default]
    assert [s.replace(found.schema, "S") for s in found.sentences()] == [
        "tabs.id: the manifest reads and writes each row by its key, the database has no primary "
        "key or unique index on it alone; fix: ALTER TABLE S.tabs ADD PRIMARY KEY (id);",
        "tabs.id: the manifest says serial (the database gives each new row its key), the "
        "database has integer with no default, so no new row gets a key; fix: ALTER TABLE "
        "S.tabs ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY;",
    ]


def test_an_index_the_clock_wants_and_the_table_lacks(compared: Compare) -> None:
    def timed(manifest: dict[str, Any]) -> None:
        tabs(manifest)["states"]["timed"] = [
            {"from": "open", "to": "voided", "at": {"column": "opened_at", "plus": {"days": 1}}}
        ]

    found = compared([TABS], timed)
    [disagreement] = found.disagreements
    assert disagreement.kind is Kind.index_missing and not disagreement.blocks
    assert only(found) == (
        "tabs: the manifest reads it by (status, opened_at) each minute (index "
        "ix_tabs_status_opened_at), the database has no such index; fix: CREATE INDEX "
        'CONCURRENTLY IF NOT EXISTS "ix_tabs_status_opened_at" ON "S"."tabs" ("status", '
        '"opened_at");'
    )


def test_rows_holding_a_state_the_manifest_does_not_list(compared: Compare) -> None:
    ddl = [
        TABS,
        "INSERT INTO {s}.tabs (status, opened_at) SELECT s, now() FROM"
        " unnest(ARRAY['open', 'refunded', 'refunded', 'refunded', 'comp']) AS s",
    ]
    found = compared(ddl)
    assert [d.kind for d in found.disagreements] == [Kind.unlisted_value] * 2
    assert not any(d.blocks for d in found.disagreements)
    assert [s.replace(found.schema, "S") for s in found.sentences()] == [
        "tabs.status: the manifest does not list 'refunded', the database has 3 rows holding "
        "'refunded' (keys 2, 3, 4); fix: list 'refunded' in the manifest, or move those rows "
        "(UPDATE S.tabs SET status = '…' WHERE status = 'refunded';)",
        "tabs.status: the manifest does not list 'comp', the database has 1 row holding 'comp' "
        "(keys 5); fix: list 'comp' in the manifest, or move those rows (UPDATE S.tabs SET "
        "status = '…' WHERE status = 'comp';)",
    ]


def test_a_column_renamed_as_asked(compared: Compare) -> None:
    ddl = TABS.replace("note text", "memo text")
    found = compared([ddl], renames=Renames(columns={("tabs", "memo"): "note"}))
    [disagreement] = found.disagreements
    assert disagreement.kind is Kind.column_renamed
    assert only(found) == (
        "tabs.note: the manifest names note (renamed from memo, as asked), the database has "
        "memo; fix: ALTER TABLE S.tabs RENAME memo TO note;"
    )
    assert disagreement.steps[0].destructive


def test_a_column_renamed_and_not_said_is_one_missing_and_one_unknown(compared: Compare) -> None:
    ddl = TABS.replace("note text", "memo text NOT NULL")
    found = compared([ddl])
    assert {d.kind for d in found.disagreements} == {Kind.column_missing, Kind.unknown_not_null}


def test_a_rename_of_a_column_the_table_lacks_is_said(compared: Compare) -> None:
    found = compared([TABS], renames=Renames(columns={("tabs", "memo"): "note"}))
    assert found.unused == ("--rename tabs.memo=note: tabs has no column memo",)


def test_a_value_renamed_as_asked(compared: Compare) -> None:
    ddl = [TABS, "INSERT INTO {s}.tabs (status, opened_at) VALUES ('closed', now())"]

    def paid(manifest: dict[str, Any]) -> None:
        tabs(manifest)["states"]["moves"] = {"open": ["paid", "voided"]}

    found = compared(ddl, paid, Renames(values={("tabs", "status", "closed"): "paid"}))
    [disagreement] = found.disagreements
    assert disagreement.kind is Kind.value_renamed
    assert only(found) == (
        "tabs.status: the manifest lists 'paid' in place of 'closed' (renamed, as asked), the "
        "database has 1 row holding 'closed' (keys 1); fix: UPDATE S.tabs SET status='paid' "
        "WHERE S.tabs.status = 'closed';"
    )


def test_each_table_is_judged_apart_in_one_comparison(compared: Compare) -> None:
    def two(manifest: dict[str, Any]) -> None:
        manifest["tables"]["tills"] = copy.deepcopy(tabs(manifest))
        del manifest["tables"]["tills"]["states"]

    ddl = [TABS, TABS.replace("tabs", "tills").replace("note text", "note integer")]
    found = compared(ddl, two)
    assert [(d.table, d.column, d.kind) for d in found.disagreements] == [
        ("tills", "note", Kind.type_differs)
    ]
