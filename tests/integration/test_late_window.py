"""A late window that opens while a person's write is made: the REST API and the screens alike.

The write is judged at the adapter's `now`; just before the commit the same clock is read
again, and a late window that opened in between makes the write a WRITE_CONFLICT (it was
judged on stale time), on every adapter a person writes through.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date, datetime

import pytest
from flask.testing import FlaskClient

from tests.integration.api_fixtures import Site, rows_path
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import csrf_of

pytestmark = pytest.mark.integration

# A stay arriving Sunday 12 July 2026 (London on BST): arrive_from 15:00 BST = 14:00 UTC,
# and cancel_hours 48 opens the late window 48 hours earlier: Friday 10 July, 14:00 UTC.
ARRIVE = date(2026, 7, 12)
BEFORE, AFTER = at("2026-07-10 13:59"), at("2026-07-10 14:01")


@contextmanager
def clock_crossing(site: Site) -> Iterator[None]:
    """The web's clock reads BEFORE once (the write's `now`), then AFTER (the commit's)."""
    readings = iter([BEFORE])
    kept = site.app.config["CLOCK"]
    site.app.config["CLOCK"] = lambda: next(readings, AFTER)
    try:
        yield
    finally:
        site.app.config["CLOCK"] = kept


def booked_stay(site: Site) -> int:
    return int(site.insert("stays", status="booked", arrive=ARRIVE))


def test_the_rest_api_answers_a_window_that_opened_during_the_write(site: Site) -> None:
    key = booked_stay(site)
    with clock_crossing(site):
        answer = site.client.post(
            rows_path("stays", key) + "/moves",
            json={"to": "cancelled"},
            headers=site.headers("staff"),
        )
    assert answer.status_code == 409, answer.text
    error = answer.json["error"]
    assert (error["code"], error["details"]["reason"]) == ("WRITE_CONFLICT", "late-window-opened")
    assert site.row("stays", key)["status"] == "booked"


def test_a_screen_move_answers_a_window_that_opened_during_the_write(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    key = booked_stay(screens_site)
    client = signed_in("staff")
    page = f"/apps/venue/venue/stays/{key}"
    token = csrf_of(client.get(page).text)
    with clock_crossing(screens_site):
        answer = client.post(
            f"{page}/move",
            data={"to": "cancelled", "seen": "booked"},
            headers={"X-CSRFToken": token, "HX-Request": "true"},
        )
    assert "WRITE_CONFLICT" in answer.text
    row = screens_site.row("stays", key)
    assert (row["status"], row["late_cancel"]) == ("booked", False)


def test_a_screen_move_inside_the_window_is_made_and_flagged_late(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    key = booked_stay(screens_site)
    client = signed_in("staff")
    page = f"/apps/venue/venue/stays/{key}"
    token = csrf_of(client.get(page).text)
    kept = screens_site.app.config["CLOCK"]
    screens_site.app.config["CLOCK"] = lambda: AFTER
    try:
        client.post(
            f"{page}/move",
            data={"to": "cancelled", "seen": "booked"},
            headers={"X-CSRFToken": token, "HX-Request": "true"},
        )
    finally:
        screens_site.app.config["CLOCK"] = kept
    row = screens_site.row("stays", key)
    assert (row["status"], row["late_cancel"]) == ("cancelled", True)


def test_the_crossing_clock_reads_before_then_after(site: Site) -> None:
    with clock_crossing(site):
        readings: list[datetime] = [site.app.config["CLOCK"]() for _ in range(3)]
    assert readings == [BEFORE, AFTER, AFTER]
