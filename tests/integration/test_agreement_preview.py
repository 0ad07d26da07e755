"""The preview of a replace sees the migrated tables: the migration runs inside the
preview's own transaction, which is rolled back, so a brand-new timed move reading a new
settings column counts its rows due at once from that column's default, and the database is
as it was after (a schema snapshot, Adminium's record, the saved manifest). A preview that
cannot read says so, and the replace asks for --yes; it never prints a count it did not
read. Times worked by hand: the bookings started at 10:00Z on Friday 23 October 2026 and
stay 30 minutes (the new column's default), so at 12:00Z each has been due for 90 minutes."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner, Result
from psycopg import sql

from adminium.cli import main
from services.agreement import Asked
from services.apps import lookup_app, save_app
from services.connections import add_connection
from services.errors import TablesDisagree
from services.preview import preview_replace
from services.storage import engine_for, open_session
from tests.integration.preview_fixtures import DINER, Diner, build_diner

pytestmark = pytest.mark.integration

AT = "2026-10-23T12:00:00+00:00"
STARTED = datetime(2026, 10, 23, 10, 0, tzinfo=UTC)


@pytest.fixture
def diner(make_database: Callable[[], str]) -> Iterator[Diner]:
    made = build_diner(make_database(), make_database())
    for _ in range(9):
        made.insert("bookings", starts_at=STARTED, status="seated")
    yield made
    made.dispose()


def staying() -> dict[str, Any]:
    """The diner with a new state `left`, reached by a new timed move from `seated` once a
    booking's stay (a new settings column, 30 minutes unless set) is over."""
    manifest = copy.deepcopy(DINER)
    settings = manifest["tables"]["settings"]["columns"]
    settings.append({"ref": "stay_minutes", "type": "integer", "default": 30})
    bookings = manifest["tables"]["bookings"]
    status = next(c for c in bookings["columns"] if c["ref"] == "status")
    status["values"].append("left")
    bookings["states"]["moves"]["seated"] = ["left"]
    bookings["states"]["timed"].append(
        {
            "from": "seated",
            "to": "left",
            "at": {
                "column": "starts_at",
                "plus": {"minutes": {"table": "settings", "column": "stay_minutes"}},
            },
        }
    )
    return manifest


def snapshot(diner: Diner) -> dict[str, Any]:
    """The diner schema as the catalogue holds it, Adminium's record, and the manifest."""
    columns = diner.rows(
        "SELECT table_name, column_name, data_type, character_maximum_length, column_default"
        " FROM information_schema.columns WHERE table_schema = 'diner' ORDER BY 1, 2"
    )
    constraints = diner.rows(
        "SELECT conname, pg_get_constraintdef(k.oid) FROM pg_constraint k"
        " JOIN pg_namespace n ON n.oid = k.connamespace WHERE n.nspname = 'diner' ORDER BY 1"
    )
    indexes = diner.rows("SELECT indexname FROM pg_indexes WHERE schemaname = 'diner' ORDER BY 1")
    made = diner.rows("SELECT * FROM adminium.made WHERE schema_name = 'diner' ORDER BY 1, 2, 3, 4")
    with open_session(diner.control_url) as session:
        app = lookup_app(session, "diner", "diner")
        assert app is not None
        manifest = app.manifest
    return {
        "columns": columns,
        "constraints": constraints,
        "indexes": indexes,
        "made": made,
        "manifest": manifest,
    }


def run(diner: Diner, *args: str) -> Result:
    env = {"DATABASE_URL": diner.control_url, "REDIS_URL": ""}
    return CliRunner().invoke(main, list(args), env=env)


def written(tmp_path: Path, manifest: dict[str, Any]) -> str:
    path = tmp_path / "diner.json"
    path.write_text(json.dumps(manifest))
    return str(path)


def test_the_preview_reads_the_migrated_tables_and_leaves_them_as_they_were(diner: Diner) -> None:
    before = snapshot(diner)
    with open_session(diner.control_url) as session:
        found = preview_replace(
            session,
            "diner",
            staying(),
            now=datetime.fromisoformat(AT),
            asked=Asked(migrate=True),
        )
    assert found.unread is None and found.preview is not None
    assert [step.sql for step in found.migration] == [
        "ALTER TABLE diner.bookings DROP CONSTRAINT ck_bookings_status;",
        "ALTER TABLE diner.settings ADD COLUMN stay_minutes INTEGER DEFAULT 30 NOT NULL;",
        "ALTER TABLE diner.bookings ADD CONSTRAINT ck_bookings_status CHECK (status IN "
        "('booked', 'seated', 'no_show', 'left'));",
    ]  # (status, starts_at) is indexed already: the no-show's fallback reads starts_at
    due = found.preview.due_at_once
    assert len(due) == 9 and {c.what for c in due} == {"seated → left"}
    assert {c.new for c in due} == {datetime(2026, 10, 23, 10, 30, tzinfo=UTC)}
    assert found.preview.summary() == "9 rows due at once, 0 moments later, 0 earlier"
    assert snapshot(diner) == before


def test_a_replace_whose_migration_makes_9_due_at_once_needs_yes(
    diner: Diner, tmp_path: Path
) -> None:
    file = written(tmp_path, staying())
    before = snapshot(diner)
    refused = run(diner, "app", "add", "diner", file, "--replace", "--migrate", "--at", AT)
    assert refused.exit_code == 1
    assert "-- migrated inside the preview, then rolled back (3):" in refused.output
    assert "9 rows due at once, 0 moments later, 0 earlier" in refused.output
    assert "not replaced: 9 rows would be due at once (more than 5)" in refused.stderr
    assert snapshot(diner) == before

    done = run(diner, "app", "add", "diner", file, "--replace", "--migrate", "--yes")
    assert done.exit_code == 0, done.output
    assert "(tables migrated: 3 steps)" in done.output
    due = run(diner, "due", "diner", "--at", AT)
    assert (
        due.output.count("diner.bookings ") == 9
        and "rule 2 at 2026-10-23T11:30:00+01:00" in due.output
    )
    swept = run(diner, "sweep", "diner", "--now", AT)
    assert swept.exit_code == 0, swept.output
    assert diner.rows("SELECT status, count(*) FROM diner.bookings GROUP BY 1") == [("left", 9)]
    outcome = diner.rows("SELECT outcome FROM adminium.sweeps ORDER BY id DESC LIMIT 1")
    assert outcome == [("done",)]


def test_without_migrate_the_replace_and_its_preview_are_refused_with_the_plan(
    diner: Diner, tmp_path: Path
) -> None:
    file = written(tmp_path, staying())
    for extra in ((), ("--preview",)):
        refused = run(diner, "app", "add", "diner", file, "--replace", *extra, "--at", AT)
        assert refused.exit_code == 1
        assert refused.stderr.startswith(
            "Error: the tables cannot serve app diner's manifest: nothing was saved "
            "(TABLES_DISAGREE)\n  settings.stay_minutes: the manifest says integer, the "
            "database has no such column; fix: ALTER TABLE diner.settings ADD COLUMN "
            "stay_minutes INTEGER DEFAULT 30 NOT NULL;\n"
        )
        assert "rows due at once" not in refused.output
    with open_session(diner.control_url) as session, pytest.raises(TablesDisagree):
        preview_replace(session, "diner", staying(), now=datetime.fromisoformat(AT), asked=Asked())


@pytest.fixture
def blind(diner: Diner) -> Iterator[str]:
    """A second connection to the diner's database, through a role that may read the
    catalogue but not the settings rows the preview reads: its name."""
    role = "adm_blind_preview"
    with psycopg.connect(diner.venue_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        for statement in (
            "GRANT USAGE ON SCHEMA diner, adminium TO {}",
            "GRANT SELECT ON diner.bookings, diner.orders, diner.offers TO {}",
        ):
            conn.execute(sql.SQL(statement).format(sql.Identifier(role)))
    info = psycopg.conninfo.conninfo_to_dict(diner.venue_url)
    url = psycopg.conninfo.make_conninfo(**{**info, "user": role})
    with open_session(diner.control_url) as session:
        add_connection(session, "blind", url, "Europe/London", force=True)
        save_app(session, "blind", DINER)
    yield "blind"
    engine_for(url).dispose()
    with psycopg.connect(diner.venue_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
        conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def test_a_preview_that_cannot_read_says_so_and_the_replace_asks_for_yes(
    diner: Diner, blind: str, tmp_path: Path
) -> None:
    manifest = copy.deepcopy(DINER)
    manifest["tables"]["offers"]["states"]["timed"][0]["at"]["plus"] = {"minutes": 20}
    file = written(tmp_path, manifest)
    refused = run(diner, "app", "add", blind, file, "--replace", "--at", AT)
    assert refused.exit_code == 1
    assert "no preview: could not read connection 'blind''s rows: permission denied" in (
        refused.output
    )
    assert "rows due at once" not in refused.output
    assert refused.stderr.startswith("Error: not replaced: no preview (could not read")
    assert refused.stderr.rstrip().endswith(
        "run again with --yes to replace without one (DATABASE_REFUSED)"
    )
