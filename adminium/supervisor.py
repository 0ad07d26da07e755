"""`adminium run`'s process manager: the Procfile's processes, each restarted when it dies.

honcho stops everything once one process exits; here a crashed web, worker or clock is
started again (after a pause that grows while it keeps crashing) and the log says so.
Only a stop signal ends the run: each process's group gets it, and SIGKILL after a grace.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

log = logging.getLogger(__name__)

#: Seconds before a crashed process starts again: the n-th crash in a row waits the n-th.
RESTART_DELAYS = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
#: A process that ran this long before it died is restarted as after a first crash.
STEADY_SECONDS = 60.0
#: How long the processes get to stop before they are killed.
STOP_GRACE_SECONDS = 5.0
#: How often the loop looks at its processes when none of them writes.
TICK_SECONDS = 0.2

PROCFILE_LINE = re.compile(r"^([A-Za-z0-9_-]+):\s*(.+)$")

# Each process runs under `sh -c`, started through this snippet: on Linux it asks for
# SIGTERM when the launcher dies (prctl PR_SET_PDEATHSIG = 1), and gives up at once if the
# launcher died before that. A snippet instead of `preexec_fn`, which is unsafe once the
# launcher runs threads.
EXEC_WITH_PARENT = (
    "import ctypes, os, signal, sys\n"
    "if sys.platform == 'linux':\n"
    "    ctypes.CDLL(None).prctl(1, signal.SIGTERM)\n"
    "if os.getppid() != int(sys.argv[2]):\n"
    "    sys.exit(1)\n"
    "os.execv('/bin/sh', ['/bin/sh', '-c', sys.argv[1]])\n"
)


def read_procfile(path: str | Path) -> dict[str, str]:
    """A Procfile's processes in order: name -> command (blank and # lines skipped)."""
    processes: dict[str, str] = {}
    for line in Path(path).read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = PROCFILE_LINE.match(line.strip())
        if match is None:
            raise ValueError(f"{path}: no `name: command` in {line!r}")
        processes[match[1]] = match[2]
    return processes


@dataclass
class Child:
    """One process of the Procfile, as it runs now."""

    name: str
    command: str
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    crashes: int = 0
    restart_at: float | None = None
    pending: bytes = b""


@dataclass
class Supervisor:
    """Runs the Procfile's processes until a stop signal; restarts any that dies."""

    processes: Mapping[str, str]
    env: Mapping[str, str]
    children: list[Child] = field(default_factory=list)
    stop_signal: int | None = None
    selector: selectors.BaseSelector = field(default_factory=selectors.DefaultSelector)
    width: int = 0

    def run(self, stop_signals: tuple[int, ...]) -> int:
        """Start every process, keep them running, stop them on a signal; 128 + that signal."""
        # From here a signal only sets a flag: the loop must not be cut between a fork and
        # its bookkeeping, or a process would be left behind.
        for signum in stop_signals:
            signal.signal(signum, self._request_stop)
        self.width = max(len(name) for name in self.processes)
        self.children = [Child(name, command) for name, command in self.processes.items()]
        for child in self.children:
            self._spawn(child)
        while self.stop_signal is None:
            self._pump(TICK_SECONDS)
            self._watch()
        self._stop_all(self.stop_signal)
        return 128 + self.stop_signal

    def _request_stop(self, signum: int, frame: FrameType | None) -> None:
        if self.stop_signal is None:
            self.stop_signal = signum

    def _spawn(self, child: Child) -> None:
        """Start a process in a session of its own, so that its whole group can be stopped."""
        process = subprocess.Popen(
            [sys.executable, "-c", EXEC_WITH_PARENT, child.command, str(os.getpid())],
            env=dict(self.env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        assert process.stdout is not None
        os.set_blocking(process.stdout.fileno(), False)
        self.selector.register(process.stdout, selectors.EVENT_READ, child)
        child.process, child.started, child.restart_at = process, time.monotonic(), None
        log.info("%s started (pid %s)", child.name, process.pid)

    def _watch(self) -> None:
        """Restart each dead process once its pause is over; note each newly dead one."""
        now = time.monotonic()
        for child in self.children:
            process = child.process
            if process is not None and process.poll() is not None:
                self._reap(child)
                ran = now - child.started
                child.crashes = 1 if ran >= STEADY_SECONDS else child.crashes + 1
                delay = RESTART_DELAYS[min(child.crashes, len(RESTART_DELAYS)) - 1]
                child.restart_at = now + delay
                log.warning(
                    "%s (pid %s) exited with code %s after %.0f s; restarting it in %.0f s",
                    child.name,
                    process.pid,
                    process.returncode,
                    ran,
                    delay,
                )
            elif process is None and child.restart_at is not None and now >= child.restart_at:
                self._spawn(child)
                log.warning("%s restarted", child.name)

    def _reap(self, child: Child) -> None:
        """Forget a dead process: the rest of its output, and anything left in its group."""
        process = child.process
        assert process is not None and process.stdout is not None
        self._drain(child)
        self.selector.unregister(process.stdout)
        process.stdout.close()
        kill_group(process.pid, signal.SIGKILL)
        child.process = None

    def _pump(self, timeout: float) -> None:
        """Copy what the processes wrote to our stdout, each line under its process's name."""
        for key, _ in self.selector.select(timeout):
            self._drain(key.data)

    def _drain(self, child: Child) -> None:
        assert child.process is not None and child.process.stdout is not None
        chunks = []
        while True:
            try:
                chunk = os.read(child.process.stdout.fileno(), 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        data = child.pending + b"".join(chunks)
        *lines, child.pending = data.split(b"\n")
        if child.process.poll() is not None and child.pending:
            lines, child.pending = [*lines, child.pending], b""
        for line in lines:
            text = line.decode(errors="replace").rstrip("\r")
            sys.stdout.write(f"{time.strftime('%H:%M:%S')} {child.name:<{self.width}} | {text}\n")
        sys.stdout.flush()

    def _stop_all(self, signum: int) -> None:
        """Send the stop signal to every process's group; kill what still runs after the grace."""
        name = signal.Signals(signum).name
        log.info("%s received: stopping %s", name, ", ".join(self.processes))
        forward = signal.SIGINT if signum == signal.SIGINT else signal.SIGTERM
        running = [c for c in self.children if c.process is not None]
        for child in running:
            assert child.process is not None
            kill_group(child.process.pid, forward)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        while any(c.process.poll() is None for c in running if c.process is not None):
            if time.monotonic() > deadline:
                log.warning("still running %.0f s after %s: killing them", STOP_GRACE_SECONDS, name)
                break
            self._pump(0.1)
        for child in running:
            assert child.process is not None
            pid = child.process.pid
            kill_group(pid, signal.SIGKILL)
            child.process.wait()
            self._reap(child)


def kill_group(pgid: int, signum: int) -> None:
    """Signal a process group; one that has gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)
