"""Sample data: add an app's sample set, or remove every sample row it has, and tell the screens."""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path

from core.samples.data import (
    SampleRemoval,
    SampleRow,
    add_sample,
    marked_keys,
    removal_events,
    remove_sample,
)
from core.samples.files import SampleFile, load_sample
from core.samples.preview import SampleDue, sample_due
from core.setoff.automations import watching
from core.store.store import Store
from services.deliveries import DRAIN
from services.events import Publisher
from services.sweep_ledger import QUEUE

log = logging.getLogger(__name__)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
"""Where an app's sample set is kept: `<app>.sample.json` beside its manifest."""


def sample_path(app: str, folder: Path = EXAMPLES) -> Path | None:
    """The sample file of an app, when one is kept."""
    path = folder / f"{app}.sample.json"
    return path if path.is_file() else None


def add_kept_sample(
    store: Store, *, now: datetime, publisher: Publisher, folder: Path = EXAMPLES
) -> list[SampleRow] | None:
    """Add the app's kept sample set (None when it keeps none)."""
    path = sample_path(store.app.name, folder)
    if path is None:
        return None
    return add_sample_data(store, load_sample(path), now=now, publisher=publisher)


def kept_sample_due(
    store: Store, *, now: datetime, folder: Path = EXAMPLES
) -> list[SampleDue] | None:
    """Which rows of the app's kept sample set the next sweep would move (or give their
    hold back) as soon as they are added, asked writing nothing (None when it keeps none)."""
    path = sample_path(store.app.name, folder)
    if path is None:
        return None
    return sample_due(store, load_sample(path), now=now)


def add_sample_data(
    store: Store, sample: SampleFile, *, now: datetime, publisher: Publisher
) -> list[SampleRow]:
    """Write a sample set as `Sample data`; each row's events go out once all are written."""
    added = add_sample(store, sample, now=now)
    publisher.rows([event for row in added for event in row.events], what="sample rows")
    if hears_samples(store, added):
        DRAIN.wake(publisher.client, QUEUE, store.connection)
    log.info("sample data of %s/%s: %s rows added", store.connection, store.app.name, len(added))
    return added


def hears_samples(store: Store, added: list[SampleRow]) -> bool:
    """Whether an automation that hears sample rows (`samples: true`) watches a table the
    sample wrote to: its writes may have queued deliveries, whose drain is then enqueued."""
    tables = {row.table for row in added}
    return any(a.samples for table in tables for a in watching(store.app.automations, table))


def remove_sample_data(store: Store, *, now: datetime, publisher: Publisher) -> SampleRemoval:
    """Remove every sample row of the app in one transaction; open boards drop each one
    (`"removed": true`). A sample row a row that stays refers to is kept, and named."""
    keys = marked_keys(store)
    removal = remove_sample(store, now=now)
    kept = {(row.table, row.key) for row in removal.kept}
    gone = {
        table: {key for key in keys.get(table, set()) if (table, key) not in kept}
        for table in removal.removed
    }
    publisher.rows(
        removal_events(store.connection, store.app.name, gone),
        {"removed": True},
        f"sample removal of {store.connection}/{store.app.name}",
    )
    log.info(
        "sample data of %s/%s removed: %s; kept %s",
        store.connection,
        store.app.name,
        removal.removed,
        [f"{row.table} {row.key}" for row in removal.kept],
    )
    return removal


def kept_words(removal: SampleRemoval) -> str | None:
    """The sample rows a removal kept, in words: `kept 1 sample row that rows staying refer
    to: customers 1 (orders 8)`; None when it kept none."""
    if not removal.kept:
        return None
    rows = "row" if len(removal.kept) == 1 else "rows"
    named = "; ".join(
        f"{row.table} {row.key} ({', '.join(f'{t} {k}' for t, k in row.held_by)})"
        for row in removal.kept
    )
    return f"kept {len(removal.kept)} sample {rows} that rows staying refer to: {named}"
