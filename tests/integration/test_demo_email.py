"""The demo's email, end to end on a real `adminium run`: an order made through the REST API,
cancelled by the clock, its email delivered to the embedded SMTP server and shown on the
Outbox screen (the harness: tests/integration/launching.py)."""

from __future__ import annotations

import json
import signal
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email import message_from_bytes
from email.message import Message
from typing import Any

import pytest
from rq import Queue

from adminium.demo import DEMO_EMAIL, DEMO_PASSWORD
from services.storage import open_session
from services.users import renew_token
from tests.integration.launching import Launch, wait_for

pytestmark = pytest.mark.integration


def api(running: Launch, token: str, path: str, body: dict[str, Any] | None = None) -> Any:
    """One call of the run's REST API as the demo account; the JSON answer."""
    request = urllib.request.Request(
        running.url(f"/api/apps/demo/takeaway/tables/orders/rows{path}"),
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST" if body is not None else "GET",
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.loads(reply.read())


def delivered(running: Launch, subject: str) -> list[Message]:
    """The emails the embedded SMTP server kept in the instance's maildir with `subject`."""
    found = [
        message_from_bytes(p.read_bytes()) for p in (running.folder / "mail" / "new").glob("*")
    ]
    return [m for m in found if m["Subject"] == subject]


def test_a_real_order_cancelled_by_the_clock_emails_the_customer(
    launch: Callable[[], Launch],
) -> None:
    running = launch()
    running.wait_until_up()
    with open_session(running.database_url()) as session:
        token = renew_token(session, DEMO_EMAIL)
    # Picked up yesterday: its moment, yesterday's closing (23:00 London every day in the
    # demo's opening hours), has passed whatever the time now, so it is due at once.
    pickup = datetime.now(UTC) - timedelta(days=1)
    made = api(
        running,
        token,
        "",
        {
            "values": {
                "customer_id": 1,
                "email": "dana@example.com",
                "pickup_at": pickup.isoformat(),
                "items": "1 x soup",
            }
        },
    )
    key = made["key"]
    assert made["row"]["status"] == "placed"
    # The clock's sweep of the demo, enqueued by hand as the tick would (the minute's tick
    # may have been claimed already, so a hand tick could do nothing until the next).
    client = running.redis()
    Queue("adminium", connection=client).enqueue("jobs.sweep.run_sweep", "demo")
    client.close()
    wait_for(
        "the clock to cancel the order",
        lambda: api(running, token, f"/{key}")["row"]["status"] == "cancelled",
        20,
    )
    assert api(running, token, f"/{key}")["row"]["cancel_code"] == "closed"
    subject = f"Your order {key} was cancelled"
    wait_for(
        "the email to reach the embedded SMTP server", lambda: bool(delivered(running, subject))
    )
    [mail] = delivered(running, subject)
    assert mail["To"] == "dana@example.com"
    text = mail.get_payload(decode=True)
    assert isinstance(text, bytes) and b"because we closed before it could be made" in text
    # Shown on the Outbox screen, sent, with the Message-ID the server received.
    opener = running.sign_in(DEMO_EMAIL, DEMO_PASSWORD)
    with opener.open(running.url("/connections/demo/apps/takeaway/outbox"), timeout=10) as reply:
        page = reply.read().decode()
    assert subject in page and "dana@example.com" in page
    row = page[page.index(subject) :].split("</tr>")[0]
    assert 'class="badge sent"' in row, row
    # The kitchen's webhook heard the same move and posted it to the product's own receiver
    # on the loopback: `adminium run` allows that network for the demo (and nothing else did:
    # the run's environment lacks ADMINIUM_WEBHOOKS_ALLOW_PRIVATE).
    event = f"takeaway · orders #{key}</a>"

    def kitchen_row() -> str:
        with opener.open(running.url("/connections/demo/deliveries"), timeout=10) as reply:
            page = reply.read().decode()
        return page[page.index(event) :].split("</tr>")[0] if event in page else ""

    wait_for("the kitchen's delivery to be sent", lambda: 'class="badge sent"' in kitchen_row())
    assert "204" in kitchen_row()
    assert running.stop(signal.SIGINT, group=True) in (0, 130)
    wait_for("every process of the run to stop", lambda: not running.leftovers())
