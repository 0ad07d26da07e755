"""`adminium sample add|remove CONNECTION APP` through click's CliRunner."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result

from adminium.cli import main
from core.sample_marks import sample_rows
from web import controlplane

ROOT = Path(__file__).resolve().parents[2]
Invoke = Callable[..., Result]


@pytest.fixture
def setup(make_database: Callable[[], str]) -> Iterator[tuple[Invoke, str]]:
    """A control plane with the takeaway app on a connection `venue` in Europe/London."""
    control_url, venue_url = make_database(), make_database()
    env = {"DATABASE_URL": control_url, "REDIS_URL": ""}

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), env=env)

    assert (
        invoke(
            "connection", "add", "venue", "--url", venue_url, "--zone", "Europe/London"
        ).exit_code
        == 0
    )
    manifest = ROOT / "examples" / "takeaway.json"
    assert invoke("app", "add", "venue", str(manifest), "--create-tables").exit_code == 0
    yield invoke, venue_url
    controlplane.engine_for(venue_url).dispose()
    controlplane.engine_for(control_url).dispose()


def counts(url: str) -> tuple[int, int]:
    """(orders, sample marks) in the venue's database."""
    engine = controlplane.engine_for(url)
    with engine.connect() as conn:
        orders = conn.execute(sa.text("SELECT count(*) FROM takeaway.orders")).scalar_one()
        marks = conn.execute(sa.select(sa.func.count()).select_from(sample_rows)).scalar_one()
    return orders, marks


def test_add_then_remove_sample_data(setup: tuple[Invoke, str]) -> None:
    invoke, url = setup
    added = invoke("sample", "add", "venue", "takeaway", "--now", "2026-07-01T13:00:00+01:00")
    assert added.exit_code == 0, added.output
    assert "added 18 sample rows to venue/takeaway" in added.output
    assert counts(url) == (7, 18)
    removed = invoke("sample", "remove", "venue", "takeaway")
    assert removed.exit_code == 0, removed.output
    assert "7 from orders" in removed.output
    assert counts(url) == (0, 0)


def test_add_refuses_a_sample_of_another_app(setup: tuple[Invoke, str], tmp_path: Path) -> None:
    invoke, url = setup
    other = tmp_path / "hotel.sample.json"
    other.write_text(json.dumps({"app": "hotel", "rows": {}}))
    result = invoke("sample", "add", "venue", "takeaway", "--file", str(other))
    assert result.exit_code == 1
    assert "the sample belongs to app 'hotel', not 'takeaway'" in result.output
    assert counts(url) == (0, 0)
