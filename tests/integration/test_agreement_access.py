"""What a connection needs of its database user: `connection add` and `connection check` try
it and say what is missing with the GRANT that fixes it; `app add` on a database without
Adminium's schema makes it, or refuses saying so; row-level security that hides rows from
the user is a disagreement. Each through a real login role of its own."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner, Result
from psycopg import sql

from adminium.cli import main
from core.agreement.compare import compare_tables
from core.agreement.disagreement import Kind
from core.manifest.model import load_app
from core.store.store import make_engine
from services.storage import engine_for

pytestmark = pytest.mark.integration

TILLS: dict[str, Any] = {
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
            "states": {
                "column": "status",
                "initial": "open",
                "moves": {"open": ["paid"]},
                "timed": [{"from": "open", "to": "paid", "at": {"column": "opened_at"}}],
            },
        }
    },
}
TABS = (
    "CREATE SCHEMA pos;"
    " CREATE TABLE pos.tabs (id serial PRIMARY KEY, status varchar(12) NOT NULL,"
    " opened_at timestamptz NOT NULL);"
    " CREATE INDEX ix_tabs_status_opened_at ON pos.tabs (status, opened_at)"
)
"""The venue's till, made by its own POS (Adminium made nothing here)."""


@pytest.fixture
def venue(make_database: Callable[[], str]) -> Iterator[tuple[str, str]]:
    """A database holding the POS's tabs table, and a login role of its own that may do
    nothing yet: (owner's URL, role)."""
    url = make_database()
    role = f"adm_pos_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(TABS)
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        conn.execute(sql.SQL("REVOKE CREATE ON SCHEMA public FROM PUBLIC"))
    yield url, role
    engine_for(as_role(url, role)).dispose()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
        conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def as_role(url: str, role: str) -> str:
    """The same database, connected as `role`."""
    info = psycopg.conninfo.conninfo_to_dict(url)
    return psycopg.conninfo.make_conninfo(**{**info, "user": role})


def grant(url: str, role: str, *statements: str) -> None:
    """Run GRANTs as the owner, `{}` standing for the role."""
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in statements:
            conn.execute(sql.SQL(statement).format(sql.Identifier(role)))


@pytest.fixture
def invoke(make_database: Callable[[], str]) -> Callable[..., Result]:
    """`adminium …` on a control plane of the test's own."""
    control = make_database()

    def run(*args: str) -> Result:
        env = {"DATABASE_URL": control, "REDIS_URL": ""}
        return CliRunner().invoke(main, list(args), env=env)

    return run


def test_connection_add_and_check_say_what_the_user_lacks_and_the_grant(
    venue: tuple[str, str], invoke: Callable[..., Result], tmp_path: Path
) -> None:
    url, role = venue
    database = psycopg.conninfo.conninfo_to_dict(url)["dbname"]
    added = invoke("connection", "add", "pos", "--url", as_role(url, role))
    assert added.exit_code == 0, added.output
    assert added.output.splitlines()[1:] == [
        f"  user {role} may not make Adminium's schema adminium in database {database} (CREATE "
        f"on the database); fix: GRANT CREATE ON DATABASE {database} TO {role}; (or: "
        f"CREATE SCHEMA adminium AUTHORIZATION {role};)"
    ]
    manifest = tmp_path / "tills.json"
    manifest.write_text(json.dumps(TILLS))
    refused = invoke("app", "add", "pos", str(manifest))
    assert refused.exit_code == 1
    assert refused.stderr.startswith(
        "Error: Adminium keeps its bookkeeping in a schema adminium of the connection's database"
        f" and could not make it: permission denied for database {database}; grant it with "
        f"GRANT CREATE ON DATABASE {database} TO {role};"
    )
    assert "no apps" in invoke("connection", "list").output

    grant(url, role, f'GRANT CREATE ON DATABASE "{database}" TO {{}}')
    checked = invoke("connection", "check", "pos")
    assert checked.exit_code == 0, checked.output
    assert checked.output == (
        f"connection pos: user {role} may do all Adminium needs in database {database}: its "
        "schema adminium, no app yet\n"
    )
    unread = invoke("app", "add", "pos", str(manifest))
    assert unread.exit_code == 1
    assert unread.stderr == (
        f"Error: user {role} may not read app tills's tables: user {role} may not use schema "
        f"pos (USAGE); fix: GRANT USAGE ON SCHEMA pos TO {role}; (DATABASE_REFUSED)\n"
    )
    grant(
        url, role, "GRANT USAGE ON SCHEMA pos TO {}", "GRANT SELECT (id, status) ON pos.tabs TO {}"
    )
    partly = invoke("app", "add", "pos", str(manifest))
    assert partly.exit_code == 1
    assert partly.stderr == (
        f"Error: user {role} may not read app tills's tables: user {role} may not SELECT "
        f"tabs.opened_at; fix: GRANT SELECT (opened_at) ON pos.tabs TO {role}; (DATABASE_REFUSED)\n"
    )
    assert "no apps" in invoke("connection", "list").output
    grant(url, role, "GRANT SELECT ON pos.tabs TO {}")
    # The schema it makes is its own; what the user may not write is said, not refused.
    saved = invoke("app", "add", "pos", str(manifest))
    assert saved.exit_code == 0, saved.output
    lacks = [
        f"  user {role} may not INSERT tabs; fix: GRANT INSERT ON pos.tabs TO {role};",
        f"  user {role} may not UPDATE tabs; fix: GRANT UPDATE ON pos.tabs TO {role};",
        f"  user {role} may not number new tabs rows (USAGE on pos.tabs_id_seq); fix: GRANT "
        f"USAGE ON SEQUENCE pos.tabs_id_seq TO {role};",
    ]
    assert saved.output.splitlines() == ["app tills saved on connection pos: tabs", *lacks]
    lacking = invoke("connection", "check", "pos")
    assert lacking.exit_code == 1
    assert lacking.output.splitlines() == [
        f"connection pos: user {role} lacks 3 of what Adminium needs in database {database}:",
        *lacks,
    ]
    grant(
        url,
        role,
        "GRANT INSERT, UPDATE ON pos.tabs TO {}",
        "GRANT USAGE ON SEQUENCE pos.tabs_id_seq TO {}",
    )
    assert invoke("connection", "check", "pos").exit_code == 0
    swept = invoke("sweep", "pos")
    assert swept.exit_code == 0, swept.output


def test_row_level_security_that_hides_rows_from_the_user_is_said(
    venue: tuple[str, str],
) -> None:
    url, role = venue
    grant(
        url,
        role,
        "GRANT USAGE ON SCHEMA pos TO {}",
        "GRANT SELECT, INSERT, UPDATE ON pos.tabs TO {}",
    )
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE pos.tabs ENABLE ROW LEVEL SECURITY")
    engine = make_engine(as_role(url, role))
    try:
        with engine.connect() as conn:
            found = compare_tables(conn, load_app(TILLS))
    finally:
        engine.dispose()
    [hidden] = found.disagreements
    assert hidden.kind is Kind.rows_hidden and not hidden.blocks
    assert hidden.sentence == (
        f"tabs: the manifest shows and moves every row, the database has row-level security on "
        f"for {role}: rows its policies hide are never shown or moved; fix: ALTER TABLE "
        f"pos.tabs DISABLE ROW LEVEL SECURITY; (or a policy that lets {role} see every row)"
    )
    # Its owner reads every row: nothing is hidden from it.
    owner = make_engine(url)
    try:
        with owner.connect() as conn:
            assert compare_tables(conn, load_app(TILLS)).agree
    finally:
        owner.dispose()


def test_a_manifest_that_mistypes_or_misnames_the_pos_tables_is_refused(
    venue: tuple[str, str], invoke: Callable[..., Result], tmp_path: Path
) -> None:
    url, _ = venue
    wrong = json.loads(json.dumps(TILLS))
    columns = wrong["tables"]["tabs"]["columns"]
    columns[1]["type"] = "integer"  # the POS keeps status as varchar(12)
    columns[1].pop("maxLength")
    columns.append({"ref": "table_no", "type": "integer"})  # the POS has no such column
    wrong["tables"]["tabs"]["states"] = None
    del wrong["tables"]["tabs"]["states"]
    manifest = tmp_path / "tills.json"
    manifest.write_text(json.dumps(wrong))
    assert invoke("connection", "add", "pos", "--url", url).exit_code == 0
    refused = invoke("app", "add", "pos", str(manifest), "--migrate", "--yes")
    assert refused.exit_code == 1
    assert refused.stderr.splitlines()[:4] == [
        "Error: the migration of app tills's tables is refused: nothing was changed "
        "(TABLES_DISAGREE)",
        "  tabs.table_no: the manifest says integer, the database has no such column; fix: "
        "ALTER TABLE pos.tabs ADD COLUMN table_no INTEGER NOT NULL;",
        "  tabs.status: the manifest says integer, the database has character varying(12); fix: "
        "ALTER TABLE pos.tabs ALTER COLUMN status TYPE INTEGER USING status::INTEGER;",
        "  not migrated: tabs.table_no: Adminium did not make it, so it never alters it; its DBA "
        "runs: ALTER TABLE pos.tabs ADD COLUMN table_no INTEGER NOT NULL;",
    ]
    assert "no apps" in invoke("connection", "list").output
    bad_rename = invoke("app", "add", "pos", str(manifest), "--rename", "tabs")
    assert bad_rename.exit_code == 2 and "--rename" in bad_rename.stderr
