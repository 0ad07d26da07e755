"""Writes by a person, a guest or an import: the pipeline, then the events, then the log.

Each operation makes its writes through `core.writes.pipeline.create_row` or `change_row` (which
commit), then publishes their events, then logs once. A person's and a guest's `clock` is
the adapter's, read for `now` and again just before each commit: a late window that
opened while the write was made is a conflict.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from core.basics.actors import Actor
from core.basics.errors import AdminiumError
from core.store.store import Store
from core.writes.pipeline import WriteResult, change_row, create_row
from core.writes.request import WriteRequest
from services.deliveries import deliveries_queued
from services.due_hints import hint_writes, writes_hint
from services.events import Publisher
from services.outbox import mail_queued

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]


def write_by_person(
    store: Store,
    table: str,
    key: Any = None,
    *,
    actor: Actor,
    clock: Clock,
    publisher: Publisher,
    values: Mapping[str, Any] | None = None,
    move_to: str | None = None,
    seen_state: str | None = None,
) -> WriteResult:
    """A person's create (no key), change or move of a row, from a screen or the REST API."""
    request = WriteRequest(
        table,
        actor,
        clock(),
        key=key,
        values=values or {},
        move_to=move_to,
        seen_state=seen_state,
        commit_clock=clock,
    )
    result = create_row(store, request) if key is None else change_row(store, request)
    _tell(publisher, store, result, request.now)
    log.info(
        "%s.%s key=%s written by %s%s",
        store.app.name,
        table,
        result.key,
        actor.name,
        f" (moved to {move_to})" if move_to else "",
    )
    return result


def write_by_guest(
    store: Store,
    table: str,
    key: Any,
    *,
    code: tuple[str, str],
    to: str,
    values: Mapping[str, Any],
    clock: Clock,
    publisher: Publisher,
) -> WriteResult:
    """A guest's move of the one row their link code opens (`code`: column, value), which
    the held row must still carry."""
    column, value = code
    request = WriteRequest(
        table,
        Actor.public(),
        clock(),
        key=key,
        values=values,
        move_to=to,
        commit_clock=clock,
        expect={column: value},
    )
    result = change_row(store, request)
    _tell(publisher, store, result, request.now)
    log.info("%s.%s key=%s moved to %s by a guest", store.app.name, table, result.key, to)
    return result


def _tell(publisher: Publisher, store: Store, result: WriteResult, now: datetime) -> None:
    """After one write's commit: its events and the connection's due hint in one pipeline
    (one round trip to Redis), then the drains of what it queued."""
    hint = writes_hint(store, [result], now) if publisher.client is not None else None
    what = f"row events of {result.table} key={result.key}" + (" and its due hint" if hint else "")
    publisher.rows(result.events, what=what, also=hint)
    mail_queued(publisher, result)
    deliveries_queued(publisher, result)


@dataclass(frozen=True)
class ImportReport:
    """What an import did: how many rows it wrote, and each refused row's number and refusal."""

    imported: int
    refused: list[tuple[int, AdminiumError]] = field(default_factory=list)


def import_rows(
    store: Store,
    table: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    now: datetime,
    publisher: Publisher,
) -> ImportReport:
    """Write each row as `Import`, each its own write; a refused row does not stop the rest."""
    refused: list[tuple[int, AdminiumError]] = []
    results: list[WriteResult] = []
    for number, row in enumerate(rows, start=1):
        try:
            request = WriteRequest(table, Actor.importer(), now, values=row)
            results.append(create_row(store, request))
        except AdminiumError as error:
            refused.append((number, error))
    publisher.rows([event for result in results for event in result.events])
    mail_queued(publisher, *results)
    deliveries_queued(publisher, *results)
    hint_writes(publisher, store, results, now)
    log.info(
        "import into %s.%s: %s written, %s refused",
        store.app.name,
        table,
        len(results),
        len(refused),
    )
    return ImportReport(len(results), refused)
