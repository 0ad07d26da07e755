"""What the operator sees of what a timed move sets off, on a
real control plane and venue database, through `adminium` as an operator runs it.

The kitchen (tests/integration/effect_fixtures): a cancelled order voids its lines and
frees its desk, and a desk goes free only while the setting `desks_free` holds. Orders
are due at 11:00 UTC on Friday 10 July 2026 (12:00 in London); the sweep runs at 12:00 UTC.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from services.models import db
from services.users import add_user
from tests.integration.effect_fixtures import KITCHEN
from tests.integration.hold_fixtures import AppConsole, app_on_connection
from tests.integration.outbox_fixtures import smtp_server
from tests.integration.screens_fixtures import PASSWORD, sign_in
from web import create_app
from web.live import stop_hub

NOW = "2026-07-10T12:00:00+00:00"
DUE = "2026-07-10T11:00:00+00:00"
FUTURE = "2027-01-05T01:00:00+00:00"
"""A --now after the real clock (this suite runs in 2026)."""

pytestmark = pytest.mark.integration


def mail_kitchen() -> dict[str, Any]:
    """The kitchen whose orders are emailed when cancelled and reminded 24 h before due."""
    manifest = copy.deepcopy(KITCHEN)
    tables = manifest["tables"]
    tables["orders"]["columns"].append({"ref": "email", "type": "text", "nullable": True})
    tables["settings"]["columns"].append(
        {"ref": "reminder_hours", "type": "integer", "default": 24}
    )
    manifest["outbox"]["producers"] = [
        {
            "kind": "message",
            "table": "orders",
            "on": {"column": "status", "values": ["cancelled"]},
            "to": "email",
            "subject": "Order {{ row.id }} cancelled",
            "body": "Cancelled.",
        },
        {
            "kind": "reminder",
            "before": {
                "table": "orders",
                "at": "due_at",
                "lead": {"table": "settings", "column": "reminder_hours"},
            },
            "subject": "Order {{ row.id }} is due soon",
        },
    ]
    return manifest


class Console(AppConsole):
    def sql(self, statement: str, **params: Any) -> Any:
        with self.store.engine.begin() as conn:
            return conn.execute(sa.text(statement), params)

    def insert(self, table: str, **values: Any) -> int:
        t = self.store.table(table)
        with self.store.engine.begin() as conn:
            return int(conn.execute(sa.insert(t).values(values).returning(t.c.id)).scalar_one())

    def order(self, due: str, lines: int = 0, **values: Any) -> int:
        key = self.insert("orders", status="placed", due_at=due, total=0, lines=0, **values)
        for _ in range(lines):
            self.insert("order_lines", order_id=key, amount=5, status="open")
        return key


@pytest.fixture
def console(make_database: Callable[[], str]) -> Iterator[Console]:
    """A control plane with a London connection holding the mail kitchen (settings made)."""
    control, name, store = app_on_connection(make_database, mail_kitchen())
    found = Console(control, name, store)
    found.insert("settings")
    yield found
    store.engine.dispose()


def test_a_refusal_by_a_linked_row_names_it_everywhere_the_operator_looks(
    console: Console, caplog: pytest.LogCaptureFixture
) -> None:
    desk = console.insert("desks", status="taken")
    order = console.order(DUE, desk_id=desk)
    console.sql("UPDATE kitchen.settings SET desks_free = false")
    with caplog.at_level(logging.WARNING, logger="core.store.set_aside"):
        swept = console.run("sweep", console.name, "--now", NOW)
    assert swept.exit_code == 0, swept.output
    [line] = [x for x in swept.output.splitlines() if x.startswith("set aside ")]
    assert line.startswith(f"set aside kitchen.orders {order} rule 1 at 2026-07-10T12:00:00+01:00:")
    assert f": STATE_MOVE_REFUSED: refused by desks {desk}: " in line
    [warning] = [r.getMessage() for r in caplog.records if r.name == "core.store.set_aside"]
    assert warning.startswith("timed move refused; left alone for an hour: connection=")
    assert warning.endswith(f"code=STATE_MOVE_REFUSED refused by desks {desk}")
    [record] = console.sql("SELECT details FROM adminium.set_aside").all()
    assert record.details["effect"] == {"table": "desks", "key": desk}
    listed = console.run("set-aside", "list", console.name)
    assert f"kitchen.orders {order} rule 1" in listed.output
    assert f": STATE_MOVE_REFUSED: refused by desks {desk}: " in listed.output
    # The set-aside screen, as an admin signed in on this control plane sees it.
    app = create_app({"DATABASE_URL": console.control, "REDIS_URL": "", "TESTING": True})
    try:
        with app.app_context():
            add_user(db.session, "admin@kitchen.test", "admin", None, password=PASSWORD)
        client = app.test_client()
        sign_in(client, "admin@kitchen.test")
        page = client.get(f"/connections/{console.name}/set-aside")
        assert page.status_code == 200
        # In staff words: the linked row that refused, by its table's title, first.
        assert f"Desks #{desk}: " in page.text
    finally:
        stop_hub(app)
        with app.app_context():
            db.engine.dispose()


def test_a_linked_row_held_elsewhere_is_named_in_the_printout_and_the_log(
    console: Console, caplog: pytest.LogCaptureFixture
) -> None:
    desk = console.insert("desks", status="taken")
    order = console.order(DUE, desk_id=desk)
    with console.store.engine.connect() as other:
        other.execute(sa.text("SELECT 1 FROM kitchen.desks WHERE id = :k FOR UPDATE"), {"k": desk})
        with caplog.at_level(logging.INFO, logger="core.sweep.sweep"):
            swept = console.run("-v", "sweep", console.name, "--now", NOW)
        other.rollback()
    assert swept.exit_code == 0, swept.output
    assert (
        f"next minute (held elsewhere) kitchen.orders {order} rule 1 at"
        f" 2026-07-10T12:00:00+01:00: desks {desk} held by another writer"
    ) in swept.output.splitlines()
    logged = [r.getMessage() for r in caplog.records if r.name == "core.sweep.sweep"]
    assert (
        f"timed move of kitchen.orders key={order} rule=1 tried next minute:"
        f" WRITE_CONFLICT, desks {desk} held by another writer"
    ) in logged


def test_the_summary_counts_linked_rows_and_reminders_and_a_future_now_says_when_mail_goes(
    console: Console,
) -> None:
    help_text = console.run("sweep", "--help").output
    assert "A --now in the future commits the moves at that instant" in " ".join(help_text.split())
    # Two orders due with two lines each; one due in 20 h, reminded now (24 h lead).
    for _ in range(2):
        console.order(DUE, lines=2, email="guest@example.com")
    console.order("2027-01-05T21:00:00+00:00", email="soon@example.com")
    swept = console.run("sweep", console.name, "--now", FUTURE)
    assert swept.exit_code == 0, swept.output
    lines = swept.output.splitlines()
    summary = next(x for x in lines if x.startswith(f"sweep of {console.name}: "))
    assert ": done, moved 2, set aside 0, " in summary
    assert ", still due 0, linked rows moved 4, reminders queued 1, " in summary
    # Two cancel messages and one reminder, queued at --now: they go only then.
    assert lines[-1] == "3 emails queued for 2027-01-05 01:00 UTC, sent when that time comes"
    assert (
        console.sql("SELECT count(*) FROM adminium.outbox WHERE send_at = :t", t=FUTURE).scalar()
        == 3
    )


def test_outbox_list_and_send_show_each_email_and_its_answer(console: Console) -> None:
    cancelled = console.order(DUE, email="gone@example.com")
    later = console.order("2026-07-11T10:00:00+00:00", email="later@example.com")
    swept = console.run("sweep", console.name, "--now", NOW)
    assert "reminders queued 1," in swept.output
    console.sql("UPDATE kitchen.orders SET status = 'done' WHERE id = :k", k=later)
    with smtp_server() as (url, inbox):
        sent = console.run("outbox", "send", console.name, "kitchen", SMTP_URL=url)
    assert sent.exit_code == 0, sent.output
    assert [str(m["To"]) for m in inbox.received] == ["gone@example.com"]
    out = sent.output.splitlines()
    [message] = [x for x in out if f"kitchen.orders {cancelled} message 1" in x]
    assert message.endswith(": 250 Message accepted for delivery")
    assert "to gone@example.com: 'Order" in message and "; sent 2026-" in message
    [reminder] = [x for x in out if f"kitchen.orders {later} reminder 2" in x]
    assert reminder.endswith(
        f"; dropped: orders {later} is done, a final state (no move out of it)"
    )
    assert out[-1].endswith(": sent 1, to try again 0, failed 0, dropped 1")
    listed = console.run("outbox", "list", console.name)
    assert listed.exit_code == 0, listed.output
    assert [x.split(" ")[1] for x in listed.output.splitlines()] == sorted(
        (x.split(" ")[1] for x in out[:-1]), key=int, reverse=True
    )
    assert any(
        x.endswith(": 250 Message accepted for delivery") for x in listed.output.splitlines()
    )
    assert any("; dropped: orders" in x for x in listed.output.splitlines())
    missing = console.run("outbox", "list", console.name, "nosuch")
    assert missing.exit_code != 0 and "no app 'nosuch'" in missing.output


def test_a_parent_whose_total_is_held_elsewhere_is_named_too(
    make_database: Callable[[], str],
) -> None:
    # Each desk counts its placed orders: a cancel changes the count of a desk that is
    # free (no effect moves it), so the desk is locked for its total alone.
    manifest = mail_kitchen()
    manifest["tables"]["desks"]["columns"].append(
        {
            "ref": "placed",
            "type": "integer",
            "rules": {
                "total": {
                    "table": "orders",
                    "via": "desk_id",
                    "count": True,
                    "where": {"column": "status", "values": ["placed"]},
                }
            },
        }
    )
    control, name, store = app_on_connection(make_database, manifest)
    console = Console(control, name, store)
    console.insert("settings")
    desk = console.insert("desks", status="free", placed=1)
    order = console.order(DUE, desk_id=desk)
    with store.engine.connect() as other:
        other.execute(sa.text("SELECT 1 FROM kitchen.desks WHERE id = :k FOR UPDATE"), {"k": desk})
        swept = console.run("sweep", name, "--now", NOW)
        other.rollback()
    assert (
        f"next minute (held elsewhere) kitchen.orders {order} rule 1 at"
        f" 2026-07-10T12:00:00+01:00: desks {desk} held by another writer"
    ) in swept.output.splitlines()
    store.engine.dispose()
