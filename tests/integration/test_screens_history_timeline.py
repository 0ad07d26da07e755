"""The history marks undos and a refused undo of a row that moved says what it is
now; the pending list says how each moment was read, with seconds where it has them, under
a server-drawn timeline of the next 24 hours' timed moves per hour, by rule."""

from __future__ import annotations

import re
from collections.abc import Callable

from flask.testing import FlaskClient

from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import add_order, csrf_of

ROW = "/apps/venue/venue/orders/{key}"


def move(client: FlaskClient, key: int, to: str, seen: str, status: int = 200) -> str:
    """Move a row from its page as htmx does; the row's partial (a refusal answers with its
    own status)."""
    path = ROW.format(key=key)
    token = csrf_of(client.get(path).text)
    answer = client.post(
        f"{path}/move",
        data={"to": to, "seen": seen},
        headers={"X-CSRFToken": token, "HX-Request": "true"},
    )
    assert answer.status_code == status
    return answer.text


def test_history_marks_an_undo(screens_site: Site, signed_in: Callable[[str], FlaskClient]) -> None:
    key = add_order(screens_site, at("2026-07-11 11:30"), status="confirmed")
    detail = move(signed_in("staff"), key, "placed", seen="confirmed")
    history = detail[detail.index('class="history"') :]
    assert re.search(
        r"moved Confirmed → Placed <span class=\"badge undo-mark\">undo</span>", history
    )
    # The history's times read to the minute, as every time on the screens (issue 35), their
    # seconds kept in the title: the site's clock reads 09:00:00 UTC = 10:00:00 BST.
    assert 'title="Fri 10 Jul 2026 10:00:00">Fri 10 Jul 2026 10:00</time>' in history


def test_refused_undo_of_a_row_that_moved_says_what_it_is_now(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    # The person saw it confirmed; meanwhile it went on to ready.
    key = add_order(screens_site, at("2026-07-11 11:30"), status="ready")
    detail = move(signed_in("staff"), key, "placed", seen="confirmed", status=409)
    assert "Not done: the row moved since you saw it Confirmed; it is Ready now." in detail
    assert screens_site.row("orders", key)["status"] == "ready"


def test_pending_says_how_each_moment_was_read_under_the_timeline(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    # The site's clock: Fri 10 July 09:00 UTC = 10:00 BST, so the timeline's 24 hours run
    # from 10:00 BST. Two Friday pickups close at 21:00 BST (hour 11 of the chart); an offer
    # that runs out at 12:33:30 UTC = 13:33:30 BST (hour 3); a Saturday pickup closes Sat
    # 21:00 BST, past the 24 hours (listed, not charted).
    first = add_order(screens_site, at("2026-07-10 11:30"), note="one")
    add_order(screens_site, at("2026-07-10 12:00"), note="two")
    add_order(screens_site, at("2026-07-11 11:30"), note="saturday")
    event = screens_site.insert("events")
    ticket = screens_site.insert(
        "tickets", event_id=event, status="offered", offer_until=at("2026-07-10 12:33:30")
    )
    page = signed_in("staff").get("/connections/venue/pending").text
    line = page[page.index(f'id="pending-orders-{first}"') :]
    line = line[: line.index("</tr>")]
    assert "closing hour on Friday (opening hours) → Fri 21:00" in line
    offer = page[page.index(f'id="pending-tickets-{ticket}"') :]
    offer = offer[: offer.index("</tr>")]
    # To the minute as every time on the screens (issue 35); its seconds in the title.
    assert 'title="Fri 10 Jul 2026 13:33:30">Fri 10 Jul 2026 13:33</time>' in offer
    assert "offer_until → Fri 13:33" in offer

    svg = page[page.index('<svg class="timeline"') : page.index("</svg>")]
    assert "3 timed moves in the next 24 hours, at most 2 in an hour" in svg
    rule = "venue · Orders rule 1: Placed → Cancelled"  # by their titles (issue 35)
    assert f"<title>21:00: 2 × {rule}</title>" in svg
    assert "<title>13:00: 1 × venue · Tickets rule 1: Offered → Valid</title>" in svg
    assert "style=" not in svg  # the CSP refuses inline styles: classes colour the bars
    assert len(re.findall(r'<rect class="bar rule-\d"', svg)) == 2
