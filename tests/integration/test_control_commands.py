"""The `adminium` console commands for the control plane, through click's CliRunner."""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis
import sqlalchemy as sa
from click.testing import CliRunner, Result

from adminium.cli import main
from services.events import events_channel
from services.storage import engine_for, open_session
from services.users import user_by_password, user_by_token
from tests.integration.test_controlplane import SECRET, TAKEAWAY, with_password

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
        env = {"DATABASE_URL": control_url, "REDIS_URL": ""}
        return runner.invoke(main, list(args), input=stdin, env=env)

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
        " (INVALID_VALUE)"
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


def test_pause_and_resume_tell_open_screens(
    control_url: str, make_database: Callable[[], str], redis_url: str
) -> None:
    name = f"venue-{uuid.uuid4().hex[:8]}"
    env = {"DATABASE_URL": control_url, "REDIS_URL": redis_url}
    assert (
        CliRunner()
        .invoke(main, ["connection", "add", name, "--url", make_database()], env=env)
        .exit_code
        == 0
    )
    listener = redis.Redis.from_url(redis_url)
    channel = listener.pubsub(ignore_subscribe_messages=True)
    channel.subscribe(events_channel(name))
    for verb in ("pause", "resume"):
        assert CliRunner().invoke(main, ["connection", verb, name], env=env).exit_code == 0
    events = heard(channel, 2)
    channel.close()
    listener.close()
    assert events == [
        {"connection": name, "paused": True},
        {"connection": name, "paused": False},
    ]


def test_pausing_an_unknown_connection_exits_1(invoke: Invoke) -> None:
    result = invoke("connection", "pause", "nowhere")
    assert result.exit_code == 1
    assert result.stderr == "Error: no connection named 'nowhere' (NOT_FOUND)\n"


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
    engine = engine_for(venue)
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
    assert result.stderr.startswith(
        "Error: the manifest check refused the app (MANIFEST_REFUSED)\n  tables.orders"
    )
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
    with open_session(control_url) as session:
        user = user_by_token(session, token)
        assert user is not None and user.email == "ada@example.org"
        assert user_by_password(session, "ada@example.org", "correct horse") == user
    engine_for(control_url).dispose()
    again = invoke("user", "add", "ada@example.org", "--role", "admin")
    assert again.exit_code == 0 and "API token" not in again.output


def test_user_add_with_an_app_role(
    invoke: Invoke,
    make_database: Callable[[], str],
    manifest_file: Callable[[dict[str, Any]], str],
) -> None:
    invoke("connection", "add", "venue", "--url", make_database())
    invoke("app", "add", "venue", manifest_file(TAKEAWAY), "--create-tables")
    good = invoke("user", "add", "cook@example.org", "--role", "kitchen", "--app", "takeaway")
    bad = invoke("user", "add", "cook@example.org", "--role", "chef", "--app", "takeaway")
    assert good.exit_code == 0, good.output
    assert good.output.startswith("user cook@example.org holds kitchen in app takeaway\n")
    assert bad.exit_code == 1
    assert bad.stderr == (
        "Error: app 'takeaway' has no role 'chef'; its roles: kitchen, counter (INVALID_VALUE)\n"
    )


def test_an_empty_password_on_stdin_is_refused(invoke: Invoke) -> None:
    result = invoke(
        "user", "add", "ada@example.org", "--role", "admin", "--password-stdin", stdin="\n"
    )
    assert result.exit_code == 1
    assert result.stderr == "Error: no password on stdin (INVALID_VALUE)\n"


# --- import ---------------------------------------------------------------------


@pytest.fixture
def venue(
    invoke: Invoke,
    make_database: Callable[[], str],
    manifest_file: Callable[[dict[str, Any]], str],
) -> str:
    """A connection `venue` with the takeaway app and its tables; its database URL."""
    url = make_database()
    assert invoke("connection", "add", "venue", "--url", url).exit_code == 0
    made = invoke("app", "add", "venue", manifest_file(TAKEAWAY), "--create-tables")
    assert made.exit_code == 0, made.output
    return url


def rows_file(tmp_path: Path, rows: Any) -> str:
    """An import file holding `rows`."""
    path = tmp_path / "rows.json"
    path.write_text(json.dumps(rows))
    return str(path)


def test_import_writes_each_row_through_the_pipeline_as_import(
    invoke: Invoke,
    make_database: Callable[[], str],
    manifest_file: Callable[[dict[str, Any]], str],
    control_url: str,
    tmp_path: Path,
    redis_url: str,
) -> None:
    # A name of its own: the Redis channel is shared with every other test run.
    name = f"venue-{uuid.uuid4().hex[:8]}"
    venue = make_database()
    invoke("connection", "add", name, "--url", venue)
    invoke("app", "add", name, manifest_file(TAKEAWAY), "--create-tables")
    rows = [
        {"pickup_at": "2026-10-23T12:30:00+01:00"},
        {"pickup_at": "2026-10-23T13:00:00+01:00", "cancel_code": "phone"},
    ]
    listener = redis.Redis.from_url(redis_url)
    channel = listener.pubsub(ignore_subscribe_messages=True)
    channel.subscribe(events_channel(name))
    result = CliRunner().invoke(
        main,
        ["import", name, "orders", rows_file(tmp_path, rows), "--now", "2026-10-22T09:00Z"],
        env={"DATABASE_URL": control_url, "REDIS_URL": redis_url},
    )
    assert result.exit_code == 0, result.output
    assert result.output == "imported 2 of 2 rows into takeaway.orders\n"
    engine = engine_for(venue)
    with engine.connect() as conn:
        orders = conn.execute(sa.text("SELECT status, cancel_code FROM orders ORDER BY id")).all()
        audit = conn.execute(sa.text("SELECT actor, at FROM adminium.audit ORDER BY id")).all()
    engine.dispose()
    # A create lands in `initial`: placed.
    assert [tuple(o) for o in orders] == [("placed", None), ("placed", "phone")]
    # The audit names the actor Import and the --now instant (09:00 UTC on 22 October).
    assert [a.actor for a in audit] == ["Import", "Import"]
    assert {a.at.isoformat() for a in audit} == {"2026-10-22T09:00:00+00:00"}
    events = heard(channel, 2)
    channel.close()
    listener.close()
    assert [(e["connection"], e["table"], e["state"], e["actor"]) for e in events] == [
        (name, "orders", "placed", "Import"),
        (name, "orders", "placed", "Import"),
    ]


def heard(channel: Any, count: int, seconds: float = 5.0) -> list[dict[str, Any]]:
    """Up to `count` JSON messages heard on a subscribed channel within `seconds`."""
    deadline = time.monotonic() + seconds
    messages: list[dict[str, Any]] = []
    while len(messages) < count and time.monotonic() < deadline:
        message = channel.get_message(timeout=0.5)
        if message:
            messages.append(json.loads(message["data"]))
    return messages


def test_import_reports_each_refused_row_and_exits_1(
    invoke: Invoke, venue: str, tmp_path: Path
) -> None:
    rows = [
        {"pickup_at": "2026-10-23T12:30:00+01:00"},
        {"pickup_at": "2026-10-23T12:45:00+01:00", "cancel_code": "x" * 21},  # maxLength 20
        {"pickup_at": "2026-10-23T13:00:00+01:00"},
    ]
    result = invoke("import", "venue", "orders", rows_file(tmp_path, rows))
    assert result.exit_code == 1
    assert result.stderr.startswith(
        "Error: 1 of 3 rows refused (VALUE_REFUSED)\n  row 2: VALUE_REFUSED: "
    )
    assert result.stdout == "imported 2 of 3 rows into takeaway.orders\n"
    engine = engine_for(venue)
    with engine.connect() as conn:
        assert conn.scalar(sa.text("SELECT count(*) FROM orders")) == 2
        assert conn.scalar(sa.text("SELECT count(*) FROM adminium.audit")) == 2
    engine.dispose()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        pytest.param(("venue", "dishes"), "has a table 'dishes'", id="unknown_table"),
        pytest.param(
            ("nowhere", "orders"), "no connection named 'nowhere'", id="unknown_connection"
        ),
    ],
)
def test_import_into_an_unknown_place_exits_1(
    invoke: Invoke, venue: str, tmp_path: Path, args: tuple[str, str], says: str
) -> None:
    result = invoke("import", *args, rows_file(tmp_path, [{"pickup_at": None}]))
    assert result.exit_code == 1
    assert says in result.stderr


@pytest.mark.parametrize(
    ("rows", "now", "says"),
    [
        pytest.param({"pickup_at": None}, None, "holds no rows", id="an_object_not_an_array"),
        pytest.param([1, 2], None, "holds no rows", id="an_array_of_numbers"),
        pytest.param([], "2026-10-22T09:00", "needs its offset", id="now_without_offset"),
    ],
)
def test_import_refuses_a_bad_file_or_now(
    invoke: Invoke, venue: str, tmp_path: Path, rows: Any, now: str | None, says: str
) -> None:
    extra = ("--now", now) if now else ()
    result = invoke("import", "venue", "orders", rows_file(tmp_path, rows), *extra)
    assert result.exit_code != 0
    assert says in result.stderr
