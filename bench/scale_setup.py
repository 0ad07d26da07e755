"""bench/scale.py's world: venue databases, a control plane listing N connections, a Redis.

Connections share a few venue databases, each its own schema holding the sweep tests'
shop (orders lapse at `due_at`); or, with `databases` equal to the size, each connection
has a database of its own (as each venue does), created with a unique name and dropped
at the end. Each orders table gets a `moved_at` column that a
trigger fills with the database's clock when a row leaves `placed`, so a move's lag is
measured where it commits, not where the sweep read `now`.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.manifest.model import load_app  # noqa: E402
from core.store.install import install_app  # noqa: E402
from core.store.store import make_engine  # noqa: E402
from services.storage import upgrade_control_plane  # noqa: E402
from tests.integration.sweep_fixtures import SHOP  # noqa: E402

DATABASES = 4
"""How many venue databases the connections share (by schema)."""

MAIL_PRODUCER = {
    "kind": "message",
    "table": "orders",
    "on": {"column": "status", "values": ["cancelled"]},
    "to": "email",
    "subject": "Order {{ row.id }} lapsed",
    "body": "Order {{ row.id }} lapsed.",
}
"""With --mail: a lapsed order emails its `email` (none has one)."""

MOVED_AT = """
CREATE OR REPLACE FUNCTION public.bench_moved_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status <> OLD.status THEN NEW.moved_at := clock_timestamp(); END IF;
  RETURN NEW;
END $$;
"""


def with_database(server: str, name: str) -> str:
    """The server's URL naming another database."""
    info = psycopg.conninfo.conninfo_to_dict(server)
    info["dbname"] = name
    return psycopg.conninfo.make_conninfo(**info)


class World:
    """Venue databases with `size` schemas in all, and control planes over the first N."""

    def __init__(self, server: str, size: int, databases: int = DATABASES) -> None:
        self.server = server
        self.tag = uuid.uuid4().hex[:8]
        self.size = size
        self.databases = databases
        self.created: list[str] = []
        self.venues = [self._create(f"adm_scale_{self.tag}_v{d}") for d in range(databases)]

    def _create(self, name: str) -> str:
        with psycopg.connect(self.server, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        self.created.append(name)
        return with_database(self.server, name)

    def venue_of(self, index: int) -> tuple[str, str]:
        """(database URL, schema) of the index-th connection."""
        return self.venues[index % self.databases], f"s{index}"

    def schemas_in(self, url: str, count: int) -> list[str]:
        """The schemas of the first `count` connections that live in the database at `url`."""
        start = self.venues.index(url)
        return [f"s{i}" for i in range(start, count, self.databases)]

    def manifest(self, index: int, mail: bool = False) -> dict[str, object]:
        """The shop in its schema; with `mail`, it also emails a lapsed order's `email`
        (every order has none, so nothing is ever queued: the tick's drains cost alone)."""
        if not mail:
            return {**SHOP, "schema": self.venue_of(index)[1]}
        tables = json.loads(json.dumps(SHOP["tables"]))
        tables["orders"]["columns"].append({"ref": "email", "type": "text", "nullable": True})
        outbox = {"producers": [MAIL_PRODUCER]}
        return {**SHOP, "tables": tables, "outbox": outbox, "schema": self.venue_of(index)[1]}

    def install(self) -> None:
        """Every schema's shop tables (with the mail column), its settings row, and the
        moved_at trigger."""
        for url in self.venues:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(MOVED_AT)
            # One venue database at a time: a thousand open engines would pass the
            # server's max_connections.
            engine = make_engine(url)
            for index in range(self.venues.index(url), self.size, self.databases):
                schema = self.venue_of(index)[1]
                install_app(engine, load_app(self.manifest(index, mail=True)))
                with engine.begin() as conn:
                    conn.exec_driver_sql(f"INSERT INTO {schema}.settings DEFAULT VALUES")
                    conn.exec_driver_sql(
                        f"ALTER TABLE {schema}.orders ADD COLUMN moved_at timestamptz; "
                        f"CREATE TRIGGER moved_at BEFORE UPDATE ON {schema}.orders "
                        "FOR EACH ROW EXECUTE FUNCTION public.bench_moved_at()"
                    )
            engine.dispose()

    def control(
        self, count: int, mail: bool = False, through: Callable[[str], str] | None = None
    ) -> str:
        """A fresh control plane listing the first `count` connections (c00000, c00001, ...),
        with `mail` their apps' manifests emailing (the tick then enqueues a drain each);
        with `through`, each connection's URL is its database's as `through` gives it (the
        same databases through PgBouncer)."""
        reach = through or (lambda url: url)
        url = self._create(f"adm_scale_{self.tag}_c{count}_{uuid.uuid4().hex[:4]}")
        upgrade_control_plane(url)
        with psycopg.connect(url) as conn:
            for start in range(0, count, 1000):
                batch = range(start, min(count, start + 1000))
                conn.execute(
                    "INSERT INTO adminium_control.connections (name, url, zone, paused) "
                    "SELECT unnest(%s::text[]), unnest(%s::text[]), 'Europe/London', false",
                    ([f"c{i:05d}" for i in batch], [reach(self.venue_of(i)[0]) for i in batch]),
                )
                conn.execute(
                    "INSERT INTO adminium_control.apps (connection_id, name, manifest) "
                    "SELECT c.id, 'shop', m.manifest::jsonb FROM unnest(%s::text[], %s::text[]) "
                    "AS m(name, manifest) JOIN adminium_control.connections c USING (name)",
                    (
                        [f"c{i:05d}" for i in batch],
                        [json.dumps(self.manifest(i, mail)) for i in batch],
                    ),
                )
        return url

    def add_due(self, count: int, per: int, moments: list[datetime]) -> int:
        """`per` placed orders in each of the first `count` schemas, due at `moments` in turn."""
        added = 0
        for url in self.venues:
            schemas = self.schemas_in(url, count)
            if not schemas:
                continue
            with psycopg.connect(url, autocommit=True) as conn:
                for schema in schemas:
                    due = [moments[(added + k) % len(moments)] for k in range(per)]
                    conn.execute(
                        sql.SQL(
                            "INSERT INTO {}.orders (status, due_at) SELECT 'placed', unnest(%s)"
                        ).format(sql.Identifier(schema)),
                        (due,),
                    )
                    added += per
        return added

    def add_spread(self, count: int, rows: int, moment: datetime) -> None:
        """`rows` placed orders due at `moment`, one each in connections spread evenly over
        the first `count` (0, count/rows, 2·count/rows, ...)."""
        for k in range(rows):
            url, schema = self.venue_of(k * count // rows)
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(
                    sql.SQL("INSERT INTO {}.orders (status, due_at) VALUES ('placed', %s)").format(
                        sql.Identifier(schema)
                    ),
                    (moment,),
                )

    def reset(self, count: int) -> None:
        """Empty the first `count` schemas' orders, set-aside records and sweep records."""
        for url in self.venues:
            schemas = self.schemas_in(url, count)
            if not schemas:
                continue
            with psycopg.connect(url, autocommit=True) as conn:
                for schema in schemas:
                    conn.execute(sql.SQL("TRUNCATE {}.orders").format(sql.Identifier(schema)))
                conn.execute("TRUNCATE adminium.sweeps, adminium.audit, adminium.set_aside")

    def lags(self, count: int) -> list[float]:
        """Seconds from each moved row's moment to its move, over the first `count` schemas."""
        found: list[float] = []
        for url in self.venues:
            schemas = self.schemas_in(url, count)
            if not schemas:
                continue
            with psycopg.connect(url) as conn:
                for start in range(0, len(schemas), 200):
                    union = sql.SQL(" UNION ALL ").join(
                        sql.SQL(
                            "SELECT extract(epoch FROM moved_at - due_at)::float8 FROM {}.orders "
                            "WHERE moved_at IS NOT NULL"
                        ).format(sql.Identifier(s))
                        for s in schemas[start : start + 200]
                    )
                    found += [row[0] for row in conn.execute(union)]
        return found

    def still_due(self, count: int) -> int:
        """Placed orders left in the first `count` schemas."""
        left = 0
        for url in self.venues:
            schemas = self.schemas_in(url, count)
            if not schemas:
                continue
            with psycopg.connect(url) as conn:
                for schema in schemas:
                    query = sql.SQL("SELECT count(*) FROM {}.orders WHERE status = 'placed'")
                    row = conn.execute(query.format(sql.Identifier(schema))).fetchone()
                    left += row[0] if row else 0
        return left

    def drop(self) -> None:
        with psycopg.connect(self.server, autocommit=True) as conn:
            for name in self.created:
                conn.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def redis_server() -> Iterator[str]:
    """A Redis of the bench's own (no other queue shares it), stopped afterwards."""
    folder = tempfile.mkdtemp(prefix="adm-scale-")
    port = free_port()
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no", "--dir", folder],
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(10)
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def private_server(max_connections: int) -> Iterator[str]:
    """A PostgreSQL of the bench's own (the pgserver wheel's, in a temporary folder) that
    takes `max_connections` sessions; its URL. Stopped and deleted afterwards."""
    import pgserver
    from pgserver._commands import pg_ctl

    folder = Path(tempfile.mkdtemp(prefix="adm-pg-"))
    server = pgserver.get_server(folder, cleanup_mode="delete")
    url = server.get_uri()
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"ALTER SYSTEM SET max_connections = {int(max_connections)}")
        pg_ctl(["-w", "restart"], pgdata=folder, user=server.system_user)
        yield url
    finally:
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=folder, user=server.system_user)
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


def max_connections(url: str) -> int:
    """The sessions the server at `url` takes."""
    with psycopg.connect(url) as conn:
        row = conn.execute("SHOW max_connections").fetchone()
    return int(row[0]) if row else 0


def server_url() -> str:
    return os.environ.get("TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
