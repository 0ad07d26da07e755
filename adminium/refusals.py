"""The console's one contract for what goes wrong (docs/errors.md, "The console").

- A refusal (or a check that found something wrong) prints one line on stderr,
  `Error: <sentence> (<CODE>)`, the code from docs/errors.md's table, and exits 1. Lines
  that say more (a manifest's sentences, an import's refused rows) follow it, indented.
- A usage error (an option or argument the command cannot take) prints one line
  `Error: <click's sentence, naming the option as typed> (see 'adminium … --help')`
  and exits 2.

`adminium.cli` applies it to every command: an `AdminiumError` from the layers below,
a database error, a `Refused` of the console's own, and click's usage errors.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from typing import IO, Any

import click

#: A contract line's code: one code, or several for several refused rows.
CODES = re.compile(r"\(([A-Z_]+(?:, [A-Z_]+)*)\)$")


class Refused(click.ClickException):
    """A refusal of the console's own, with its code and any lines that say more."""

    exit_code = 1

    def __init__(self, message: str, code: str, lines: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.code = code
        self.lines = list(lines)

    def show(self, file: IO[Any] | None = None) -> None:
        """`Error: <sentence> (<CODE>)`, then the lines that say more, indented."""
        out = file or sys.stderr
        click.echo(f"Error: {one_line(self.message)} ({self.code})", file=out)
        for line in self.lines:
            click.echo(f"  {one_line(line)}", file=out)


def one_line(text: str) -> str:
    """A sentence on one line: a database's multi-line message joined with spaces."""
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


def usage_line(error: click.UsageError) -> str:
    """A usage error as one line naming the option (or argument) as typed, and where the
    command's usage is."""
    path = error.ctx.command_path if error.ctx is not None else "adminium"
    return f"Error: {one_line(error.format_message())} (see '{path} --help')"


def disagree_lines(details: dict[str, Any]) -> list[str]:
    """What a refusal of tables that cannot serve a manifest says after its line: each
    sentence, what the migration refused, the plan, and what to do
    (`services.errors.TablesDisagree`)."""
    lines = list(details["sentences"])
    lines += [f"not migrated: {refusal}" for refusal in details["refusals"]]
    if details["plan"]:
        lines += ["-- the plan:", *details["plan"]]
    return [*lines, details["hint"]]


def from_error(error: BaseException) -> Refused | None:
    """A refusal from the layers below as the console prints it, or None for a fault.

    An `AdminiumError` keeps its code (a manifest refusal its sentences); a database
    error is `DATABASE_REFUSED` with the database's first line.
    """
    from core.basics.errors import AdminiumError

    if isinstance(error, AdminiumError):
        refusals = error.details.get("refusals") if error.code == "MANIFEST_REFUSED" else None
        if refusals:
            lines = [f"{r['where']}: {r['sentence']}" for r in refusals]
            return Refused("the manifest check refused the app", error.code, lines)
        if error.code == "TABLES_DISAGREE":
            return Refused(error.message, error.code, disagree_lines(error.details))
        return Refused(error.message, error.code)
    exc = sys.modules.get("sqlalchemy.exc")
    if exc is not None and isinstance(error, exc.SQLAlchemyError):
        from services.errors import first_line

        return Refused(f"the database refused: {first_line(error)}", "DATABASE_REFUSED")
    return None
