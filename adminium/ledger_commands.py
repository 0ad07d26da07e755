"""`adminium ledger CONN LEDGER KEY`: an account's entries, and whether its balance adds up.

The opening balance is what the account held before its first entry (that entry's
balance after, less its amount; with no entries, its balance now). The command prints
each entry on the venue's clock, then checks that the balance now equals the opening
balance plus the entries; when it does not, it says where the balance changed outside a
posting and exits 1.
"""

from __future__ import annotations

from decimal import Decimal

import click

from adminium.control_commands import control_plane
from adminium.refusals import Refused
from adminium.sweep_commands import venue_time
from core.ledgers.statement import AccountStatement, Gap
from services.ledgers import account_statement


def _signed(amount: Decimal) -> str:
    return f"+{amount}" if amount > 0 else str(amount)


def _gap(gap: Gap) -> str:
    """Where a change no entry made lies, in words."""
    after = "its first entry" if gap.after is None else f"entry {gap.after}"
    until = "now" if gap.until is None else f"entry {gap.until}"
    if gap.after is None:
        return f"{_signed(gap.amount)} before {until}"
    return f"{_signed(gap.amount)} between {after} and {until}"


def _summary(statement: AccountStatement) -> str:
    return (
        f"balance {statement.balance} = opening {statement.opening}"
        f" + entries {_signed(statement.entered)}"
    )


@click.command("ledger")
@click.argument("connection")
@click.argument("ledger")
@click.argument("key")
def ledger_command(connection: str, ledger: str, key: str) -> None:
    """Print account KEY of LEDGER (app.ledger when several apps keep one) on CONNECTION,
    and check its balance is its opening balance plus its entries."""
    with control_plane() as session:
        store, statement = account_statement(session, connection, ledger, key)
    click.echo(
        f"{store.app.name}.{statement.ledger} account {statement.key}:"
        f" opening balance {statement.opening}"
        + (" (before its first entry)" if statement.entries else " (no entries)")
    )
    for entry in statement.entries:
        click.echo(
            f"  {entry.id:>6}  {venue_time(entry.at, store.zone)}  {entry.kind:<9}"
            f" {_signed(entry.amount):>10} -> {entry.balance}"
            f"  {entry.table} {entry.key} posting {entry.posting}  by {entry.actor}"
        )
    where = "; ".join(_gap(gap) for gap in statement.gaps())
    if statement.adds_up:
        # Changes outside the postings that cancel out leave the sum right: say so anyway.
        click.echo(f"{_summary(statement)}: adds up" + (f" (though {where})" if where else ""))
        return
    raise Refused(
        f"does not add up: {_summary(statement).replace(' = ', ' != ', 1)}"
        f" = {statement.opening + statement.entered}; changed outside its postings: {where}",
        "LEDGER_UNBALANCED",
    )
