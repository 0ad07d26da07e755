"""The `adminium` console command."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import click

from adminium.check_command import check_command
from adminium.embedded import Embedded, start_postgres, start_redis

log = logging.getLogger(__name__)


@click.group()
def main() -> None:
    """Adminium timed moves."""
    logging.basicConfig(
        level=os.environ.get("LOG_LEVEL", "INFO"), format="%(levelname)s %(name)s: %(message)s"
    )


def instance_folder() -> Path:
    """Where the embedded servers keep their data."""
    return Path(os.environ.get("ADMINIUM_INSTANCE", "instance")).resolve()


@main.command("run")
@click.option("--procfile", default="Procfile", show_default=True)
@click.option("--port", default=5000, show_default=True, help="The web's port.")
def run_command(procfile: str, port: int) -> None:
    """Start web, worker and clock, with embedded servers where no URL is set."""
    embedded = Embedded()
    env = dict(os.environ)
    try:
        if not env.get("DATABASE_URL"):
            env["DATABASE_URL"] = start_postgres(instance_folder() / "pg", embedded)
        if not env.get("REDIS_URL"):
            env["REDIS_URL"] = start_redis(instance_folder() / "redis.db", embedded)
        click.echo(f"Adminium is starting on http://127.0.0.1:{port}/", err=True)
        honcho = subprocess.Popen(
            [sys.executable, "-m", "honcho", "start", "-f", procfile, "-p", str(port)],
            env=env,
        )
        try:
            code = honcho.wait()
        except KeyboardInterrupt:
            honcho.send_signal(signal.SIGINT)
            code = honcho.wait()
    finally:
        embedded.stop()
    sys.exit(code)


main.add_command(check_command)
