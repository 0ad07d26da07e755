"""`adminium preview`: what the clock will do differently after a settings or hours change,
and the printout `app add --replace --preview` shares. Nothing is saved."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import click

from adminium.control_commands import INSTANT, control_plane
from core.preview.preview import Preview
from core.time.words import instant_words
from services.preview import connection_zone, parse_set, preview_values

_EFFECT_WORDS = {
    "due-at-once": "due at once",
    "set-aside": "due, but set aside while its hour runs",
    "no-longer-due": "no longer due",
    "still-due": "still due",
    "later": "later",
    "earlier": "earlier",
    "no-time": "no time after",
    "new-time": "a time after",
}


def _when(instant: datetime | None, zone: ZoneInfo) -> str:
    if instant is None:
        return "no time"
    local = instant.astimezone(zone)
    return f"{instant_words(instant, zone)} ({local:%Y-%m-%d %H:%M %Z})"


def print_preview(preview: Preview, zone: ZoneInfo) -> None:
    """One line per change (soonest first), then the summary line."""
    for change in preview.changes:
        effect = _EFFECT_WORDS.get(change.effect(preview.now), change.effect(preview.now))
        if change.kind == "reminder":
            effect = {"due at once": "sent at once", "no longer due": "no longer sent"}.get(
                effect, f"sent {effect}"
            )
        click.echo(
            f"{change.table} {change.key}\t{change.what}\t{effect}\t"
            f"{_when(change.old, zone)} → {_when(change.new, zone)}\t"
            f"was: {change.old_read}\tnow: {change.new_read}"
        )
    if preview.more:
        click.echo("(more changes than listed)")
    click.echo(preview.summary(zone))


@click.command("preview")
@click.argument("connection")
@click.option(
    "--set",
    "sets",
    multiple=True,
    required=True,
    help="TABLE.COLUMN=VALUE, TABLE[KEY].COLUMN=VALUE or TABLE[COLUMN=VALUE].COLUMN=VALUE.",
)
@click.option("--at", type=INSTANT, default=None, help="Read as of this instant (ISO, offset).")
def preview_command(connection: str, sets: tuple[str, ...], at: datetime | None) -> None:
    """What the clock would do differently with these values saved (nothing is saved)."""
    now = at or datetime.now(UTC)
    with control_plane() as session:
        changes = [parse_set(text) for text in sets]
        preview = preview_values(session, connection, changes, now=now)
        zone = connection_zone(session, connection)
        session.rollback()
    print_preview(preview, zone)
