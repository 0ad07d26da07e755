"""`adminium app draft`: a manifest drafted from a database's catalogue. The project's own
examples' tables, made by `app add --create-tables`, come back as the examples in every
column, key and state, and agree with the tables they were drafted from; the console
prints the JSON and says on stderr what is still to write."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner

from adminium.cli import main
from core.agreement.compare import compare_tables
from core.agreement.draft import draft_manifest
from core.manifest.check import check_manifest
from core.manifest.model import load_app
from core.store.install import install_app
from core.store.store import make_engine
from tests.core.manifest_cases import example
from tests.integration.pos_fixtures import pos_site
from tests.integration.test_agreement_access import as_role, venue

pytestmark = pytest.mark.integration

__all__ = ["venue"]  # the fixture: the POS's tabs and a login role that may do nothing yet

NOT_IN_THE_DATABASE = ("public", "rules", "title")
"""What a manifest's column says that no catalogue keeps: who sees it, the rules that write
it, its title."""


def as_kept(column: dict[str, Any]) -> dict[str, Any]:
    """A manifest column as a database keeps it."""
    return {k: v for k, v in column.items() if k not in NOT_IN_THE_DATABASE}


@pytest.mark.parametrize("name", ["takeaway", "hotel", "tickets"])
def test_a_draft_of_an_examples_tables_is_the_example(
    name: str, make_database: Callable[[], str]
) -> None:
    doc = example(name)
    engine = make_engine(make_database())
    try:
        install_app(engine, load_app(doc))  # what `app add --create-tables` makes
        with engine.connect() as conn:
            draft = draft_manifest(conn, doc.get("schema", "public"), name=doc["name"])
            agreed = compare_tables(conn, load_app(draft.manifest))
    finally:
        engine.dispose()
    drafted = draft.manifest
    assert drafted.get("schema") == doc.get("schema")
    assert set(drafted["tables"]) == set(doc["tables"])
    for table, spec in doc["tables"].items():
        mine = drafted["tables"][table]
        assert mine["key"] == spec["key"], table
        assert mine["columns"] == [as_kept(c) for c in spec["columns"]], table
        states = spec.get("states")
        column = next((c for c in spec["columns"] if states and c["ref"] == states["column"]), None)
        if column is not None and column["type"] == "enum":
            assert mine["states"] == {
                "column": states["column"],
                "initial": states["initial"],
                "moves": {},
            }, table
        else:
            assert "states" not in mine, table
    # The draft passes the check, and agrees with the tables it was read from.
    assert check_manifest(drafted) == []
    assert agreed.agree, agreed.sentences()
    if name == "tickets":
        # Its tickets' status is text (the example lists no values): said, not guessed.
        assert draft.notes == (
            "tickets.status: named like a state column, but no CHECK or enum type lists its "
            "values; write its states yourself (states.column, initial, moves)",
        )
    else:
        assert draft.notes == ()


VENUE = """
CREATE SCHEMA till;
CREATE TYPE till.tab_state AS ENUM ('open', 'paid', 'void');
CREATE TABLE till.tables (code char(3) PRIMARY KEY, seats smallint NOT NULL DEFAULT 4);
CREATE TABLE till.tabs (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    "table" char(3) REFERENCES till.tables (code),
    state till.tab_state NOT NULL DEFAULT 'paid',
    opened_at timestamptz NOT NULL DEFAULT now(),
    kind text CHECK (kind = 'walk-in'),
    tip numeric(6,2) DEFAULT -1.5,
    payload jsonb,
    covers integer NOT NULL DEFAULT '-2'::integer
);
CREATE TABLE till.splits (a int, b int, PRIMARY KEY (a, b));
CREATE TABLE till.receipts (no text NOT NULL UNIQUE, total double precision);
"""
"""A till's tables as a vendor makes them: an ENUM state, an identity key, a link by a
char(3) code, a default the database works out, a one-value CHECK, jsonb, a composite key,
a table keyed by a unique column alone."""


def test_the_console_drafts_a_venues_tables_and_says_what_is_left(
    make_database: Callable[[], str], tmp_path: Path
) -> None:
    venue, control = make_database(), make_database()
    with psycopg.connect(venue, autocommit=True) as conn:
        conn.execute(VENUE)  # type: ignore[arg-type]
    env = {"DATABASE_URL": control, "REDIS_URL": ""}

    def run(*args: str) -> Any:
        return CliRunner().invoke(main, list(args), env=env)

    assert run("connection", "add", "till", "--url", venue).exit_code == 0
    drafted = run("app", "draft", "till", "--schema", "till", "--table", "tables", "--table",
                  "tabs")  # fmt: skip
    assert drafted.exit_code == 0, drafted.output
    manifest = json.loads(drafted.stdout)
    assert manifest == {
        "name": "till",
        "schema": "till",
        "tables": {
            "tables": {
                "key": "code",
                "columns": [
                    {"ref": "code", "type": "text", "maxLength": 3},
                    {"ref": "seats", "type": "integer", "default": 4},
                ],
            },
            "tabs": {
                "key": "id",
                "columns": [
                    {"ref": "id", "type": "serial"},
                    {"ref": "table", "type": "text", "nullable": True, "maxLength": 3,
                     "references": "tables"},
                    {"ref": "state", "type": "enum", "values": ["open", "paid", "void"]},
                    {"ref": "kind", "type": "enum", "nullable": True, "values": ["walk-in"]},
                    {"ref": "tip", "type": "numeric", "nullable": True, "precision": 6,
                     "scale": 2, "default": -1.5},
                    {"ref": "covers", "type": "integer", "default": -2},
                ],
                "states": {"column": "state", "initial": "paid", "moves": {}},
            },
        },
    }  # fmt: skip
    assert drafted.stderr.splitlines() == [
        "still to write before app add:",
        "  tabs.opened_at: left out; the database fills it (now()) and a manifest column is "
        "sent on every create unless it has a literal default",
        "  tabs.payload: no manifest type reads jsonb; left out (Adminium leaves it as it is)",
        # The check's own sentence: a value the manifest cannot name.
        '  tables.tabs.columns[3].values[0]: "walk-in" is no name: use lower-case letters, '
        "digits and _, starting with a letter or _",
        "  tabs.states: its states are open, paid, void (initial paid); write its moves (which "
        "state may follow which) and its timed rules (states.timed: which state the clock "
        "moves, to which, at what moment)",
    ]
    # The composite key: the check's own sentence says what to do.
    split = run("app", "draft", "till", "--schema", "till", "--table", "splits", "--table",
                "receipts", "-o", str(tmp_path / "splits.json"))  # fmt: skip
    assert split.exit_code == 0, split.output
    tables = json.loads((tmp_path / "splits.json").read_text())["tables"]
    assert tables["splits"]["key"] == ["a", "b"]
    assert tables["receipts"] == {
        "key": "no",
        "columns": [
            {"ref": "no", "type": "text"},
            {"ref": "total", "type": "numeric", "nullable": True},
        ],
    }
    lines = split.stderr.splitlines()
    assert lines[:3] == [
        f"drafted app till into {tmp_path / 'splits.json'}",
        "still to write before app add:",
        "  receipts: no primary key; the draft keys it by no, unique",
    ]
    assert any(
        line.startswith("  tables.splits.key: ") and "add a single-column key" in line
        for line in lines
    ), lines
    nothing = run("app", "draft", "till", "--schema", "till", "--table", "nosuch")
    assert nothing.exit_code == 1
    assert nothing.stderr == (
        "Error: connection 'till' has no table named nosuch in schema till: nothing to draft "
        "(INVALID_VALUE)\n"
    )


def test_the_connection_page_drafts_from_the_database(
    server_database_url: str, redis_url: str
) -> None:
    with pos_site(server_database_url, redis_url) as pos:
        card = pos.client.get("/connections/pos")
        assert card.status_code == 200
        assert 'href="/connections/pos/draft" class="draft-link">Draft from the database</a>' in (
            card.text
        )
        page = pos.client.get("/connections/pos/draft")
        assert page.status_code == 200, page.text
        # The page in German to a German browser (h32b's words, wrapped after h34).
        german = pos.client.get("/connections/pos/draft", headers={"Accept-Language": "de"})
        assert "<h1>Entwurf aus der Datenbank · pos</h1>" in german.text
        assert "Ein Manifest, entworfen aus den Tabellen des Schemas <code>public</code>" in (
            german.text
        )
        assert "dann <code>adminium app add pos FILE</code>." in german.text
        assert "<h2>Noch zu schreiben</h2>" in german.text
        assert '<button type="submit">Entwerfen</button>' in german.text
        found = re.search(r'<textarea class="draft-json"[^>]*>(.*?)</textarea>', page.text, re.S)
        assert found is not None
        drafted = json.loads(html.unescape(found[1]))
        assert drafted["name"] == "pos"
        assert [c["ref"] for c in drafted["tables"]["orders"]["columns"]] == [
            "id",
            "status",
            "pickup_at",
            "total",
            "terminal_id",
            "cancel_code",
            "note",
            "cancelled_at",
        ]
        assert drafted["tables"]["order_lines"]["columns"][1] == {
            "ref": "order_id",
            "type": "uuid",
            "references": "orders",
        }
        assert (
            "<li>orders.states: its states are placed, ready, collected, cancelled (initial "
            "placed); write its moves" in page.text
        )
        other = pos.client.get("/connections/pos/draft?schema=nosuch")
        assert "has no table in schema nosuch: nothing to draft" in other.text


def test_a_user_that_may_do_nothing_yet_drafts_all_the_same(venue: tuple[str, str]) -> None:
    # The catalogue is every user's to read: no USAGE on the schema, no SELECT on the table.
    url, role = venue
    engine = make_engine(as_role(url, role))
    try:
        with engine.connect() as conn:
            draft = draft_manifest(conn, "pos", name="tills")
    finally:
        engine.dispose()
    assert draft.manifest == {
        "name": "tills",
        "schema": "pos",
        "tables": {
            "tabs": {
                "key": "id",
                "columns": [
                    {"ref": "id", "type": "serial"},
                    {"ref": "status", "type": "text", "maxLength": 12},
                    {"ref": "opened_at", "type": "timestamptz"},
                ],
            }
        },
    }
