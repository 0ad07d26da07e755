"""The row page and the pending list say how a moment was read, in words; a row waiting for
no time says so and is listed under "no moment"; a due row "moves at the next minute"."""

from __future__ import annotations

from collections.abc import Callable

from flask.testing import FlaskClient

from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import add_order


def test_row_page_says_how_its_moment_was_read(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    # Pickup Fri 10 July 12:30 BST: Friday closes 21:00 BST.
    key = add_order(screens_site, at("2026-07-10 11:30"), note="words")
    page = signed_in("staff").get(f"/apps/venue/venue/orders/{key}").text
    assert "closing hour on Friday (opening hours) → Fri 21:00" in page


def test_offer_with_no_moment_waits_for_no_time_and_is_listed_so(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    event = screens_site.insert("events")
    ticket = screens_site.insert("tickets", event_id=event, status="offered")
    staff = signed_in("staff")
    row = staff.get(f"/apps/venue/venue/tickets/{ticket}").text
    assert "waits for no time: offer_until is empty" in row
    assert "No timed move waits on this row" not in row
    pending = staff.get("/connections/venue/pending").text
    listed = pending[pending.index("No moment") :]
    assert (
        f"Tickets #{ticket}</a>\n    in Offered waits for no time: offer_until is empty" in listed
    )


def test_a_due_row_moves_within_a_minute_of_its_moment(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    # The site's clock: Fri 10 July 09:00 UTC. Thu 9 July closed 21:00 BST: due, not swept.
    key = add_order(screens_site, at("2026-07-09 11:30"), note="due")
    pending = signed_in("staff").get("/connections/venue/pending").text
    line = pending[pending.index(f'id="pending-orders-{key}"') :]
    line = line[: line.index("</tr>")]
    # The clock keeps time (no stall): the sweep of the next minute moves it.
    assert "due 13 h ago: moves at the next minute" in line
    assert "due now" not in line
