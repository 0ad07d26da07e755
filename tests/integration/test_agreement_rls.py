"""Row-level security over a venue's table, as docs/operations.md writes it: the policy reads
a session setting, the connection URL sets it (`?options=-c app.tenant_id=1`), and the
sweep moves that tenant's rows only; `app add` names the table whose rows are hidden."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

import psycopg
import pytest
from click.testing import CliRunner
from psycopg import sql

from adminium.cli import main
from tests.integration.test_agreement_access import TILLS, grant, venue

pytestmark = pytest.mark.integration

__all__ = ["venue"]  # the fixture: the POS's tabs and a login role that may do nothing yet

POLICY = """
ALTER TABLE pos.tabs ADD COLUMN tenant_id integer NOT NULL DEFAULT 1;
ALTER TABLE pos.tabs ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant ON pos.tabs
    USING (tenant_id = current_setting('app.tenant_id', true)::integer);
INSERT INTO pos.tabs (status, opened_at, tenant_id)
    VALUES ('open', '2026-07-10 09:00+00', 1), ('open', '2026-07-10 09:00+00', 2);
"""
"""The venue's policy: each tenant's session sees its own tabs."""


def test_a_session_setting_in_the_url_lets_a_policy_show_a_tenants_rows(
    venue: tuple[str, str], make_database: Callable[[], str], tmp_path: Path
) -> None:
    url, role = venue
    info = psycopg.conninfo.conninfo_to_dict(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(POLICY)  # type: ignore[arg-type]
    grant(
        url,
        role,
        f"GRANT CREATE ON DATABASE {sql.Identifier(str(info['dbname'])).as_string()} TO {{}}",
        "GRANT USAGE ON SCHEMA pos TO {}",
        "GRANT SELECT, INSERT, UPDATE ON pos.tabs TO {}",
        "GRANT USAGE ON SEQUENCE pos.tabs_id_seq TO {}",
    )
    where = urlencode({"host": info.get("host", ""), "port": info.get("port", "5432")})
    tenant = f"postgresql://{role}@/{info['dbname']}?{where}&options=-c%20app.tenant_id%3D1"
    env = {"DATABASE_URL": make_database(), "REDIS_URL": ""}

    def run(*args: str) -> str:
        result = CliRunner().invoke(main, list(args), env=env)
        assert result.exit_code == 0, result.output
        return result.output

    run("connection", "add", "pos", "--url", tenant)
    manifest = tmp_path / "tills.json"
    manifest.write_text(json.dumps(TILLS))
    added = run("app", "add", "pos", str(manifest))
    assert "  tabs: the manifest shows and moves every row, the database has row-level " in added
    assert f"security on for {role}: rows its policies hide are never shown or moved" in added
    swept = run("sweep", "pos", "--now", "2026-07-10T09:01:00+00:00")
    assert "moved 1" in swept, swept
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT tenant_id, status FROM pos.tabs ORDER BY tenant_id").fetchall()
    assert rows == [(1, "paid"), (2, "open")]  # tenant 2's tab is not this session's
