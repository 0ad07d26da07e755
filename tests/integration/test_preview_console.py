"""`adminium preview` and `adminium app add --replace [--preview] [--yes]`: the same
preview printed, nothing saved; a replace making more than 5 rows due at
once refused without --yes. Moments worked by hand (Europe/London)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from adminium.cli import main
from services.apps import lookup_app
from services.storage import open_session
from tests.integration.preview_fixtures import DINER, Diner, build_diner


@pytest.fixture
def diner(make_database: Callable[[], str]) -> Iterator[Diner]:
    made = build_diner(make_database(), make_database())
    yield made
    made.dispose()


def run(diner: Diner, *args: str) -> Result:
    env = {"DATABASE_URL": diner.control_url, "REDIS_URL": ""}
    return CliRunner().invoke(main, list(args), env=env)


def shorter_offers(minutes: int) -> dict[str, Any]:
    """The diner with its offer window a fixed `minutes` instead of settings.offer_minutes."""
    manifest = copy.deepcopy(DINER)
    timed = manifest["tables"]["offers"]["states"]["timed"][0]
    timed["at"]["plus"] = {"minutes": minutes}
    return manifest


def saved_window(diner: Diner) -> Any:
    with open_session(diner.control_url) as session:
        app = lookup_app(session, "diner", "diner")
        assert app is not None
        return app.manifest["tables"]["offers"]["states"]["timed"][0]["at"]["plus"]


def test_preview_set_prints_each_row_and_the_summary_and_saves_nothing(diner: Diner) -> None:
    # Spring: Friday 2027-04-02 is on BST; closing 23:00 -> 21:00 is 22:00Z -> 20:00Z.
    keys = [
        diner.insert("orders", pickup_at=datetime(2027, 4, 2, h, tzinfo=UTC), status="placed")
        for h in (12, 14, 16)
    ]
    result = run(
        diner,
        "preview",
        "diner",
        "--set",
        "opening_hours[weekday=fri].closes=21:00",
        "--at",
        "2027-04-02T20:30:00+00:00",
    )
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    # Read 8 days (192 hours) past Fri 2 Apr 21:30 BST: to Sat 10 Apr 21:30 BST.
    assert lines[-1] == (
        "3 rows due at once, 0 moments later, 0 earlier (read to Sat 10 Apr 21:30, 8 days)"
    )
    for key, line in zip(keys, lines[:3], strict=True):
        assert line.startswith(f"orders {key}\tplaced → cancelled\tdue at once\t")
        assert "Fri 23:00 (2027-04-02 23:00 BST) → Fri 21:00 (2027-04-02 21:00 BST)" in line
    assert diner.rows("SELECT closes FROM diner.opening_hours WHERE weekday = 'fri'") == [
        ("23:00",)
    ]
    # Before the clocks go forward, the same UTC time is 20:30 GMT: not yet past 21:00.
    march = run(
        diner,
        "preview",
        "diner",
        "--set",
        "opening_hours[weekday=fri].closes=21:00",
        "--at",
        "2027-03-26T20:30:00+00:00",
    )
    assert march.exit_code == 0, march.output
    # 192 hours past Fri 26 Mar 20:30 GMT, over the clocks going forward on Sun 28 Mar:
    # Sat 3 Apr 20:30Z, 21:30 BST on the wall.
    assert march.output.strip().splitlines()[-1] == (
        "0 rows due at once, 0 moments later, 3 earlier (read to Sat 3 Apr 21:30, 8 days)"
    )


def test_a_bad_change_exits_1_with_one_line(diner: Diner) -> None:
    result = run(diner, "preview", "diner", "--set", "opening_hours.closes=21:00")
    assert result.exit_code == 1
    assert "opening_hours names 7 rows, not one" in result.output
    key = diner.insert("orders", pickup_at=datetime(2026, 10, 23, 12, tzinfo=UTC), status="placed")
    row = run(diner, "preview", "diner", "--set", f"orders[{key}].pickup_at=2026-10-23T09:00Z")
    assert row.exit_code == 1
    assert "'orders' is no table the app's moments read as settings or hours" in row.output


def _offers(diner: Diner, count: int) -> None:
    # Made 11:30Z: settings.offer_minutes 60 ends them 12:30Z; a fixed 20 min at 11:50Z.
    for _ in range(count):
        diner.insert("offers", made_at=datetime(2026, 10, 23, 11, 30, tzinfo=UTC), status="open")


def test_replace_preview_prints_and_saves_nothing(diner: Diner, tmp_path: Path) -> None:
    _offers(diner, 2)
    file = tmp_path / "diner.json"
    file.write_text(json.dumps(shorter_offers(20)))
    result = run(
        diner,
        "app",
        "add",
        "diner",
        str(file),
        "--replace",
        "--preview",
        "--at",
        "2026-10-23T12:00:00+00:00",
    )
    assert result.exit_code == 0, result.output
    # Fri 23 Oct 13:00 BST plus 192 hours, over the clocks going back on Sun 25 Oct:
    # Sat 31 Oct 12:00Z, 12:00 GMT.
    assert result.output.strip().splitlines()[-1] == (
        "2 rows due at once, 0 moments later, 0 earlier (read to Sat 31 Oct 12:00, 8 days)"
    )
    assert saved_window(diner) == {"minutes": {"table": "settings", "column": "offer_minutes"}}


def test_replace_making_more_than_5_due_at_once_needs_yes(diner: Diner, tmp_path: Path) -> None:
    _offers(diner, 6)
    file = tmp_path / "diner.json"
    file.write_text(json.dumps(shorter_offers(20)))
    at = ("--at", "2026-10-23T12:00:00+00:00")
    refused = run(diner, "app", "add", "diner", str(file), "--replace", *at)
    assert refused.exit_code == 1
    assert "6 rows due at once, 0 moments later, 0 earlier" in refused.output
    assert "not replaced: 6 rows would be due at once (more than 5)" in refused.output
    assert saved_window(diner) == {"minutes": {"table": "settings", "column": "offer_minutes"}}
    done = run(diner, "app", "add", "diner", str(file), "--replace", "--yes", *at)
    assert done.exit_code == 0, done.output
    assert saved_window(diner) == {"minutes": 20}


def test_replace_making_5_due_at_once_goes_through(diner: Diner, tmp_path: Path) -> None:
    _offers(diner, 5)
    file = tmp_path / "diner.json"
    file.write_text(json.dumps(shorter_offers(20)))
    done = run(
        diner, "app", "add", "diner", str(file), "--replace", "--at", "2026-10-23T12:00:00+00:00"
    )
    assert done.exit_code == 0, done.output
    assert saved_window(diner) == {"minutes": 20}
