"""The clock's health words on the web: while Redis does not answer, `/status` says so
in those words; a sweep that never ended is shown stopped, with why, and its moves
counted in "Moved in the last hour"."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
import sqlalchemy as sa
from flask.testing import FlaskClient

from core.sweep.records import open_sweep
from tests.integration.api_fixtures import Site
from tests.integration.launching import free_port

pytestmark = pytest.mark.integration


def test_status_says_redis_does_not_answer_while_it_is_away(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nobody listens on this port: a Redis that has gone away.
    monkeypatch.setitem(screens_site.app.config, "REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    page = signed_in("staff").get("/status").get_data(as_text=True)
    assert "Adminium is up" in page and "PostgreSQL 1" in page
    assert "Redis does not answer (ConnectionError): no sweep is enqueued until it does" in page


def test_the_card_says_a_sweep_that_never_ended_stopped_and_counts_its_moves(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    # The site's clock reads 09:00; a sweep started at 08:58:30, moved two rows, and its
    # worker went away (its record is still running).
    started = screens_site.clock.now - timedelta(seconds=90)
    with screens_site.store().engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM adminium.sweeps WHERE connection = 'venue'"))
        open_sweep(conn, "venue", started)
        for key in ("9001", "9002"):
            conn.execute(
                sa.text(
                    "INSERT INTO adminium.audit (at, actor, actor_kind, app, table_name,"
                    " row_key, move_from, move_to) VALUES (:at, 'Timed move', 'clock',"
                    " 'venue', 'orders', :key, 'placed', 'cancelled')"
                ),
                {"at": started, "key": key},
            )
    page = signed_in("manager").get("/connections").text
    card = page[page.index('id="connection-venue"') :]
    assert "stopped: the worker went away," in card
    assert '<dd class="moved-hour">2</dd>' in card
