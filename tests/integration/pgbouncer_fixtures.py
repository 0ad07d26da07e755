"""Debian's PgBouncer (`make pgbouncer` installs it) in front of the test PostgreSQL.

`start_pgbouncer` runs one on a free loopback port in the pool mode asked (transaction by
default: a client's transactions go to whichever server session is free), every database
of the test server behind it (`* =`), trusting the test server's user as the server does.
Started as root, it switches to the `postgres` user, or to the owner of the embedded
server's socket folder (PgBouncer will not run as root).
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


@dataclass(frozen=True)
class Bouncer:
    """A running PgBouncer: its port, and the URL of a server database through it."""

    port: int
    mode: str

    def url(self, database_url: str) -> str:
        """`database_url` (a database of the test server) as reached through PgBouncer."""
        info = conninfo_to_dict(database_url)
        info.update(host="127.0.0.1", port=str(self.port))
        return make_conninfo(**info)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def start_pgbouncer(
    server_url: str,
    mode: str = "transaction",
    pool_size: int = 4,
    listen_on: int | None = None,
    max_clients: int = 500,
) -> Iterator[Bouncer]:
    """PgBouncer in `mode` with `pool_size` server sessions per database, stopped after (its
    clients' sockets closed); on `listen_on` (a port an earlier one had), else a free one; taking
    `max_clients` client connections (each process keeps one to each database it used)."""
    info = conninfo_to_dict(server_url)
    user = str(info.get("user") or pwd.getpwuid(os.getuid()).pw_name)
    password = str(info.get("password") or "")
    host, port = str(info.get("host") or "127.0.0.1"), str(info.get("port") or 5432)
    folder = Path(tempfile.mkdtemp(prefix="adm-pgbouncer-"))
    folder.chmod(0o755)
    users = folder / "users.txt"
    users.write_text(f'"{user}" "{password}"\n')
    listen = listen_on or _free_port()
    # Root: run as the user whose socket folder it is (the embedded server's), or postgres.
    owner = pwd.getpwuid(os.stat(host).st_uid).pw_name if host.startswith("/") else "postgres"
    switch = f"user = {owner}\n" if os.geteuid() == 0 else ""
    config = folder / "pgbouncer.ini"
    config.write_text(
        "[databases]\n"
        f"* = host={host} port={port}\n"
        "[pgbouncer]\n"
        f"listen_addr = 127.0.0.1\nlisten_port = {listen}\nunix_socket_dir =\n"
        f"auth_type = trust\nauth_file = {users}\n"
        f"pool_mode = {mode}\ndefault_pool_size = {pool_size}\nmax_client_conn = {max_clients}\n"
        "server_reset_query =\nlog_connections = 0\nlog_disconnections = 0\n"
        f"{switch}"
    )
    for path in (users, config):
        path.chmod(0o644)
    log = (folder / "pgbouncer.log").open("w")
    process = subprocess.Popen([PGBOUNCER, str(config)], stdout=log, stderr=log)
    bouncer = Bouncer(listen, mode)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                psycopg.connect(bouncer.url(server_url), connect_timeout=2).close()
                break
            except psycopg.OperationalError:
                if process.poll() is not None or time.monotonic() > deadline:
                    said = (folder / "pgbouncer.log").read_text()
                    raise RuntimeError(f"PgBouncer did not start: {said}") from None
                time.sleep(0.05)
        yield bouncer
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)  # immediate shutdown
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()
        shutil.rmtree(folder, ignore_errors=True)
