"""The tick's listing of connections with minute work: one query of names, apps and their
`updated_at`, the rule asked again only of an app saved since (services/connections.py)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from services.apps import save_app
from services.connections import add_connection, connections_with_minute_work
from services.storage import engine_for, open_session, upgrade_control_plane
from tests.integration.sweep_fixtures import SHOP


def quiet(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest with no timed move (no hold, no reminder either: no minute work)."""
    other = copy.deepcopy(manifest)
    del other["tables"]["orders"]["states"]["timed"]
    return other


def test_an_app_saved_with_or_without_its_timed_move_is_listed_or_not_at_the_next_tick(
    make_database: Callable[[], str],
) -> None:
    control = make_database()
    upgrade_control_plane(control)
    try:
        with open_session(control) as session:
            add_connection(session, "b-shop", make_database())
            add_connection(session, "a-quiet", make_database())
            save_app(session, "a-quiet", quiet(SHOP))
            save_app(session, "b-shop", SHOP)
            assert connections_with_minute_work(session) == ["b-shop"]
            # Each save moves the row's updated_at, so the verdict is asked again.
            save_app(session, "a-quiet", SHOP, replace=True)
            assert connections_with_minute_work(session) == ["a-quiet", "b-shop"]
            save_app(session, "b-shop", quiet(SHOP), replace=True)
            assert connections_with_minute_work(session) == ["a-quiet"]
            # A second app with minute work lists its connection once.
            save_app(session, "a-quiet", {**SHOP, "name": "other", "schema": "other"})
            assert connections_with_minute_work(session) == ["a-quiet"]
    finally:
        engine_for(control).dispose()
