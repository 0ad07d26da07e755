"""What a sweep reads of the control plane (`services.apps.swept_apps`): the pause and the
stores of the apps with minute work, each manifest parsed once per process and read again
only when its app is saved or its connection's URL or zone changes (real PostgreSQL)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import event

from core.manifest.model import load_app
from services import apps
from services.apps import SweptApps, save_app, swept_apps
from services.connections import add_connection, get_connection
from services.errors import NotFound
from services.recent import LeastRecent
from services.storage import ENGINES, engine_for, open_session, upgrade_control_plane
from tests.integration.sweep_fixtures import SHOP

# Two apps with a timed move each (their own schemas), and one with no minute work at all.
BAR: dict[str, Any] = {**SHOP, "name": "bar", "schema": "bar"}
NOTES: dict[str, Any] = {
    "name": "notes",
    "schema": "notes",
    "tables": {"notes": {"key": "id", "columns": [{"ref": "id", "type": "serial"}]}},
}


@pytest.fixture
def control(make_database: Callable[[], str]) -> Iterator[str]:
    url = make_database()
    upgrade_control_plane(url)
    yield url
    engine_for(url).dispose()


@pytest.fixture
def venue(control: str, make_database: Callable[[], str]) -> str:
    """A connection with the shop, the bar and the notes apps; its name."""
    name = f"c-{uuid.uuid4().hex[:10]}"
    with open_session(control) as session:
        add_connection(session, name, make_database(), "Europe/London")
        for manifest in (SHOP, BAR, NOTES):
            save_app(session, name, manifest)
    return name


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the manifests `swept_apps` parses, in order."""
    names: list[str] = []

    def counting(data: Any) -> Any:
        names.append(str(data["name"]))
        return load_app(data)

    monkeypatch.setattr(apps, "load_app", counting)
    return names


def read(control: str, name: str) -> SweptApps:
    with open_session(control) as session:
        return swept_apps(session, name)


def test_the_apps_with_minute_work_are_read_once_and_then_kept(
    control: str, venue: str, parsed: list[str]
) -> None:
    first = read(control, venue)
    assert first.paused is False
    assert [s.app.name for s in first.stores] == ["shop", "bar"]  # notes has no minute work
    assert sorted(parsed) == ["bar", "notes", "shop"]
    again = read(control, venue)
    assert len(parsed) == 3  # nothing parsed again
    assert [id(s) for s in again.stores] == [id(s) for s in first.stores]


def test_an_app_saved_since_is_read_again_and_only_it(
    control: str, venue: str, parsed: list[str]
) -> None:
    read(control, venue)
    # The bar's timed move now lapses orders into `done` instead of `cancelled`.
    timed = {**SHOP["tables"]["orders"]["states"]["timed"][0], "to": "done"}
    orders = {**SHOP["tables"]["orders"]}
    orders["states"] = {**orders["states"], "timed": [timed]}
    with open_session(control) as session:
        save_app(
            session, venue, {**BAR, "tables": {**BAR["tables"], "orders": orders}}, replace=True
        )
    parsed.clear()  # the save parses it too
    found = read(control, venue)
    assert parsed == ["bar"]
    bar = next(s for s in found.stores if s.app.name == "bar")
    assert bar.app.tables["orders"].states.timed[0].to == "done"  # type: ignore[union-attr]


def test_a_new_zone_a_pause_and_a_removed_app_are_seen_at_the_next_sweep(
    control: str, venue: str, parsed: list[str]
) -> None:
    read(control, venue)
    with open_session(control) as session:
        connection = get_connection(session, venue)
        connection.zone = "Asia/Tokyo"
        connection.paused = True
        session.delete(next(a for a in connection.apps if a.name == "shop"))
        session.commit()
    found = read(control, venue)
    assert found.paused is True
    assert [s.app.name for s in found.stores] == ["bar"]
    assert str(found.stores[0].zone) == "Asia/Tokyo"


def test_a_store_whose_engine_was_let_go_of_gets_the_current_one(control: str, venue: str) -> None:
    before = read(control, venue).stores[0]
    ENGINES.clear()  # as when more databases were swept than the warm engines hold
    after = read(control, venue).stores[0]
    with open_session(control) as session:
        url = get_connection(session, venue).url
    assert after.engine is engine_for(url)
    assert after.engine is not before.engine
    assert after.app is before.app  # the parsed manifest kept


def test_fewer_warm_places_than_apps_still_sweeps_every_app(
    control: str, venue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(apps, "WARM", LeastRecent(1))
    for _ in range(2):
        assert [s.app.name for s in read(control, venue).stores] == ["shop", "bar"]


@pytest.mark.parametrize("name", ["nobody", "no\x00body"], ids=["unknown", "nul"])
def test_an_unknown_connection_is_not_found(control: str, name: str) -> None:
    with open_session(control) as session, pytest.raises(NotFound):
        swept_apps(session, name)


def test_a_connection_with_no_app_has_nothing_to_sweep(
    control: str, make_database: Callable[[], str]
) -> None:
    with open_session(control) as session:
        add_connection(session, "empty", make_database(), None)
    assert read(control, "empty") == SweptApps(False, [])


def test_a_warm_read_is_one_statement_and_a_saved_app_adds_one_for_it_alone(
    control: str, venue: str
) -> None:
    sent: list[tuple[str, Any]] = []

    def count(conn: Any, cursor: Any, statement: str, params: Any, *_: Any) -> None:
        sent.append((statement, params))

    read(control, venue)  # parsed once
    engine = engine_for(control)
    event.listen(engine, "before_cursor_execute", count)
    try:
        read(control, venue)
        assert len(sent) == 1  # the connection and its apps' ids and updated_at, in one
        timed = {**SHOP["tables"]["orders"]["states"]["timed"][0], "to": "done"}
        orders = {**SHOP["tables"]["orders"]}
        orders["states"] = {**orders["states"], "timed": [timed]}
        with open_session(control) as session:
            bar = save_app(
                session, venue, {**BAR, "tables": {**BAR["tables"], "orders": orders}}, replace=True
            )
            bar_id = bar.id
        sent.clear()
        found = read(control, venue)
        assert len(sent) == 2  # and the saved manifest of the bar alone
        assert "manifest" in sent[1][0] and list(sent[1][1].values()) == [bar_id]
        bar_store = next(s for s in found.stores if s.app.name == "bar")
        assert bar_store.app.tables["orders"].states.timed[0].to == "done"  # type: ignore[union-attr]
    finally:
        event.remove(engine, "before_cursor_execute", count)
