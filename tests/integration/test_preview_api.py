"""POST /api/apps/{connection}/{app}/preview: the same preview as JSON,
in both OpenAPI documents, for new values or a new manifest of the app (a manager's);
nothing saved. Moments worked by hand (Europe/London)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient
from jsonschema import Draft202012Validator

from adminium.cli import main
from services.apps import add_app, lookup_app
from services.models import db
from services.storage import open_session
from services.users import add_user
from tests.integration.preview_fixtures import DINER, Diner, build_diner
from web import create_app
from web.openapi import app_document, document

PATH = "/api/apps/diner/diner/preview"


@pytest.fixture
def site(make_database: Callable[[], str], redis_url: str) -> Iterator[tuple[Diner, Flask, str]]:
    diner = build_diner(make_database(), make_database())
    app = create_app({"DATABASE_URL": diner.control_url, "REDIS_URL": redis_url, "TESTING": True})
    with app.app_context():
        token = add_user(db.session, "staff@diner.test", "staff", "diner/diner").token
    assert token is not None
    yield diner, app, token
    from web.live import stop_hub

    stop_hub(app)
    with app.app_context():
        db.engine.dispose()
    diner.dispose()


def fits(schema_name: str, body: Any, doc: dict[str, Any]) -> None:
    schema = {"$ref": f"#/components/schemas/{schema_name}", "components": doc["components"]}
    errors = sorted(Draft202012Validator(schema).iter_errors(body), key=str)
    assert not errors, [e.message for e in errors]


def test_the_api_answers_the_preview_as_json_and_saves_nothing(
    site: tuple[Diner, Flask, str],
) -> None:
    diner, app, token = site
    # Friday 2026-10-23 (BST): closing 23:00 -> 21:00 is 22:00Z -> 20:00Z; 20:30Z is past it.
    key = diner.insert("orders", pickup_at=datetime(2026, 10, 23, 12, tzinfo=UTC), status="placed")
    fri = diner.rows("SELECT id FROM diner.opening_hours WHERE weekday = 'fri'")[0][0]
    body = {
        "set": [{"table": "opening_hours", "key": fri, "column": "closes", "value": "21:00"}],
        "at": "2026-10-23T20:30:00+00:00",
    }
    answer = app.test_client().post(PATH, json=body, headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.json
    found = answer.json
    # 192 hours past Fri 23 Oct 20:30Z, over the clocks going back: Sat 31 Oct 20:30 GMT.
    assert found["summary"] == (
        "1 row due at once, 0 moments later, 0 earlier (read to Sat 31 Oct 20:30, 8 days)"
    )
    assert (found["horizon_hours"], found["read_to"]) == (192, "2026-10-31T20:30:00+00:00")
    [change] = found["changes"]
    assert change["key"] == str(key) and change["effect"] == "due-at-once"
    assert (change["old"], change["new"]) == (
        "2026-10-23T23:00:00+01:00",
        "2026-10-23T21:00:00+01:00",
    )
    fits("Preview", found, document())
    fits("PreviewRequest", body, document())
    with app.app_context():
        own = app_document("diner", "diner", {})
    assert own["paths"][PATH]["post"]["operationId"] == "preview"
    fits("Preview", found, own)
    assert diner.rows("SELECT closes FROM diner.opening_hours WHERE weekday = 'fri'") == [
        ("23:00",)
    ]


def test_an_unknown_table_is_404_and_no_token_401(site: tuple[Diner, Flask, str]) -> None:
    _, app, token = site
    body = {"set": [{"table": "nope", "column": "x", "value": 1}]}
    client = app.test_client()
    missing = client.post(PATH, json=body, headers={"Authorization": f"Bearer {token}"})
    assert missing.status_code == 404
    assert client.post(PATH, json=body).status_code == 401


# --- a new manifest -----------------------------------------------------------------

AT = "2026-10-23T20:30:00+00:00"  # Friday 23 Oct, 21:30 BST
STATUSES = (
    "SELECT 'offers', id, status::text FROM diner.offers"
    " UNION ALL SELECT 'orders', id, status::text FROM diner.orders ORDER BY 1, 2"
)
WITH_MANAGER = {**DINER, "roles": ["staff", "manager"]}


def earlier_rules() -> dict[str, Any]:
    """The diner with offers open a fixed 20 minutes (not settings.offer_minutes, 60) and
    orders cancelled at 21:00 on their pickup day (not at the day's closing, 23:00)."""
    manifest = copy.deepcopy(WITH_MANAGER)
    offers = manifest["tables"]["offers"]["states"]["timed"][0]
    offers["at"]["plus"] = {"minutes": 20}
    manifest["tables"]["orders"]["states"]["timed"][0]["at"]["time"] = "21:00"
    return manifest


@dataclass
class Managed:
    diner: Diner
    client: FlaskClient
    tokens: dict[str, str]

    def post(self, who: str, body: Any) -> Any:
        return self.client.post(
            PATH, json=body, headers={"Authorization": f"Bearer {self.tokens[who]}"}
        )

    def console(self, *args: str) -> Any:
        env = {"DATABASE_URL": self.diner.control_url, "REDIS_URL": ""}
        return CliRunner().invoke(main, list(args), env=env)

    def saved(self) -> Any:
        with open_session(self.diner.control_url) as session:
            app = lookup_app(session, "diner", "diner")
            assert app is not None
            return app.manifest


@pytest.fixture
def managed(make_database: Callable[[], str], redis_url: str) -> Iterator[Managed]:
    """The diner with a manager role, a staff user and a manager of the app."""
    diner = build_diner(make_database(), make_database())
    with open_session(diner.control_url) as session:
        add_app(session, "diner", WITH_MANAGER, replace=True)
    app = create_app({"DATABASE_URL": diner.control_url, "REDIS_URL": redis_url, "TESTING": True})
    tokens: dict[str, str] = {}
    with app.app_context():
        for role in ("staff", "manager"):
            token = add_user(db.session, f"{role}@diner.test", role, "diner/diner").token
            assert token is not None
            tokens[role] = token
    yield Managed(diner, app.test_client(), tokens)
    from web.live import stop_hub

    stop_hub(app)
    with app.app_context():
        db.engine.dispose()
    diner.dispose()


def test_a_new_manifest_is_previewed_as_the_console_previews_it(
    managed: Managed, tmp_path: Path
) -> None:
    diner = managed.diner
    utc = UTC
    # Offers: made + 60 min -> made + 20 min. Made 20:00Z: 21:00Z -> 20:20Z, past 20:30Z:
    # due at once. Made 20:15Z: 21:15Z -> 20:35Z, still ahead: earlier.
    due_offer = diner.insert(
        "offers", made_at=datetime(2026, 10, 23, 20, tzinfo=utc), status="open"
    )
    later_offer = diner.insert(
        "offers", made_at=datetime(2026, 10, 23, 20, 15, tzinfo=utc), status="open"
    )
    # Orders: Friday's closing 23:00 BST (22:00Z) -> 21:00 BST (20:00Z): due at once.
    # Saturday's pickup: 22:00Z Sat -> 20:00Z Sat, still ahead: earlier.
    due_order = diner.insert(
        "orders", pickup_at=datetime(2026, 10, 23, 12, tzinfo=utc), status="placed"
    )
    diner.insert("orders", pickup_at=datetime(2026, 10, 24, 12, tzinfo=utc), status="placed")
    before = diner.rows(STATUSES)
    manifest = earlier_rules()

    answer = managed.post("manager", {"manifest": manifest, "at": AT})
    assert answer.status_code == 200, answer.json
    found = answer.json
    assert found["summary"] == (
        "2 rows due at once, 0 moments later, 2 earlier (read to Sat 31 Oct 20:30, 8 days)"
    )
    due = {
        (c["table"], c["key"]): (c["old"], c["new"])
        for c in found["changes"]
        if c["effect"] == "due-at-once"
    }
    assert due == {
        ("offers", str(due_offer)): ("2026-10-23T22:00:00+01:00", "2026-10-23T21:20:00+01:00"),
        ("orders", str(due_order)): ("2026-10-23T23:00:00+01:00", "2026-10-23T21:00:00+01:00"),
    }
    earlier = {(c["table"], c["key"]) for c in found["changes"] if c["effect"] == "earlier"}
    assert ("offers", str(later_offer)) in earlier and len(earlier) == 2
    fits("Preview", found, document())
    fits("PreviewRequest", {"manifest": manifest, "at": AT}, document())
    own = app_document("diner", "diner", {})
    fits("PreviewRequest", {"manifest": manifest, "at": AT}, own)
    with pytest.raises(AssertionError):  # the app's own document names the app
        fits("PreviewRequest", {"manifest": {**manifest, "name": "tickets"}}, own)

    # The console's preview of the same file at the same --at: the same rows due at once.
    file = tmp_path / "diner.json"
    file.write_text(json.dumps(manifest))
    printed = managed.console(
        "app", "add", "diner", str(file), "--replace", "--preview", "--at", AT
    )
    assert printed.exit_code == 0, printed.output
    lines = printed.output.strip().splitlines()
    assert lines[-1] == found["summary"]
    console_due = {
        tuple(line.split("\t")[0].split(" ")) for line in lines if "\tdue at once\t" in line
    }
    assert console_due == set(due)

    # Nothing saved: the manifest and the rows as they were.
    assert managed.saved() == WITH_MANAGER
    assert diner.rows(STATUSES) == before


def test_a_manifest_preview_is_a_managers_and_refused_as_the_console_refuses(
    managed: Managed, tmp_path: Path
) -> None:
    manifest = earlier_rules()
    sets = [{"table": "settings", "column": "offer_minutes", "value": 30}]
    # Staff keep their preview of values, not of a manifest (it shows the rules).
    assert managed.post("staff", {"set": sets, "at": AT}).status_code == 200
    staff = managed.post("staff", {"manifest": manifest, "at": AT})
    assert staff.status_code == 403
    assert staff.json["error"]["code"] == "FORBIDDEN"
    assert "takes the manager role" in staff.json["error"]["message"]
    # Both, or neither, of `set` and `manifest`.
    for body in ({"set": sets, "manifest": manifest}, {"at": AT}):
        refused = managed.post("manager", body)
        assert refused.status_code == 400, body
        error = refused.json["error"]
        assert error["code"] == "INVALID_REQUEST"
        assert error["message"].startswith("send `set` (new values) or `manifest`")
        fits("Error", refused.json, document())
    # Another app's manifest on this app's path.
    other = managed.post("manager", {"manifest": {**manifest, "name": "tickets"}})
    assert other.status_code == 400 and other.json["error"]["code"] == "INVALID_REQUEST"
    # A manifest the check refuses: the code and the sentences the console prints.
    bad = copy.deepcopy(manifest)
    bad["tables"]["offers"]["states"]["timed"][0]["to"] = "gone"
    refused = managed.post("manager", {"manifest": bad, "at": AT})
    assert refused.status_code == 400
    error = refused.json["error"]
    assert error["code"] == "MANIFEST_REFUSED"
    assert error["details"]["refusals"]
    file = tmp_path / "bad.json"
    file.write_text(json.dumps(bad))
    printed = managed.console(
        "app", "add", "diner", str(file), "--replace", "--preview", "--at", AT
    )
    assert printed.exit_code == 1
    assert printed.output.splitlines()[1:] == [
        f"  {r['where']}: {r['sentence']}" for r in error["details"]["refusals"]
    ]
    assert managed.saved() == WITH_MANAGER


# --- a preview reads only its own app's tables ----------------------------------------


def spying_manifest(schema: str = "tickets", name: str = "diner") -> dict[str, Any]:
    """A manifest of `name` that reads the tickets app's ticket holders, keyed by address,
    with a timed move every ticket is due for at the preview's `at`."""
    return {
        "name": name,
        "schema": schema,
        "tables": {
            "tickets": {
                "key": "holder_email",
                "columns": [
                    {"ref": "holder_email", "type": "text"},
                    {"ref": "valid_to", "type": "timestamptz"},
                    {"ref": "status", "type": "text"},
                ],
                "states": {
                    "column": "status",
                    "initial": "valid",
                    "moves": {"valid": ["used"]},
                    "timed": [{"from": "valid", "to": "used", "at": {"column": "valid_to"}}],
                },
            }
        },
    }


def test_a_manifest_preview_never_reads_another_app_s_tables(
    managed: Managed, tmp_path: Path
) -> None:
    diner = managed.diner
    now = datetime.now(UTC)
    times = {"doors_at": now, "starts_at": now, "ends_at": now}
    event = diner.insert("events", schema="tickets", name="Gig", venue="Hall", **times)
    diner.sql(
        "INSERT INTO tickets.tickets (event_id, holder_name, holder_email, price, valid_to,"
        " status) VALUES (:event, 'Ada', 'ada@private.example', 10, now(), 'valid')",
        event=event,
    )
    ahead = "2036-10-23T20:30:00+00:00"  # ten years on: every ticket is due
    # The manager of the diner alone (no role in tickets) names the tickets app's schema.
    answer = managed.post("manager", {"manifest": spying_manifest(), "at": ahead})
    assert answer.status_code == 403, answer.json
    error = answer.json["error"]
    assert error["code"] == "FORBIDDEN"
    assert error["message"] == (
        "app 'diner' keeps its tables in schema 'diner': a preview of it reads that schema,"
        " not 'tickets'"
    )
    assert "ada@private.example" not in answer.text
    # A schema no app keeps is refused the same, before anything is read (no 502).
    nowhere = managed.post("manager", {"manifest": spying_manifest("nowhere"), "at": ahead})
    assert (nowhere.status_code, nowhere.json["error"]["code"]) == (403, "FORBIDDEN")
    # The console refuses the same manifest with the same sentence, and a new app's
    # preview that names another app's tables.
    file = tmp_path / "spy.json"
    for manifest, sentence in (
        (spying_manifest(), error["message"]),
        (
            spying_manifest(name="spy"),
            "tickets.tickets is app 'tickets''s table: a preview of app 'spy' reads only"
            " its own tables",
        ),
    ):
        file.write_text(json.dumps(manifest))
        printed = managed.console("app", "add", "diner", str(file), "--preview", "--at", ahead)
        assert printed.exit_code == 1
        assert printed.output == f"Error: {sentence} (FORBIDDEN)\n"
