"""Stamps, codes and the lock, as the pipeline writes them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from core.basics.actors import Actor
from core.basics.errors import RowLocked
from core.writes.pipeline import change_row, create_row, make_timed_move
from core.writes.request import WriteRequest
from tests.integration.pipeline_fixtures import Venue, at

STAFF = Actor.person("sam@venue.test", {"staff"})
URL_SAFE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def new_ticket(venue: Venue) -> Any:
    event = venue.insert("events", doors_at=at("2026-06-12 18:00"))
    return create_row(
        venue.store,
        WriteRequest("tickets", STAFF, at("2026-03-01 10:00"), values={"event_id": event}),
    )


def offer(venue: Venue, key: Any, now: datetime, email: str = "friend@x.test") -> Any:
    return change_row(
        venue.store,
        WriteRequest(
            "tickets", STAFF, now, key=key, move_to="offered", values={"pending_email": email}
        ),
    )


def test_code_made_at_creation_is_url_safe_of_its_length(venue: Venue) -> None:
    token = new_ticket(venue).row["link_token"]
    assert isinstance(token, str)
    assert len(token) == 16
    assert set(token) <= URL_SAFE


def test_codes_differ_between_rows(venue: Venue) -> None:
    tokens = {new_ticket(venue).row["link_token"] for _ in range(5)}
    assert len(tokens) == 5


def test_code_renews_when_its_column_changes_and_the_old_one_opens_nothing(venue: Venue) -> None:
    created = new_ticket(venue)
    old = created.row["link_token"]
    offered = offer(venue, created.key, at("2026-03-28 12:00"))
    new = offered.row["link_token"]
    assert new != old
    assert len(new) == 16
    assert venue.store.find_by_code("tickets", "link_token", old) is None
    found = venue.store.find_by_code("tickets", "link_token", new)
    assert found is not None and found["id"] == created.key


def test_code_stays_when_its_column_does_not_change(venue: Venue) -> None:
    created = new_ticket(venue)
    change_row(
        venue.store,
        WriteRequest(
            "tickets",
            STAFF,
            at("2026-03-02 10:00"),
            key=created.key,
            values={"valid_to": at("2026-06-12 22:00")},
        ),
    )
    assert venue.row("tickets", created.key)["link_token"] == created.row["link_token"]


def test_stamp_adds_hours_read_from_a_setting(venue: Venue) -> None:
    # offer_hours = 24 elapsed hours from Saturday 28 March 12:00 UTC is Sunday 29 March
    # 12:00 UTC (13:00 BST on the wall: the clocks went forward in between).
    created = new_ticket(venue)
    offered = offer(venue, created.key, at("2026-03-28 12:00"))
    assert offered.row["offer_until"] == at("2026-03-29 12:00")


def test_stamp_with_an_unreadable_setting_writes_no_value(venue: Venue) -> None:
    with venue.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE settings SET offer_hours = NULL")
    created = new_ticket(venue)
    assert offer(venue, created.key, at("2026-03-28 12:00")).row["offer_until"] is None


def test_stamp_writes_only_when_its_column_takes_the_value(venue: Venue) -> None:
    created = new_ticket(venue)
    assert created.row["offer_until"] is None
    offer(venue, created.key, at("2026-03-28 12:00"))
    # Staying in offered while another column changes leaves the stamp as it was.
    change_row(
        venue.store,
        WriteRequest(
            "tickets",
            STAFF,
            at("2026-03-28 15:00"),
            key=created.key,
            values={"valid_to": at("2026-06-12 22:00")},
        ),
    )
    assert venue.row("tickets", created.key)["offer_until"] == at("2026-03-29 12:00")


def test_lapsed_offer_empties_the_address_and_renews_the_code(venue: Venue) -> None:
    created = new_ticket(venue)
    offered = offer(venue, created.key, at("2026-03-28 12:00"))
    rule = venue.store.spec("tickets").states.timed[0]  # type: ignore[union-attr,index]
    make_timed_move(venue.store, "tickets", created.key, rule, now=at("2026-03-29 12:00"))
    row = venue.row("tickets", created.key)
    assert (row["status"], row["pending_email"]) == ("valid", None)
    assert row["link_token"] not in (offered.row["link_token"], created.row["link_token"])
    assert venue.store.find_by_code("tickets", "link_token", offered.row["link_token"]) is None


# The orders' lock: a cancelled order keeps every column but its state shut.
def new_order(venue: Venue, status: str = "placed") -> Any:
    return venue.insert("orders", status=status, pickup_at=at("2026-03-27 12:30"))


def test_timed_set_and_stamp_pass_the_lock_into_cancelled(venue: Venue) -> None:
    key = new_order(venue)
    rule = venue.store.spec("orders").states.timed[0]  # type: ignore[union-attr,index]
    now = at("2026-03-27 21:00")
    make_timed_move(venue.store, "orders", key, rule, now=now)
    row = venue.row("orders", key)
    assert (row["cancel_code"], row["cancelled_at"]) == ("closed", now)


@pytest.mark.parametrize(
    ("status", "move_to"),
    [("cancelled", None), ("placed", "cancelled")],
    ids=["row-already-locked", "move-into-locked-state"],
)
def test_lock_refuses_a_writers_values(venue: Venue, status: str, move_to: str | None) -> None:
    key = new_order(venue, status)
    with venue.unchanged("orders", key), pytest.raises(RowLocked) as locked:
        change_row(
            venue.store,
            WriteRequest(
                "orders",
                STAFF,
                at("2026-03-27 13:00"),
                key=key,
                values={"note": "late", "cancel_code": "customer"},
                move_to=move_to,
            ),
        )
    assert (locked.value.code, locked.value.status) == ("ROW_LOCKED", 409)
    assert locked.value.details == {
        "columns": ["cancel_code", "note"],
        "when": {"column": "status", "values": ["cancelled"]},
    }


def test_locked_row_lets_a_value_sent_as_it_already_is(venue: Venue) -> None:
    key = new_order(venue, "cancelled")
    change_row(
        venue.store,
        WriteRequest(
            "orders",
            STAFF,
            at("2026-03-27 13:00"),
            key=key,
            values={"pickup_at": at("2026-03-27 12:30"), "note": None},
        ),
    )
    assert venue.audit()[0]["after"]["note"] is None


def test_unlocked_row_takes_a_writers_values(venue: Venue) -> None:
    key = new_order(venue, "confirmed")
    change_row(
        venue.store,
        WriteRequest("orders", STAFF, at("2026-03-27 13:00"), key=key, values={"note": "ok"}),
    )
    assert venue.row("orders", key)["note"] == "ok"


def test_staff_move_into_locked_state_alone_passes_and_stamps(venue: Venue) -> None:
    key = new_order(venue)
    now = at("2026-03-27 13:00")
    change_row(venue.store, WriteRequest("orders", STAFF, now, key=key, move_to="cancelled"))
    assert venue.row("orders", key)["cancelled_at"] == now
