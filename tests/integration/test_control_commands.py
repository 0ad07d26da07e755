"""The `adminium` console commands for the control plane, through click's CliRunner."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result

from adminium.cli import main
from tests.integration.test_controlplane import SECRET, TAKEAWAY, with_password
from web import controlplane

Invoke = Callable[..., Result]


@pytest.fixture
def control_url(make_database: Callable[[], str]) -> str:
    """Adminium's own database, empty: the commands migrate it."""
    return make_database()


@pytest.fixture
def invoke(control_url: str) -> Invoke:
    """Run `adminium …` with DATABASE_URL set to the test's control plane."""
    runner = CliRunner()

    def run(*args: str, stdin: str | None = None) -> Result:
        return runner.invoke(main, list(args), input=stdin, env={"DATABASE_URL": control_url})

    return run


@pytest.fixture
def manifest_file(tmp_path: Path) -> Callable[[dict[str, Any]], str]:
    """Factory: a manifest written to a file, its path."""

    def write(manifest: dict[str, Any]) -> str:
        path = tmp_path / f"{manifest.get('name', 'app')}.json"
        path.write_text(json.dumps(manifest))
        return str(path)

    return write


def test_connection_add_then_list_shows_it_without_the_password(
    invoke: Invoke, make_database: Callable[[], str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    url = with_password(make_database())
    added = invoke("connection", "add", "venue", "--url", url, "--zone", "Europe/London")
    listed = invoke("connection", "list")
    assert added.exit_code == 0, added.output
    assert "connection venue added" in added.output and "Europe/London" in added.output
    assert listed.exit_code == 0, listed.output
    assert listed.output.startswith("venue\trunning\tEurope/London\tpostgresql://")
    assert ":***@" in listed.output
    for text in (added.output, listed.output, caplog.text):
        assert SECRET not in text


def test_connection_list_when_there_is_none_says_how_to_add_one(invoke: Invoke) -> None:
    result = invoke("connection", "list")
    assert result.exit_code == 0
    assert "adminium connection add" in result.output


def test_an_invalid_zone_exits_1_with_one_clear_line(
    invoke: Invoke, make_database: Callable[[], str]
) -> None:
    result = invoke("connection", "add", "venue", "--url", make_database(), "--zone", "Mars/Base")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "Error: 'Mars/Base' is no IANA time zone: name one such as Europe/London, or none for UTC"
    )
    assert "Traceback" not in result.output
    assert "no connections yet" in invoke("connection", "list").output


def test_pause_and_resume_show_in_the_list(
    invoke: Invoke, make_database: Callable[[], str]
) -> None:
    invoke("connection", "add", "venue", "--url", make_database())
    paused = invoke("connection", "pause", "venue")
    assert paused.exit_code == 0 and paused.output == "connection venue paused\n"
    assert "venue\tpaused\tUTC" in invoke("connection", "list").output
    resumed = invoke("connection", "resume", "venue")
    assert resumed.exit_code == 0 and resumed.output == "connection venue resumed\n"
    assert "venue\trunning\tUTC" in invoke("connection", "list").output


def test_pausing_an_unknown_connection_exits_1(invoke: Invoke) -> None:
    result = invoke("connection", "pause", "nowhere")
    assert result.exit_code == 1
    assert result.stderr == "Error: no connection named 'nowhere'\n"


def test_app_add_with_create_tables_makes_the_tables(
    invoke: Invoke,
    make_database: Callable[[], str],
    manifest_file: Callable[[dict[str, Any]], str],
) -> None:
    venue = make_database()
    invoke("connection", "add", "venue", "--url", venue)
    result = invoke("app", "add", "venue", manifest_file(TAKEAWAY), "--create-tables")
    assert result.exit_code == 0, result.output
    assert result.output == "app takeaway saved on connection venue: orders (tables made)\n"
    assert "takeaway" in invoke("connection", "list").output
    engine = controlplane.engine_for(venue)
    with engine.connect() as conn:
        assert sa.inspect(conn).has_table("orders", schema="public")
    engine.dispose()


def test_a_bad_manifest_prints_each_sentence_and_saves_nothing(
    invoke: Invoke,
    make_database: Callable[[], str],
    manifest_file: Callable[[dict[str, Any]], str],
) -> None:
    bad = json.loads(json.dumps(TAKEAWAY))
    bad["tables"]["orders"]["states"]["timed"][0]["to"] = "preparing"
    invoke("connection", "add", "venue", "--url", make_database())
    result = invoke("app", "add", "venue", manifest_file(bad), "--create-tables")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: the manifest check refused the app:\n  tables.orders")
    assert "preparing" in result.stderr
    assert "venue\trunning\tUTC" in invoke("connection", "list").output
    assert "no apps" in invoke("connection", "list").output


@pytest.mark.parametrize(
    ("content", "says"),
    [
        pytest.param("{not json", "is no JSON", id="not_json"),
        pytest.param("[1, 2]", "holds no manifest", id="not_an_object"),
    ],
)
def test_an_unreadable_manifest_file_exits_1(
    invoke: Invoke, make_database: Callable[[], str], tmp_path: Path, content: str, says: str
) -> None:
    path = tmp_path / "app.json"
    path.write_text(content)
    invoke("connection", "add", "venue", "--url", make_database())
    result = invoke("app", "add", "venue", str(path))
    assert result.exit_code == 1
    assert says in result.stderr


def test_user_add_admin_prints_the_token_once(invoke: Invoke, control_url: str) -> None:
    result = invoke(
        "user",
        "add",
        "ada@example.org",
        "--role",
        "admin",
        "--password-stdin",
        stdin="correct horse\n",
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "user ada@example.org holds admin in every app"
    token = lines[1].removeprefix("API token (shown once, keep it): ")
    with controlplane.open_session(control_url) as session:
        user = controlplane.user_by_token(session, token)
        assert user is not None and user.email == "ada@example.org"
        assert controlplane.user_by_password(session, "ada@example.org", "correct horse") == user
    controlplane.engine_for(control_url).dispose()
    again = invoke("user", "add", "ada@example.org", "--role", "admin")
    assert again.exit_code == 0 and "API token" not in again.output


def test_user_add_with_an_app_role(
    invoke: Invoke,
    make_database: Callable[[], str],
    manifest_file: Callable[[dict[str, Any]], str],
) -> None:
    invoke("connection", "add", "venue", "--url", make_database())
    invoke("app", "add", "venue", manifest_file(TAKEAWAY))
    good = invoke("user", "add", "cook@example.org", "--role", "kitchen", "--app", "takeaway")
    bad = invoke("user", "add", "cook@example.org", "--role", "chef", "--app", "takeaway")
    assert good.exit_code == 0, good.output
    assert good.output.startswith("user cook@example.org holds kitchen in app takeaway\n")
    assert bad.exit_code == 1
    assert bad.stderr == ("Error: app 'takeaway' has no role 'chef'; its roles: kitchen, counter\n")


def test_an_empty_password_on_stdin_is_refused(invoke: Invoke) -> None:
    result = invoke(
        "user", "add", "ada@example.org", "--role", "admin", "--password-stdin", stdin="\n"
    )
    assert result.exit_code == 1
    assert result.stderr == "Error: no password on stdin\n"
