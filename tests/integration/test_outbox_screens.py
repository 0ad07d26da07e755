"""The Outbox screen: emails newest first with their row, producer, address, subject, times
and fate; one readable; Send again on a failed one; the row page's emails and waiting
reminders; the live socket's outbox screen hears its app's outbox events only."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from flask.testing import FlaskClient

from core.basics.actors import Actor
from core.writes.pipeline import change_row
from core.writes.request import WriteRequest
from services.models import App, db
from tests.integration.api_fixtures import Site
from tests.integration.outbox_fixtures import outbox_rows
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import add_order, csrf_of
from web.live.screen import Screen

CANCELLED = {
    "kind": "message",
    "table": "orders",
    "on": {"column": "status", "values": ["cancelled"]},
    "to": "note",
    "subject": "Order {{ row.id }} cancelled",
    "body": "Hello,\nyour order {{ row.id }} was cancelled.",
}
REMIND = {
    "kind": "reminder",
    "to": "note",
    "before": {
        "table": "orders",
        "at": "pickup_at",
        "lead": {"table": "settings", "column": "offer_hours"},
    },
    "subject": "Soon",
}
OUTBOX = "/connections/venue/apps/venue/outbox"


@pytest.fixture(scope="module")
def mail_site(screens_site: Site) -> Site:
    """The screens' venue whose orders queue a message when cancelled (to the note column,
    an address the tests write) and a reminder `offer_hours` before pickup."""
    with screens_site.app.app_context():
        app = db.session.execute(db.select(App).filter_by(name="venue")).scalar_one()
        app.manifest = {
            **app.manifest,
            "outbox": {"settings": {"table": "settings"}, "producers": [CANCELLED, REMIND]},
        }
        db.session.commit()
    return screens_site


def cancelled_order(site: Site, address: str) -> tuple[int, int]:
    key = add_order(site, at("2026-07-10 11:30"), note=address)
    change_row(
        site.store(),
        WriteRequest(
            "orders",
            Actor.person("m@venue.test"),
            at("2026-07-10 09:00"),
            key=key,
            move_to="cancelled",
        ),
    )
    return key, int(outbox_rows(site.store().engine)[-1]["id"])


def test_the_outbox_lists_emails_newest_first_with_their_fate(
    mail_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    first, first_mail = cancelled_order(mail_site, "a@example.com")
    _, second_mail = cancelled_order(mail_site, "b@example.com")
    with mail_site.store().engine.begin() as conn:
        conn.execute(
            sa.text(
                "UPDATE adminium.outbox SET status = 'failed', attempts = 6,"
                " answer = '550 No such user' WHERE id = :id"
            ),
            {"id": first_mail},
        )
    page = signed_in("staff").get(OUTBOX)
    assert page.status_code == 200
    text = page.text
    assert text.index(f'id="email-{second_mail}"') < text.index(f'id="email-{first_mail}"')
    assert f"Order {first} cancelled" in text and "b@example.com" in text
    assert "550 No such user" in text and "Send again" in text
    assert f"/apps/venue/venue/orders/{first}" in text  # the row, linked


def test_an_email_reads_as_its_reader_gets_it(
    mail_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    key, mail = cancelled_order(mail_site, "c@example.com")
    page = signed_in("staff").get(f"{OUTBOX}/{mail}")
    assert page.status_code == 200
    assert "c@example.com" in page.text and f"Order {key} cancelled" in page.text
    assert f"your order {key} was cancelled." in page.text
    assert f"&lt;outbox-{mail}.venue.venue@" in page.text  # its Message-ID


def test_send_again_queues_a_failed_email(
    mail_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    _, mail = cancelled_order(mail_site, "d@example.com")
    with mail_site.store().engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE adminium.outbox SET status = 'failed' WHERE id = :id"), {"id": mail}
        )
    client = signed_in("staff")
    token = csrf_of(client.get(OUTBOX).text)
    answer = client.post(
        f"{OUTBOX}/{mail}/send-again", headers={"X-CSRFToken": token, "HX-Request": "true"}
    )
    assert answer.status_code == 200
    [row] = [r for r in outbox_rows(mail_site.store().engine) if r["id"] == mail]
    assert (row["status"], row["attempts"]) == ("queued", 0)


def test_the_outbox_needs_a_role_in_the_app(
    signed_in: Callable[[str], FlaskClient], mail_site: Site
) -> None:
    assert signed_in("clerk").get(OUTBOX).status_code == 403


def test_the_row_page_lists_its_emails_and_the_reminder_it_waits_for(
    mail_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    key, _ = cancelled_order(mail_site, "e@example.com")
    page = signed_in("staff").get(f"/apps/venue/venue/orders/{key}")
    assert f"Order {key} cancelled" in page.text and "e@example.com" in page.text
    # A pickup far ahead (the site's clock reads July 2026) waits for its reminder, sent
    # offer_hours (a setting, no `at`) of elapsed time before the pickup.
    hours = int(mail_site.row("settings", 1)["offer_hours"])
    pickup = at("2026-09-01 11:30")
    ahead = add_order(mail_site, pickup, note="f@example.com")
    page = signed_in("staff").get(f"/apps/venue/venue/orders/{ahead}")
    assert "Reminder 2 goes" in page.text
    assert f'datetime="{(pickup - timedelta(hours=hours)).isoformat()}"' in page.text


def test_an_outbox_screen_hears_its_apps_outbox_events_only() -> None:
    outbox = Screen("outbox", "http://x/", "venue", "venue")
    board = Screen("board", "http://x/", "venue", "venue", "orders")
    event: dict[str, Any] = {"connection": "venue", "outbox": "venue"}
    assert outbox.shows(event) and not board.shows(event)
    assert not outbox.shows({"connection": "venue", "outbox": "other"})
    assert not outbox.shows({"connection": "venue", "app": "venue", "table": "orders", "key": 1})


def test_a_dropped_reminder_shows_why_it_was_not_sent(
    mail_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    key, mail = cancelled_order(mail_site, "e@example.com")
    reason = f"orders {key} is cancelled, a final state (no move out of it)"
    with mail_site.store().engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE adminium.outbox SET status = 'dropped', answer = :why WHERE id = :id"),
            {"id": mail, "why": reason},
        )
    text = signed_in("staff").get(OUTBOX).text
    row = text[text.index(f'id="email-{mail}"') :]
    row = row[: row.index("</tr>")]
    assert 'class="badge dropped">dropped</span>, not sent:' in row and reason in row
    assert "Send again" not in row


def fail(site: Site, mail: int, answer: str = "550 No such user") -> None:
    """An email whose last try has failed (its five retries spent)."""
    with site.store().engine.begin() as conn:
        conn.execute(
            sa.text(
                "UPDATE adminium.outbox SET status = 'failed', attempts = 6, answer = :answer"
                " WHERE id = :id"
            ),
            {"id": mail, "answer": answer},
        )


def email_row(text: str, mail: int) -> str:
    row = text[text.index(f'id="email-{mail}"') :]
    return row[: row.index("</tr>")]


def test_a_manager_drops_a_failed_email_and_it_is_never_sent(
    mail_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    _, mail = cancelled_order(mail_site, "g@example.com")
    fail(mail_site, mail)
    drop = f"{OUTBOX}/{mail}/drop"
    staff = signed_in("staff")
    staff_page = staff.get(OUTBOX).text
    assert "Send again" in email_row(staff_page, mail) and drop not in email_row(staff_page, mail)
    # Staff may send it again, not drop it.
    staff_headers = {"X-CSRFToken": csrf_of(staff_page), "HX-Request": "true"}
    refused = staff.post(drop, headers=staff_headers)
    assert refused.status_code == 403
    assert "manager or admin role" in refused.text
    manager = signed_in("manager")
    page = manager.get(OUTBOX).text
    assert drop in email_row(page, mail)
    # One a drain holds this moment is left to its try: 409, look again.
    with mail_site.store().engine.connect() as held:
        held.execute(
            sa.text("SELECT 1 FROM adminium.outbox WHERE id = :id FOR UPDATE"), {"id": mail}
        )
        busy = manager.post(drop, headers={"X-CSRFToken": csrf_of(page), "HX-Request": "true"})
        held.rollback()
    assert busy.status_code == 409
    answer = manager.post(drop, headers={"X-CSRFToken": csrf_of(page), "HX-Request": "true"})
    assert answer.status_code == 200, answer.text
    [row] = [r for r in outbox_rows(mail_site.store().engine) if r["id"] == mail]
    assert (row["status"], row["dropped_by"], row["answer"]) == (
        "dropped",
        "manager@venue.test",
        "550 No such user",
    )
    shown = email_row(answer.text, mail)
    assert 'class="badge dropped">dropped</span> by manager@venue.test' in shown
    assert "550 No such user" in shown
    assert "Send again" not in shown and drop not in shown
    # Dropped is for good: Send again finds no failed email, and no drain claims it.
    again = staff.post(f"{OUTBOX}/{mail}/send-again", headers=staff_headers)
    assert again.status_code == 200
    [row] = [r for r in outbox_rows(mail_site.store().engine) if r["id"] == mail]
    assert row["status"] == "dropped"
    # A second Drop changes nothing; an email of no such id is not found.
    headers = {"X-CSRFToken": csrf_of(page), "HX-Request": "true"}
    assert manager.post(drop, headers=headers).status_code == 200
    assert manager.post(f"{OUTBOX}/999999/drop", headers=headers).status_code == 404


def test_an_address_refused_on_the_way_in_shows_why_with_drop(
    mail_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    _, mail = cancelled_order(mail_site, "poison@example.com\r\nBcc: x@evil.example")
    row = email_row(signed_in("manager").get(OUTBOX).text, mail)
    assert (
        'class="badge failed">failed</span>: <span class="refusal">the address holds a line break'
        in row
    )
    assert f"{OUTBOX}/{mail}/drop" in row
    # The email itself still reads as it would have gone (its headers as kept, escaped).
    page = signed_in("staff").get(f"{OUTBOX}/{mail}")
    assert page.status_code == 200 and "Bcc: x@evil.example" in page.text
