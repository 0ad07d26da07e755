"""Moves through the REST API: each refusal's code, status and details, with hand-worked times.

London is on BST (UTC+1) from 29 March to 25 October 2026, when the clocks go back at
02:00 BST. Instants are written in UTC with `at`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import psycopg
import pytest
from psycopg import sql

from services.apps import add_app
from services.connections import add_connection
from services.models import db
from services.storage import engine_for
from services.users import add_user
from tests.integration.api_fixtures import Site, api_manifest, rows_path
from tests.integration.pipeline_fixtures import at
from tests.integration.test_api_rows import new_order, refusal

pytestmark = pytest.mark.integration


def move(site: Site, table: str, key: Any, user: str = "staff", **body: Any) -> Any:
    """POST a move as one of the test users."""
    return site.client.post(rows_path(table, key) + "/moves", json=body, headers=site.headers(user))


def when(text: str | None) -> datetime | None:
    """An ISO time from an answer, read back as an instant."""
    return None if text is None else datetime.fromisoformat(text)


def test_a_listed_move_is_made_and_audited(site: Site) -> None:
    key = new_order(site)
    answer = move(site, "orders", key, to="confirmed")
    assert answer.status_code == 200
    assert (answer.json["key"], answer.json["row"]["status"]) == (key, "confirmed")
    entry = site.audit()[-1]
    assert (entry["actor"], entry["move_from"], entry["move_to"]) == (
        "staff@venue.test",
        "placed",
        "confirmed",
    )


def test_a_move_not_listed_is_409(site: Site) -> None:
    key = new_order(site)
    details = refusal(move(site, "orders", key, to="ready"), "STATE_MOVE_NOT_LISTED", 409)
    assert details == {"from": "placed", "to": "ready"}


def test_an_undo_needs_the_state_the_person_saw(site: Site) -> None:
    key = new_order(site, status="confirmed")
    details = refusal(move(site, "orders", key, to="placed"), "STATE_UNDO_REFUSED", 409)
    assert details == {"from": "confirmed", "to": "placed", "reason": "seen-state-needed"}
    answer = move(site, "orders", key, to="placed", **{"from": "confirmed"})
    assert answer.json["row"]["status"] == "placed"


def test_naming_a_state_the_row_has_left_is_409(site: Site) -> None:
    key = new_order(site, status="confirmed")
    details = refusal(
        move(site, "orders", key, to="ready", **{"from": "placed"}), "STATE_CHANGED", 409
    )
    assert details == {"seen": "placed", "state": "confirmed"}


def test_a_move_kept_for_managers_is_403_for_staff(site: Site) -> None:
    key = new_order(site, status="confirmed")
    details = refusal(move(site, "orders", key, to="refunded"), "STATE_MOVE_FORBIDDEN", 403)
    assert details == {"from": "confirmed", "to": "refunded", "roles": ["manager"]}
    # An admin holds every role of every app.
    assert move(site, "orders", key, "admin", to="refunded").status_code == 200


def test_a_move_with_values_writes_both(site: Site) -> None:
    key = new_order(site)
    answer = move(site, "orders", key, to="confirmed", values={"note": "at the back door"})
    row = answer.json["row"]
    assert (row["status"], row["note"]) == ("confirmed", "at the back door")


def test_a_move_stamps_at_the_webs_clock(site: Site) -> None:
    key = new_order(site)
    answer = move(site, "orders", key, to="cancelled")
    # The clock the web was given reads 09:00 UTC; the stamp on `cancelled` takes it.
    assert answer.json["row"]["cancelled_at"] == "2026-07-10T09:00:00+00:00"


def test_values_sent_with_a_move_into_a_locked_state_are_refused(site: Site) -> None:
    key = new_order(site)
    answer = move(site, "orders", key, to="cancelled", values={"cancel_code": "sold_out"})
    assert refusal(answer, "ROW_LOCKED", 409)["columns"] == ["cancel_code"]
    assert site.row("orders", key)["status"] == "placed"


def ticket(site: Site, doors: datetime | None, valid_to: datetime | None, **values: Any) -> int:
    """A valid ticket for an event whose doors open at `doors`."""
    event = site.insert("events", doors_at=doors)
    row = {"event_id": event, "status": "valid", "valid_to": valid_to, **values}
    return site.insert("tickets", **row)  # type: ignore[no-any-return]


# Doors at 18:00 UTC (19:00 BST); check-in opens 30 minutes before, 17:30 UTC, and
# closes at the ticket's valid_to, 23:00 UTC.
DOORS = at("2026-07-10 18:00")
VALID_TO = at("2026-07-10 23:00")


@pytest.mark.parametrize(
    ("now", "details"),
    [
        pytest.param(
            "2026-07-10 17:29",
            {"requires": "time", "bound": "after", "at": at("2026-07-10 17:30")},
            id="before_it_opens",
        ),
        pytest.param(
            "2026-07-10 23:00",
            {"requires": "time", "bound": "before", "at": VALID_TO},
            id="at_its_close",
        ),
    ],
)
def test_a_move_outside_its_time_is_409(site: Site, now: str, details: dict[str, Any]) -> None:
    key = ticket(site, DOORS, VALID_TO)
    site.clock.now = at(now)
    got = refusal(move(site, "tickets", key, to="checked_in"), "STATE_MOVE_REFUSED", 409)
    assert {**got, "at": when(got["at"])} == details
    assert site.row("tickets", key)["status"] == "valid"


@pytest.mark.parametrize("now", ["2026-07-10 17:30", "2026-07-10 22:59"])
def test_a_move_inside_its_time_is_made(site: Site, now: str) -> None:
    key = ticket(site, DOORS, VALID_TO)
    site.clock.now = at(now)
    assert move(site, "tickets", key, to="checked_in").json["row"]["status"] == "checked_in"


def test_a_moment_with_no_value_refuses_with_no_moment(site: Site) -> None:
    key = ticket(site, None, VALID_TO)
    details = refusal(move(site, "tickets", key, to="checked_in"), "STATE_MOVE_REFUSED", 409)
    assert details == {"requires": "time", "bound": "after", "at": None, "reason": "no-moment"}


def stay(site: Site, arrive: str) -> int:
    """A booked stay arriving on a date."""
    return site.insert("stays", status="booked", arrive=datetime.fromisoformat(arrive).date())  # type: ignore[no-any-return]


# A stay arriving Sunday 25 October 2026: the clocks went back at 02:00 that morning, so
# 15:00 that day is GMT, 15:00 UTC. `dropped` is refused to everyone within one calendar
# day: from 15:00 London time on Saturday 24th, which is BST, 14:00 UTC.
@pytest.mark.parametrize(
    ("now", "refused"),
    [
        pytest.param("2026-10-24 13:59", False, id="a_minute_before_the_day"),
        pytest.param("2026-10-24 14:01", True, id="inside_the_day"),
    ],
)
def test_a_late_move_refused_to_everyone_is_state_too_late(
    site: Site, now: str, refused: bool
) -> None:
    key = stay(site, "2026-10-25")
    site.clock.now = at(now)
    answer = move(site, "stays", key, to="dropped")
    if refused:
        details = refusal(answer, "STATE_TOO_LATE", 409)
        assert when(details["at"]) == at("2026-10-25 15:00")
        assert site.row("stays", key)["status"] == "booked"
    else:
        assert answer.json["row"]["status"] == "dropped"


def test_a_late_move_in_mode_flag_is_made_and_marked(site: Site) -> None:
    # Arrival Sunday 12 July at 15:00 BST = 14:00 UTC; cancel_hours 48 opens the window
    # 48 real hours before, 14:00 UTC on Friday 10 July.
    key = stay(site, "2026-07-12")
    site.clock.now = at("2026-07-10 14:01")
    answer = move(site, "stays", key, to="cancelled")
    assert answer.json["late"] is True and answer.json["row"]["late_cancel"] is True
    other = stay(site, "2026-07-12")
    site.clock.now = at("2026-07-10 13:59")
    answer = move(site, "stays", other, to="cancelled")
    assert answer.json["late"] is False and answer.json["row"]["late_cancel"] is False


def test_a_row_another_writer_holds_is_write_conflict(site: Site) -> None:
    key = new_order(site)
    with psycopg.connect(site.venue_url) as holder:
        holder.execute("SELECT 1 FROM orders WHERE id = %s FOR UPDATE", (key,))
        details = refusal(move(site, "orders", key, to="confirmed"), "WRITE_CONFLICT", 409)
        assert details == {"table": "orders", "key": key}
    assert move(site, "orders", key, to="confirmed").status_code == 200


def test_a_setting_condition_unmet_is_409(site: Site) -> None:
    key = ticket(site, DOORS, VALID_TO)
    store = site.store()
    with store.engine.begin() as conn:
        conn.execute(store.table("settings").update().values(door_on=False))
    site.clock.now = at("2026-07-10 18:00")
    details = refusal(move(site, "tickets", key, to="checked_in"), "STATE_MOVE_REFUSED", 409)
    assert details == {"requires": "setting", "table": "settings", "column": "door_on", "eq": True}


@pytest.fixture
def limited(fresh_site: Site) -> Iterator[str]:
    """A second connection to the venue's database through a role that may update few columns."""
    site = fresh_site
    role = f"adm_api_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(site.venue_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        for statement in (
            "GRANT USAGE ON SCHEMA public, adminium TO {}",
            "GRANT SELECT ON ALL TABLES IN SCHEMA public TO {}",
            "GRANT UPDATE (status, note, cancelled_at) ON orders TO {}",
            "GRANT INSERT ON adminium.audit TO {}",
        ):
            conn.execute(sql.SQL(statement).format(sql.Identifier(role)))
    info = psycopg.conninfo.conninfo_to_dict(site.venue_url)
    info.update(user=role)
    info.pop("password", None)
    with site.app.app_context():
        add_connection(db.session, "limited", psycopg.conninfo.make_conninfo(**info), force=True)
        add_app(db.session, "limited", api_manifest())
        add_user(db.session, "staff@venue.test", "staff", "limited/venue")
    try:
        yield role
    finally:
        engine_for(psycopg.conninfo.make_conninfo(**info)).dispose()
        with psycopg.connect(site.venue_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def test_a_column_the_connections_role_may_not_write_is_403(fresh_site: Site, limited: str) -> None:
    site = fresh_site
    key = new_order(site)
    path = f"/api/apps/limited/venue/tables/orders/rows/{key}"
    answer = site.client.patch(
        path,
        json={"values": {"note": "fine", "cancel_code": "nope"}},
        headers=site.headers("staff"),
    )
    details = refusal(answer, "COLUMN_NOT_WRITABLE", 403)
    assert details == {"table": "orders", "key": key, "columns": ["cancel_code"]}
    assert site.row("orders", key)["note"] is None


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        pytest.param({"late_cancel": "yes", "arrive": "2026-07-13"}, "type", id="flag_text"),
        pytest.param({"arrive": "2026-07-13", "late_cancel": 1}, "type", id="flag_number"),
        pytest.param({"guest_code": 5}, "type", id="code_number"),
        # An enum's wrong value is `check`, as on any enum column.
        pytest.param({"status": 5}, "check", id="state_number"),
    ],
)
def test_a_value_that_does_not_type_check_is_refused_before_a_rule_drops_it(
    site: Site, values: dict[str, Any], reason: str
) -> None:
    """Issue 33 item 1: a late flag's value is dropped when the move is not late, but "yes"
    is no true or false: refused naming the column, as any column's wrong type is, with
    nothing written (before, the PATCH answered 200 and wrote arrive)."""
    key = stay(site, "2026-07-12")
    before = site.row("stays", key)
    [column] = [name for name in values if name != "arrive"]
    patched = site.client.patch(
        rows_path("stays", key), json={"values": values}, headers=site.headers("staff")
    )
    assert refusal(patched, "VALUE_REFUSED", 422) == {"column": column, "reason": reason}
    moved = move(site, "stays", key, to="cancelled", values=values)
    assert refusal(moved, "VALUE_REFUSED", 422) == {"column": column, "reason": reason}
    assert site.row("stays", key) == before


def test_a_flag_of_the_right_type_is_still_dropped(site: Site) -> None:
    # Not late (the window opens 14:00 UTC on Friday 10 July): the true sent is dropped.
    key = stay(site, "2026-07-12")
    site.clock.now = at("2026-07-10 13:59")
    answer = move(site, "stays", key, to="cancelled", values={"late_cancel": True})
    assert answer.status_code == 200, answer.json
    assert answer.json["late"] is False and answer.json["row"]["late_cancel"] is False
