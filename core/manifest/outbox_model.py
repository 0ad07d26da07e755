"""A manifest's outbox: its settings table and its producers, the emails it queues
(a `Reminder` a lead before a row's moment, a `Message` when a column takes a value).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from core.manifest.base import SHIFT_MOST, Model, Name, WallTime
from core.manifest.refs import ValueWatch


class OutboxSettings(Model):
    """The app's one-row settings table."""

    table: Name


class LeadFallback(Model):
    """Where a lead is read when the linked row gives none: a setting."""

    table: Name
    column: Name


class Lead(Model):
    """How long before the moment a reminder goes (hours), and optionally at which wall time."""

    via: Name | None = None
    table: Name
    column: Name
    fallback: LeadFallback | None = None
    max: int | None = Field(default=None, ge=1, le=SHIFT_MOST["hours"])
    """The longest lead, in hours: at most 87,600 (3,650 days, as a shift)."""
    at: WallTime | None = None


class Before(Model):
    """The moment a reminder leads up to: a timestamptz column of `table`."""

    table: Name
    at: Name
    lead: Lead


class Reminder(Model):
    """An email sent a lead of hours before a row's moment."""

    kind: Literal["reminder"]
    link: Name | None = None
    before: Before
    to: Name | None = None
    subject: str | None = None
    body: str | None = None
    states: list[Name] | None = None
    """The states of `before.table` in which a row is reminded; without it, every state
    with a move out of it (a row in a final state is never reminded)."""


class Message(Model):
    """An email queued when a row's column takes one of the watched values."""

    kind: Literal["message"]
    table: Name
    on: ValueWatch
    to: Name
    subject: str = Field(min_length=1)
    body: str = Field(min_length=1)


def _producer_tag(value: Any) -> str | None:
    if isinstance(value, Reminder | Message):
        return f"~{value.kind}"
    if isinstance(value, dict) and value.get("kind") in ("reminder", "message"):
        return f"~{value['kind']}"
    return None


Producer = Annotated[
    Annotated[Reminder, Tag("~reminder")] | Annotated[Message, Tag("~message")],
    Discriminator(
        _producer_tag,
        custom_error_type="producer",
        custom_error_message='a producer\'s "kind" is "reminder" or "message"',
    ),
]


class Outbox(Model):
    """The app's emails: its settings table and its producers."""

    settings: OutboxSettings | None = None
    producers: list[Producer] = Field(default_factory=list)
