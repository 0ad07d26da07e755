"""The sweep compares an app with its tables once per change of them, not every minute: the
catalogue's fingerprint rides in the sweep's opening statement every 5 minutes (at once for
an app never compared), and only when it moved is the app compared again and its comparison
kept, for the card, /status and `connection list`. A drifted table still leaves the
connection's sweep `done`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session

from core.sweep.report import SweepOutcome
from services.apps import add_app, save_app
from services.connections import add_connection, get_connection
from services.events import NO_PUBLISHER
from services.storage import connection_engine, engine_for, open_session, upgrade_control_plane
from services.sweeps import sweep
from tests.integration.sweep_fixtures import SHOP

pytestmark = pytest.mark.integration

NOW = datetime(2026, 7, 10, 9, 0, tzinfo=UTC)


@pytest.fixture
def session(make_database: Callable[[], str]) -> Iterator[Session]:
    """A control plane whose connection `shop` holds the shop's tables, made by Adminium."""
    control = make_database()
    upgrade_control_plane(control)
    with open_session(control) as opened:
        add_connection(opened, "shop", make_database(), "Europe/London")
        add_app(opened, "shop", SHOP, create_tables=True)
        yield opened
        connection_engine(get_connection(opened, "shop")).dispose()
    engine_for(control).dispose()


def kept(session: Session) -> tuple[datetime, list[dict[str, Any]]]:
    """When the shop's comparison was kept, and what it found."""
    session.expire_all()
    agreement = get_connection(session, "shop").apps[0].agreement
    assert agreement is not None
    return agreement.checked_at, agreement.disagreements


def test_the_sweep_compares_again_only_once_the_tables_change(session: Session) -> None:
    first = kept(session)
    assert first[1] == []
    read = []
    for minute in (0, 1):
        report = sweep(session, "shop", now=NOW.replace(minute=minute), publisher=NO_PUBLISHER)
        assert report.outcome is SweepOutcome.done
        read.append(set(report.fingerprints))
    assert read == [{"shop"}, set()]  # read every FINGERPRINT_EVERY (5) minutes
    assert kept(session) == first  # the same fingerprint as the add's: not compared again

    with connection_engine(get_connection(session, "shop")).begin() as conn:
        conn.execute(sa.text("ALTER TABLE public.orders ADD COLUMN till text NOT NULL DEFAULT ''"))
        conn.execute(sa.text("ALTER TABLE public.orders ALTER COLUMN till DROP DEFAULT"))
    sweep(session, "shop", now=NOW.replace(minute=2), publisher=NO_PUBLISHER)
    assert kept(session) == first  # not read this minute
    report = sweep(session, "shop", now=NOW.replace(minute=5), publisher=NO_PUBLISHER)
    assert report.outcome is SweepOutcome.done
    again = kept(session)
    assert again[0] == NOW.replace(minute=5)  # kept by that minute's sweep
    assert [d["sentence"].split(";")[0] for d in again[1]] == [
        "orders.till: the manifest does not know this column, the database has it text NOT NULL"
        " with no default, so creates will be refused"
    ]
    sweep(session, "shop", now=NOW.replace(minute=10), publisher=NO_PUBLISHER)
    assert kept(session) == again


def test_an_app_never_compared_is_compared_at_its_first_sweep(
    session: Session, make_database: Callable[[], str]
) -> None:
    add_connection(session, "plain", make_database(), "Europe/London")
    add_app(session, "plain", SHOP, create_tables=True)
    app = get_connection(session, "plain").apps[0]
    session.delete(app.agreement)
    session.commit()
    save_app(session, "plain", SHOP, replace=True)
    sweep(session, "plain", now=NOW, publisher=NO_PUBLISHER)
    session.expire_all()
    found = get_connection(session, "plain").apps[0].agreement
    assert found is not None and found.disagreements == []
    connection_engine(get_connection(session, "plain")).dispose()
