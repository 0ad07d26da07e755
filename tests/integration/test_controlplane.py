"""The control plane on real PostgreSQL: migrations, connections, apps, users."""

from __future__ import annotations

import copy
import logging
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.orm import Session

from core.sweep.report import SweepOutcome
from services.apps import add_app, save_app
from services.connections import (
    add_connection,
    connections_with_minute_work,
    get_connection,
    list_connections,
    set_paused,
)
from services.errors import AlreadyExists, DatabaseRefused, InvalidValue, ManifestRefused, NotFound
from services.events import NO_PUBLISHER
from services.models import SCHEMA, Base, Connection, User, db
from services.storage import engine_for, open_session, upgrade_control_plane
from services.sweeps import sweep
from services.urls import hide_password
from services.users import add_user, renew_token, user_by_password, user_by_token
from tests.conftest import ROOT
from web import create_app

SECRET = "pa55-w0rd-never-shown"

# Hand-written, not examples/takeaway.json: these tests need one table in `public` (the
# shared-table refusal names exactly ["orders"], the index test reads schema public), the
# roles `kitchen` and `counter` the user tests grant, and a timed move that reads only the
# row; the example brings four tables in schema `takeaway` and other roles.
TAKEAWAY: dict[str, Any] = {
    "name": "takeaway",
    "roles": ["kitchen", "counter"],
    "tables": {
        "orders": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {
                    "ref": "status",
                    "type": "enum",
                    "values": ["placed", "confirmed", "cancelled"],
                    "default": "placed",
                },
                {"ref": "pickup_at", "type": "timestamptz"},
                {"ref": "cancel_code", "type": "text", "maxLength": 20, "nullable": True},
            ],
            "states": {
                "column": "status",
                "initial": "placed",
                "moves": {"placed": ["confirmed", "cancelled"], "confirmed": ["cancelled"]},
                "timed": [
                    {
                        "from": "placed",
                        "to": "cancelled",
                        "at": {"column": "pickup_at"},
                        "set": {"cancel_code": "closed"},
                    }
                ],
            },
        }
    },
}


def without_timed(manifest: dict[str, Any], name: str) -> dict[str, Any]:
    """The manifest under another name, with no timed move."""
    other = copy.deepcopy(manifest)
    other["name"] = name
    del other["tables"]["orders"]["states"]["timed"]
    return other


def with_password(url: str, password: str = SECRET) -> str:
    """A libpq conninfo string (the test fixtures' form) with a password added."""
    return f"{url} password={password}"


@pytest.fixture
def control_url(make_database: Callable[[], str]) -> str:
    """Adminium's own database, migrated."""
    url = make_database()
    upgrade_control_plane(url)
    return url


@pytest.fixture
def session(control_url: str) -> Iterator[Session]:
    """A control-plane session."""
    with open_session(control_url) as session:
        yield session
    engine_for(control_url).dispose()


@pytest.fixture
def venue_url(make_database: Callable[[], str]) -> str:
    """A venue's own database (a connection points at it)."""
    return make_database()


# --- migrations -----------------------------------------------------------------


def test_migrations_from_an_empty_database_match_the_models(control_url: str) -> None:
    engine = engine_for(control_url)
    with engine.connect() as conn:
        tables = set(sa.inspect(conn).get_table_names(schema=SCHEMA))
        context = MigrationContext.configure(
            conn,
            opts={
                "include_schemas": True,
                "include_name": lambda name, kind, _: kind != "table" or name != "alembic_version",
            },
        )
        diff = compare_metadata(context, Base.metadata)
        version = conn.scalar(sa.text(f"SELECT version_num FROM {SCHEMA}.alembic_version"))
    engine.dispose()
    assert tables == {
        "connections",
        "apps",
        "webhooks",
        "users",
        "user_roles",
        "control_version",
        "agreements",
        "alembic_version",
    }
    assert diff == []
    assert version == "0006"


def test_upgrade_at_once_from_three_processes_then_again_is_harmless(
    make_database: Callable[[], str],
) -> None:
    url = make_database()
    script = "import sys; from services.storage import upgrade_control_plane as u; u(sys.argv[1])"
    processes = [
        subprocess.Popen([sys.executable, "-c", script, url], cwd=ROOT, stderr=subprocess.PIPE)
        for _ in range(3)
    ]
    errors = [p.communicate(timeout=120)[1].decode() for p in processes]
    assert [p.returncode for p in processes] == [0, 0, 0], errors
    upgrade_control_plane(url)
    engine = engine_for(url)
    with engine.connect() as conn:
        assert conn.scalar(sa.text(f"SELECT count(*) FROM {SCHEMA}.alembic_version")) == 1
    engine.dispose()


# --- connections ----------------------------------------------------------------


def test_a_connection_without_a_zone_reads_utc(session: Session, venue_url: str) -> None:
    connection = add_connection(session, "venue", venue_url)
    assert connection.zone is None
    assert connection.zone_name == "UTC"
    assert not connection.paused


def test_a_connection_keeps_its_venue_zone(session: Session, venue_url: str) -> None:
    add_connection(session, "london", venue_url, "Europe/London")
    assert get_connection(session, "london").zone == "Europe/London"


@pytest.mark.parametrize(
    "zone",
    [
        pytest.param("Mars/Olympus_Mons", id="unknown_name"),
        pytest.param("europe/london", id="wrong_case"),
        pytest.param("localtime", id="the_servers_own_zone"),
        pytest.param("../../etc/passwd", id="a_path"),
        pytest.param("GMT+1", id="not_an_iana_name"),
    ],
)
def test_an_invalid_zone_is_refused_and_nothing_saved(
    session: Session, venue_url: str, zone: str
) -> None:
    with pytest.raises(InvalidValue) as refused:
        add_connection(session, "venue", venue_url, zone)
    assert "is no IANA time zone" in refused.value.message
    assert list_connections(session) == []


def test_a_second_connection_of_the_same_name_is_refused(session: Session, venue_url: str) -> None:
    add_connection(session, "venue", venue_url)
    with pytest.raises(AlreadyExists):
        add_connection(session, "venue", venue_url, "Europe/Paris")
    assert [c.zone for c in list_connections(session)] == [None]


@pytest.mark.parametrize("name", ["Venue", "", "a b", "-dash-first", "x" * 64], ids=str.__len__)
def test_a_connection_name_must_be_plain(session: Session, venue_url: str, name: str) -> None:
    with pytest.raises(InvalidValue):
        add_connection(session, name, venue_url)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        pytest.param(
            f"postgresql://ada:{SECRET}@db.example:5432/shop",
            "postgresql://ada:***@db.example:5432/shop",
            id="url_with_password",
        ),
        pytest.param(
            f"host=db.example port=5432 user=ada password={SECRET} dbname=shop",
            "postgresql://ada:***@db.example:5432/shop",
            id="conninfo_with_password",
        ),
        pytest.param(
            "postgresql://ada@db.example/shop",
            "postgresql://ada@db.example/shop",
            id="no_password",
        ),
        pytest.param(
            f"postgresql://ada:{SECRET}@/shop?host=/tmp/pg",
            "postgresql://ada:***@/shop?host=/tmp/pg",
            id="unix_socket",
        ),
        pytest.param(
            f"postgresql://ada@db.example/shop?password={SECRET}",
            "postgresql://ada:***@db.example/shop",
            id="password_in_the_query",
        ),
    ],
)
def test_safe_url_hides_the_password(url: str, shown: str) -> None:
    assert hide_password(url) == shown
    assert Connection(name="x", url=url).safe_url == shown


def test_the_password_never_reaches_the_log(
    session: Session, venue_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    url = with_password(venue_url)
    add_connection(session, "venue", url, "Europe/London")
    set_paused(session, "venue", True, NO_PUBLISHER)
    set_paused(session, "venue", False, NO_PUBLISHER)
    add_app(session, "venue", TAKEAWAY, create_tables=True)
    listed = list_connections(session)
    assert "venue" in caplog.text
    assert SECRET not in caplog.text
    assert SECRET not in repr(listed)
    assert listed[0].url == url  # kept whole: the sweep needs it to connect


def test_a_paused_connection_is_not_swept_until_resumed(
    session: Session, make_database: Callable[[], str]
) -> None:
    add_connection(session, "takeaway", make_database())
    add_app(session, "takeaway", TAKEAWAY, create_tables=True)
    add_connection(session, "quiet", make_database())
    add_app(session, "quiet", without_timed(TAKEAWAY, "quiet"), create_tables=True)
    # Every connection with a timed move gets its minute's job; the job reads the pause.
    assert connections_with_minute_work(session) == ["takeaway"]
    now = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)

    assert set_paused(session, "takeaway", True, NO_PUBLISHER).paused
    assert connections_with_minute_work(session) == ["takeaway"]
    paused = sweep(session, "takeaway", now=now, publisher=NO_PUBLISHER)
    assert paused.outcome is SweepOutcome.paused

    assert not set_paused(session, "takeaway", False, NO_PUBLISHER).paused
    resumed = sweep(session, "takeaway", now=now, publisher=NO_PUBLISHER)
    assert resumed.outcome is SweepOutcome.done


def test_pausing_an_unknown_connection_is_not_found(session: Session) -> None:
    with pytest.raises(NotFound):
        set_paused(session, "nowhere", True, NO_PUBLISHER)


# --- apps -----------------------------------------------------------------------


def test_an_app_that_passes_the_check_is_saved(session: Session, venue_url: str) -> None:
    add_connection(session, "venue", venue_url)
    app = add_app(session, "venue", TAKEAWAY, create_tables=True)
    assert app.manifest == TAKEAWAY
    assert app.model.tables["orders"].states is not None
    assert app.has_minute_work
    assert [a.name for a in get_connection(session, "venue").apps] == ["takeaway"]


def test_a_bad_manifest_is_refused_with_the_checks_sentences(
    session: Session, venue_url: str
) -> None:
    bad = copy.deepcopy(TAKEAWAY)
    # An undo made by the clock: the spec's own example sentence.
    moves = bad["tables"]["orders"]["states"]["moves"]
    moves["confirmed"] = ["cancelled", {"to": "placed", "undo": True}]
    bad["tables"]["orders"]["states"]["timed"] = [
        {"from": "confirmed", "to": "placed", "at": {"column": "pickup_at"}}
    ]
    add_connection(session, "venue", venue_url)
    with pytest.raises(ManifestRefused) as refused:
        add_app(session, "venue", bad)
    sentences = [r["sentence"] for r in refused.value.details["refusals"]]
    assert (
        'the move from "confirmed" to "placed" is an undo, which only a person makes' in sentences
    )
    assert get_connection(session, "venue").apps == []


def test_a_manifest_of_the_wrong_shape_is_refused(session: Session, venue_url: str) -> None:
    add_connection(session, "venue", venue_url)
    with pytest.raises(ManifestRefused) as refused:
        add_app(session, "venue", {"name": "empty", "tables": {}})
    assert refused.value.details["refusals"]
    assert get_connection(session, "venue").apps == []


def test_an_app_of_the_same_name_is_replaced_only_when_asked(
    session: Session, venue_url: str
) -> None:
    add_connection(session, "venue", venue_url)
    add_app(session, "venue", TAKEAWAY, create_tables=True)
    changed = copy.deepcopy(TAKEAWAY)
    changed["title"] = "Takeaway, second edition"
    with pytest.raises(AlreadyExists):
        add_app(session, "venue", changed)
    assert add_app(session, "venue", changed, replace=True).manifest == changed
    assert len(get_connection(session, "venue").apps) == 1


def test_two_apps_of_a_connection_never_share_a_table_in_one_schema(
    session: Session, venue_url: str
) -> None:
    add_connection(session, "venue", venue_url)
    add_app(session, "venue", TAKEAWAY, create_tables=True)
    with pytest.raises(AlreadyExists) as refused:
        add_app(session, "venue", without_timed(TAKEAWAY, "deli"))
    assert refused.value.details == {"app": "takeaway", "tables": ["orders"], "schema": "public"}
    own_schema = without_timed(TAKEAWAY, "deli") | {"schema": "deli"}
    assert add_app(session, "venue", own_schema, create_tables=True).name == "deli"


def test_create_tables_makes_the_apps_tables_index_and_adminium_schema(
    session: Session, venue_url: str
) -> None:
    add_connection(session, "venue", venue_url)
    add_app(session, "venue", TAKEAWAY, create_tables=True)
    engine = engine_for(venue_url)
    with engine.connect() as conn:
        inspector = sa.inspect(conn)
        schemas = set(inspector.get_schema_names())
        columns = {c["name"] for c in inspector.get_columns("orders", schema="public")}
        indexed = [i["column_names"] for i in inspector.get_indexes("orders", schema="public")]
    engine.dispose()
    assert "adminium" in schemas
    assert {"id", "status", "pickup_at", "cancel_code"} <= columns
    # The timed move reads pickup_at in state placed: the sweep wants (status, pickup_at).
    assert ["status", "pickup_at"] in indexed


def test_create_tables_on_a_database_that_does_not_answer_saves_nothing(
    session: Session, venue_url: str
) -> None:
    add_connection(session, "gone", venue_url.replace("dbname=", "dbname=gone_"))
    with pytest.raises(DatabaseRefused):
        add_app(session, "gone", TAKEAWAY, create_tables=True)
    assert get_connection(session, "gone").apps == []


# --- users ----------------------------------------------------------------------


def test_an_admin_gets_a_token_shown_once_and_stored_only_as_its_hash(session: Session) -> None:
    added = add_user(session, " Ada@Example.org ", "admin", password="correct horse")
    assert added.token
    user = added.user
    assert user.email == "ada@example.org"
    assert user.token_hash != added.token and added.token not in (user.token_hash or "")
    assert user_by_token(session, added.token) == user
    assert user_by_token(session, added.token + "x") is None
    assert user_by_password(session, "ada@example.org", "correct horse") == user
    assert user_by_password(session, "ada@example.org", "wrong") is None
    assert "correct horse" not in (user.password_hash or "")
    assert [(r.role, r.app_id) for r in user.roles] == [("admin", None)]


def test_a_role_of_an_app_and_a_second_role_keep_the_first_token(
    session: Session, venue_url: str
) -> None:
    add_connection(session, "venue", venue_url)
    app = save_app(session, "venue", TAKEAWAY)
    first = add_user(session, "cook@example.org", "kitchen", app="venue/takeaway")
    second = add_user(session, "cook@example.org", "counter", app="takeaway")
    again = add_user(session, "cook@example.org", "counter", app="takeaway")
    assert first.token and second.token is None and again.token is None
    assert second.user.roles_in(app) == {"kitchen", "counter"}
    assert user_by_token(session, first.token) == second.user
    assert session.scalar(sa.select(sa.func.count()).select_from(User)) == 1


@pytest.mark.parametrize(
    ("role", "app", "error"),
    [
        pytest.param("chef", "takeaway", InvalidValue, id="role_the_app_does_not_list"),
        pytest.param("kitchen", None, InvalidValue, id="app_role_without_an_app"),
        pytest.param("kitchen", "venue/nothing", NotFound, id="unknown_app"),
    ],
)
def test_a_role_must_be_the_apps(
    session: Session, venue_url: str, role: str, app: str | None, error: type[Exception]
) -> None:
    add_connection(session, "venue", venue_url)
    save_app(session, "venue", TAKEAWAY)
    with pytest.raises(error):
        add_user(session, "cook@example.org", role, app=app)
    assert session.scalar(sa.select(sa.func.count()).select_from(User)) == 0


def test_a_renewed_token_leaves_the_old_one_opening_nothing(session: Session) -> None:
    old = add_user(session, "ada@example.org", "admin").token
    assert old
    new = renew_token(session, "ada@example.org")
    assert user_by_token(session, old) is None
    assert user_by_token(session, new) is not None


# --- the web's db ---------------------------------------------------------------


def test_the_web_reads_the_control_plane_with_flask_sqlalchemy(
    session: Session, control_url: str, venue_url: str
) -> None:
    add_connection(session, "venue", with_password(venue_url))
    app = create_app({"TESTING": True, "DATABASE_URL": control_url})
    with app.app_context():
        names = [c.name for c in list_connections(db.session)]
        engine = db.engine
    engine.dispose()
    assert names == ["venue"]
