"""Console commands for sample data: `adminium sample add|remove CONNECTION APP`."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import click

from adminium.control_commands import INSTANT, control_plane, redis_publisher
from adminium.demo import EXAMPLES
from core.samples.files import load_sample
from services.apps import app_store, find_app
from services.samples import add_sample_data, kept_words, remove_sample_data

log = logging.getLogger(__name__)


@click.group("sample")
def sample_group() -> None:
    """Add or remove an app's sample data."""


@sample_group.command("add")
@click.argument("connection")
@click.argument("app")
@click.option(
    "--file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The sample file [examples/APP.sample.json].",
)
@click.option("--now", type=INSTANT, default=None, help="Times relative to this instant (ISO).")
def sample_add(connection: str, app: str, file: Path | None, now: datetime | None) -> None:
    """Add APP's sample rows on CONNECTION, each written by `Sample data`."""
    now = now or datetime.now(UTC)
    with control_plane() as session, redis_publisher() as publisher:
        found = find_app(session, f"{connection}/{app}")
        sample = load_sample(file or EXAMPLES / f"{found.name}.sample.json")
        added = add_sample_data(app_store(found), sample, now=now, publisher=publisher)
    click.echo(f"added {len(added)} sample rows to {connection}/{app}")


@sample_group.command("remove")
@click.argument("connection")
@click.argument("app")
@click.option("--now", type=INSTANT, default=None, help="Audit the removal at this instant.")
def sample_remove(connection: str, app: str, now: datetime | None) -> None:
    """Remove every sample row of APP on CONNECTION, in one transaction."""
    now = now or datetime.now(UTC)
    with control_plane() as session, redis_publisher() as publisher:
        found = find_app(session, f"{connection}/{app}")
        removal = remove_sample_data(app_store(found), now=now, publisher=publisher)
    counts = ", ".join(f"{n} from {table}" for table, n in removal.removed.items()) or "none"
    kept = kept_words(removal)
    line = f"removed sample rows of {connection}/{app}: {counts}"
    click.echo(line + (f"; {kept}" if kept else ""))
