"""The indexes an app wants (its timed moves', its reminders':
`core.store.install.timed_indexes`) made in a database that already holds its tables,
without stopping the venue's writers.

`adminium run` calls `make_indexes` for every app as it starts, so an app saved before a
newer version wanted another index (the reminders' moment column) gets it, on the tables
Adminium made (`core.store.made`); a table of the venue's own is indexed only when asked
(`adminium indexes CONN --build`), and `adminium indexes CONN` prints the SQL for its DBA.
Each missing index is built `CREATE INDEX CONCURRENTLY`: the table stays open to reads and
writes while it is built (two scans of the table instead of one, after waiting for the transactions
already writing it): measured at about 0.5 s per million rows on a quiet machine (the plain
form 0.3 s, but holding writers off the table for the whole build), so a start-up on a
table of tens of millions waits seconds, with nobody else kept waiting. An index a failed
concurrent build left INVALID (which `IF NOT EXISTS` would take for done) is dropped and
built again. An index already there costs one catalogue query.
"""

from __future__ import annotations

import logging
import time

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from core.manifest.model import App
from core.store.install import (
    concurrently,
    index_item,
    index_name,
    index_table,
    install_adminium,
    timed_indexes,
)
from core.store.made import read_made, record_made
from services.errors import first_line

log = logging.getLogger(__name__)

_FOUND = sa.text(
    "SELECT c.relname, i.indisvalid FROM pg_index i"
    " JOIN pg_class c ON c.oid = i.indexrelid"
    " JOIN pg_namespace n ON n.oid = c.relnamespace"
    " WHERE n.nspname = :schema AND c.relname = ANY(:names)"
)


def make_indexes(
    engine: Engine, app: App, *, connection: str = "", venue_tables: bool = False
) -> list[str]:
    """Build, concurrently, the app's wanted indexes its database lacks or holds invalid,
    on the tables Adminium made (on the venue's own tables too only when asked:
    `venue_tables`, `adminium indexes CONN --build`); the names built, each recorded as
    Adminium's. One that cannot be built (its table missing) is logged and skipped."""
    schema = app.schema_name
    with engine.connect() as conn:
        made = read_made(conn, [schema])
        wanted = {
            index_name(s): s
            for s in timed_indexes(app)
            if venue_tables or made.table(schema, index_table(s))
        }
        if not wanted:
            return []
        rows = conn.execute(_FOUND, {"schema": schema, "names": list(wanted)})
        found: dict[str, bool] = {name: valid for name, valid in rows}
    built = []
    # CONCURRENTLY cannot run inside a transaction block.
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        for name, statement in wanted.items():
            if found.get(name):
                continue
            log.warning(
                "building index %s of app %s on connection %s (about 0.5 s a million rows;"
                " its writers go on)",
                name,
                app.name,
                connection,
            )
            started = time.monotonic()
            try:
                if name in found:
                    conn.execute(sa.text(f'DROP INDEX CONCURRENTLY IF EXISTS "{schema}"."{name}"'))
                conn.execute(sa.text(concurrently(statement)))
            except SQLAlchemyError as error:
                log.warning(
                    "index %s of app %s on connection %s not built: %s",
                    name,
                    app.name,
                    connection,
                    first_line(error),
                )
                continue
            built.append(name)
            with engine.begin() as recording:
                install_adminium(recording)
                record_made(recording, app.name, [index_item(schema, statement)])
            log.warning(
                "index %s of app %s on connection %s built in %.1f s%s",
                name,
                app.name,
                connection,
                time.monotonic() - started,
                " (it was invalid)" if name in found else "",
            )
    return built
