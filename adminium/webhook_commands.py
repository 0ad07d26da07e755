"""Console commands for webhooks: the endpoints a connection's automations post to.

`adminium webhook add CONN NAME URL` prints the new secret once (the receiver verifies
with it) and refuses a URL of a loopback, private or link-local address unless
`ADMINIUM_WEBHOOKS_ALLOW_PRIVATE=1`; `list` shows names and URLs with any credential in them
hidden; `remove` drops one. A secret is never printed again, nor logged.
"""

from __future__ import annotations

import click

from adminium.control_commands import control_plane
from services import webhooks


@click.group("webhook")
def webhook_group() -> None:
    """Webhooks: where a connection's automations post their events."""


@webhook_group.command("add")
@click.argument("connection")
@click.argument("name")
@click.argument("url")
def webhook_add(connection: str, name: str, url: str) -> None:
    """Add a webhook NAME posting to URL; prints its signing secret once."""
    with control_plane() as session:
        added = webhooks.add_webhook(session, connection, name, url)
        click.echo(f"webhook {name} added on connection {connection}: {added.webhook.safe_url}")
        if added.note:
            click.echo(f"note: {added.note}", err=True)
        click.echo(f"signing secret (shown once, give it to the receiver): {added.secret}")


@webhook_group.command("list")
@click.argument("connection")
def webhook_list(connection: str) -> None:
    """List a connection's webhooks (no secrets; credentials in URLs hidden)."""
    with control_plane() as session:
        found = webhooks.list_webhooks(session, connection)
        if not found:
            click.echo(f"no webhooks yet: adminium webhook add {connection} NAME URL")
        for webhook in found:
            click.echo(f"{webhook.name}\t{webhook.safe_url}")


@webhook_group.command("remove")
@click.argument("connection")
@click.argument("name")
def webhook_remove(connection: str, name: str) -> None:
    """Remove a webhook; deliveries naming it wait (and are tried again) until one is added."""
    with control_plane() as session:
        webhooks.remove_webhook(session, connection, name)
        click.echo(f"webhook {name} removed from connection {connection}")
