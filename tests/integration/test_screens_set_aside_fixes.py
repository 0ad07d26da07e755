"""Set-aside fixes that work for every rule: refusals in plain words naming the
field, the refused field first and Save confirming, a new moment only through a column a
person may write, the refusal shown once, the header's count, several rows at once."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
import sqlalchemy as sa
from flask.testing import FlaskClient

from services import sweeps
from services.events import NO_PUBLISHER
from services.models import db
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import NEEDS_NOTE, add_order, csrf_of

ASIDE = "/connections/venue/set-aside"
NEEDS_SALE = (
    "ALTER TABLE public.tickets ADD CONSTRAINT valid_needs_sale "
    "CHECK (status <> 'valid' OR sale_from IS NOT NULL) NOT VALID"
)
"""A rule without words of its own: a ticket back to valid needs its sale time."""


def sweep(site: Site, when: str) -> None:
    """Run the minute sweep of the venue at an instant written in UTC."""
    with site.app.app_context():
        sweeps.sweep(db.session, "venue", now=at(when), publisher=NO_PUBLISHER)


@pytest.fixture
def rules(screens_site: Site) -> Iterator[None]:
    """The venue's two rules in place; afterwards gone, with every order, ticket and record."""
    with screens_site.store().engine.begin() as conn:
        conn.execute(sa.text(NEEDS_NOTE))
        conn.execute(sa.text(NEEDS_SALE))
    yield
    with screens_site.store().engine.begin() as conn:
        conn.execute(sa.text("ALTER TABLE public.orders DROP CONSTRAINT cancelled_needs_note"))
        conn.execute(sa.text("ALTER TABLE public.tickets DROP CONSTRAINT valid_needs_sale"))
        for table in ("orders", "tickets", "events"):
            conn.execute(sa.text(f"DELETE FROM public.{table}"))
        conn.execute(sa.text("DELETE FROM adminium.set_aside"))


def set_aside_orders(site: Site, count: int) -> list[int]:
    """Orders without a note for Wednesday 8 July 12:30 BST: due at closing, 21:00 BST =
    20:00 UTC; the 20:01 UTC sweep is refused (no note) and sets each aside."""
    keys = [add_order(site, at("2026-07-08 11:30")) for _ in range(count)]
    sweep(site, "2026-07-08 20:01")
    return keys


def item_of(html: str, table: str, key: int) -> str:
    found = re.search(rf'<li class="aside" id="aside-{table}-{key}".*?\n</li>', html, re.S)
    assert found is not None, f"no item for {table} #{key}"
    return found.group(0)


def post(client: FlaskClient, path: str, data: dict[str, object], status: int = 200) -> str:
    """Post a form as htmx does; the answer's HTML (a refusal answers with its own status)."""
    token = csrf_of(client.get(ASIDE).text)
    answer = client.post(path, data=data, headers={"X-CSRFToken": token, "HX-Request": "true"})
    assert answer.status_code == status, answer.text
    return answer.text


def test_refusal_names_the_field_in_plain_words_and_offers_it_first(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], rules: None
) -> None:
    [key] = set_aside_orders(screens_site, 1)
    item = item_of(signed_in("staff").get(ASIDE).text, "orders", key)
    sentence = (
        "the database refused the value: orders.note must be filled when cancelled"
        " (check cancelled_needs_note)"
    )
    assert sentence in item
    assert "violates" not in item  # never the driver's raw text
    # The refused field first, marked, with the row's current value (none), and selected.
    assert re.search(r'<dt class="named">Note <span class="badge refused-field">', item)
    assert re.search(r'id="aside-orders-\d+-field" class="field-pick"><option value="note"', item)
    # The moment's own column (pickup_at) is re-dated in its own form, as a date and time.
    assert 'type="datetime-local" name="value"' in item
    assert 'value="2026-07-08T12:30"' in item  # 11:30 UTC on the venue's clock (BST)


def test_save_confirms_and_the_refusal_is_shown_once(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], rules: None
) -> None:
    [key] = set_aside_orders(screens_site, 1)
    client = signed_in("staff")
    path = f"{ASIDE}/venue/orders/{key}"
    saved = post(client, f"{path}/edit", {"column": "note", "value": "left at the door"})
    assert f"Saved: Orders #{key}: Note is now left at the door." in saved
    assert screens_site.row("orders", key)["note"] == "left at the door"
    # A field the database refuses again, then "Try again now" refused again: each answer
    # shows the refusal once, not once from the record and again from the fix.
    with screens_site.store().engine.begin() as conn:
        conn.execute(sa.text("UPDATE public.orders SET note = NULL WHERE id = :k"), {"k": key})
    again = post(client, f"{path}/retry", {}, status=422)
    assert again.count("must be filled when cancelled") == 1
    assert screens_site.row("orders", key)["status"] == "placed"


def test_a_moment_from_a_stamp_offers_no_new_moment(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], rules: None
) -> None:
    # An offer that ran out Thu 9 July 10:00 UTC; back to valid is refused (no sale time).
    event = screens_site.insert("events", doors_at=at("2026-07-20 18:00"))
    ticket = screens_site.insert(
        "tickets",
        event_id=event,
        status="offered",
        offer_until=at("2026-07-09 10:00"),
        pending_email="a@b.test",
    )
    sweep(screens_site, "2026-07-09 10:01")
    item = item_of(signed_in("staff").get(ASIDE).text, "tickets", ticket)
    assert "the database refused the value: tickets.sale_from breaks a rule of the table" in item
    assert "(check valid_needs_sale)" in item
    # offer_until is Adminium's stamp: no Re-date button that would always be refused.
    assert "Re-date" not in item
    assert "offer_until is written by Adminium (a stamp): no new moment can be given here" in item
    assert 'name="column" value="offer_until"' not in item
    assert '<option value="offer_until"' not in item


def test_header_badge_counts_rows_set_aside(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], rules: None
) -> None:
    keys = set_aside_orders(screens_site, 2)
    client = signed_in("staff")
    assert re.search(
        r'id="aside-count-venue".*?<span class="badge count-aside">2</span>',
        client.get(ASIDE).text,
        re.S,
    )
    post(client, f"{ASIDE}/venue/orders/{keys[0]}/move", {"to": "confirmed", "seen": "placed"})
    badge = client.get(f"{ASIDE}/count").text
    assert '<span class="badge count-aside">1</span>' in badge


def test_several_rows_at_once_answer_what_moved_and_what_was_refused(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], rules: None
) -> None:
    fixed, refused, moved = set_aside_orders(screens_site, 3)
    with screens_site.store().engine.begin() as conn:
        conn.execute(sa.text("UPDATE public.orders SET note = 'ok' WHERE id = :k"), {"k": fixed})
    client = signed_in("staff")
    rows = [f"venue/orders/{fixed}", f"venue/orders/{refused}"]
    answer = post(client, f"{ASIDE}/bulk", {"action": "retry", "rows": rows})
    assert "Tried again: 1 of 2 moved, 1 not." in answer
    assert f"Orders #{fixed} (moved by its timed move)" in answer
    assert (
        f"Orders #{refused}: Needs a note before it can be cancelled. Fill in Note, then try"
        ' again. <code class="code">VALUE_REFUSED</code>' in answer
    )
    # The moved row's item goes; the refused one is drawn again in place.
    assert f'<li id="aside-orders-{fixed}" hx-swap-oob="delete">' in answer
    assert f'<li class="aside" id="aside-orders-{refused}" hx-swap-oob="true">' in answer
    assert screens_site.row("orders", fixed)["status"] == "cancelled"

    rows = [f"venue/orders/{refused}", f"venue/orders/{moved}", f"venue/orders/{fixed}"]
    answer = post(client, f"{ASIDE}/bulk", {"action": "move", "to": "confirmed", "rows": rows})
    assert "Moved to Confirmed: 2 of 3 moved, 1 not." in answer
    assert f"Orders #{fixed}: no longer set aside" in answer
    statuses = [screens_site.row("orders", k)["status"] for k in (refused, moved)]
    assert statuses == ["confirmed", "confirmed"]
    # The last rows fixed: the list is empty, its empty state there to show.
    page = client.get(ASIDE).text
    assert 'class="aside"' not in page and "No row is set aside." in page
