"""`adminium run`: web, worker and clock (each restarted if it dies), with the embedded servers."""

from __future__ import annotations

import logging
import os
import secrets
import signal
import socket
import sys
import threading
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

import click

from adminium.demo import demo_env, demo_wanted, install_demo
from adminium.embedded import Embedded, instance_folder, start_postgres, start_redis
from adminium.supervisor import Supervisor, read_procfile
from services.apps import install_adminium_tables
from services.storage import open_session, upgrade_control_plane

log = logging.getLogger(__name__)

#: The signals that stop `adminium run`: Ctrl-C, a supervisor's SIGTERM, a closed terminal.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: How long `adminium run` waits for the web to answer before it stops saying so.
WEB_UP_SECONDS = 120.0


class StopRequested(Exception):
    """A stop signal reached the launcher."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def default_port() -> int:
    """The web's port: PORT when set, else 5000."""
    return int(os.environ.get("PORT") or 5000)


@click.command("run")
@click.option(
    "--procfile",
    type=click.Path(exists=True, dir_okay=False),
    default="Procfile",
    show_default=True,
    help="The processes to run.",
)
@click.option("--port", type=int, default=default_port, help="The web's port [PORT or 5000].")
def run_command(procfile: str, port: int) -> None:
    """Start web, worker and clock, with embedded servers where no URL is set."""
    # Until the processes run, a stop signal unwinds through `finally` so the servers stop too.
    for signum in STOP_SIGNALS:
        signal.signal(signum, raise_stop)
    embedded = Embedded()
    code = 1
    try:
        env = process_env(embedded)
        upgrade_control_plane(env["DATABASE_URL"])
        with open_session(env["DATABASE_URL"]) as session:
            install_adminium_tables(session)
        if demo_wanted():
            install_demo(env["DATABASE_URL"], now=datetime.now(UTC), port=port)
        url = f"http://127.0.0.1:{port}/"
        click.echo(f"Adminium is starting on {url} (Ctrl-C stops everything)", err=True)
        code = run_procfile(procfile, port, env)
    except StopRequested as stop:
        code = 128 + stop.signum
    finally:
        # A second Ctrl-C must not cut the servers' shutdown short.
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
        embedded.stop()
        click.echo("Adminium stopped.", err=True)
    sys.exit(code)


def raise_stop(signum: int, frame: FrameType | None) -> None:
    """Signal handler: turn a stop signal into an exception."""
    raise StopRequested(signum)


def process_env(embedded: Embedded) -> dict[str, str]:
    """The Procfile's environment: the servers' URLs (embedded where unset) and this venv first."""
    env = dict(os.environ)
    if not env.get("DATABASE_URL"):
        env["DATABASE_URL"] = start_postgres(instance_folder() / "pg", embedded)
    if not env.get("REDIS_URL"):
        env["REDIS_URL"] = start_redis(instance_folder() / "redis.db", embedded)
    if not env.get("SMTP_URL"):
        env.update(embedded_smtp(instance_folder() / "mail"))
    if not env.get("SECRET_KEY"):
        env["SECRET_KEY"] = local_secret(instance_folder() / "secret_key")
    if demo_wanted():
        demo_env(env)
    # gunicorn and rq live beside this interpreter, whether or not the venv is activated.
    bin_folder = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join([bin_folder, env.get("PATH", os.defpath)])
    env["PYTHONUNBUFFERED"] = "1"
    return env


def embedded_smtp(folder: Path) -> dict[str, str]:
    """The Procfile's `mail` process serves SMTP on a free local port into `folder`, and the
    product sends there (no account anywhere for the demo's emails)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return {
        "SMTP_URL": f"smtp://127.0.0.1:{port}",
        "EMBEDDED_SMTP_PORT": str(port),
        "EMBEDDED_SMTP_FOLDER": str(folder),
    }


def local_secret(path: Path) -> str:
    """The session-signing key kept in `instance/` for local runs: made once, then reused."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(mode=0o600)
        path.write_text(secrets.token_hex(32))
    return path.read_text().strip()


def run_procfile(procfile: str, port: int, env: dict[str, str]) -> int:
    """Run the Procfile's processes, restarting any that dies, until a stop signal."""
    url = f"http://127.0.0.1:{port}/"
    threading.Thread(target=announce_when_up, args=(url,), daemon=True).start()
    # Every process gets the web's port; only the web listens on it.
    supervisor = Supervisor(read_procfile(procfile), {**env, "PORT": str(port)})
    return supervisor.run(STOP_SIGNALS)


def announce_when_up(url: str) -> None:
    """Print the URL again once the web answers, after the start-up logs."""
    deadline = time.monotonic() + WEB_UP_SECONDS
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}status", timeout=5):
                click.echo(f"Adminium is up: {url}", err=True)
                return
        except OSError:  # refused, reset, timed out, or an HTTP error status
            time.sleep(0.5)
