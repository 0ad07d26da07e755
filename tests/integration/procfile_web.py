"""The Procfile's web line started as a real gunicorn on a test site's databases.

`procfile_web(config)` runs `sh -c "<the web line>"` with the site's DATABASE_URL,
REDIS_URL and SECRET_KEY on a free port (so a cookie signed by the test's app opens it),
waits for `/status`, and stops the process group on leaving.
"""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from adminium.supervisor import read_procfile
from tests.integration.launching import ROOT, UP_SECONDS, free_port, wait_for


def answers(port: int) -> bool:
    """Whether the web answers /status with 200 (2 s at most)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", "/status")
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


@contextmanager
def procfile_web(config: Mapping[str, Any], log: Path | None = None) -> Iterator[int]:
    """The Procfile's web line on a site's databases (its output to `log`, if given); its
    port."""
    with procfile_webs(config, 1, log) as ports:
        yield ports[0]


@contextmanager
def procfile_webs(
    config: Mapping[str, Any], count: int, log: Path | None = None
) -> Iterator[list[int]]:
    """`count` web processes of the Procfile's line on a site's databases, started
    together (their output to `log`, if given); their ports."""
    ports = [free_port() for _ in range(count)]
    processes = [_start(config, port, log) for port in ports]
    try:
        for port in ports:
            wait_for("the web answers", lambda port=port: answers(port), UP_SECONDS)
        yield ports
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGQUIT)  # gunicorn: stop now
        for process in processes:
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(5)


def _start(
    config: Mapping[str, Any], port: int, log: Path | None = None
) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": config["DATABASE_URL"],
        "REDIS_URL": config["REDIS_URL"],
        "SECRET_KEY": config["SECRET_KEY"],
        "PORT": str(port),
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
    }
    with open(log or os.devnull, "ab") as output:  # the child keeps its own descriptor
        return subprocess.Popen(
            ["/bin/sh", "-c", read_procfile(ROOT / "Procfile")["web"]],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
