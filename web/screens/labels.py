"""Names as people read them, as template filters: the rule is `core.manifest.titles` (a
manifest's `title` where it gives one, else "picked_up" reads "Picked up")."""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask_babel import gettext as _

from core.manifest.titles import column_label, label, state_label, table_label
from web.language import speech

__all__ = ["column_label", "label", "producer_label", "state_label", "table_label"]


def producer_label(model: Any, number: object) -> str:
    """An email's producer in plain words, by its number in the manifest's `outbox.producers`
    (from 1): "Reminder before Pickup at", "When Status becomes Cancelled"."""
    listed = model.outbox.producers if getattr(model, "outbox", None) is not None else []
    try:
        producer = listed[int(str(number)) - 1]
    except (ValueError, IndexError):
        return _("Email")
    if producer.kind == "reminder":
        spec = model.tables.get(producer.before.table)
        return _("Reminder before %(column)s", column=column_label(producer.before.at, spec))
    spec = model.tables.get(producer.table)
    states = getattr(getattr(spec, "states", None), "column", None)
    if producer.on.column == states:
        shown = [state_label(v, spec) for v in producer.on.values or []]
    else:
        shown = [str(v) for v in producer.on.values or []]
    watched = column_label(producer.on.column, spec)
    say = speech()
    if shown:
        return say(
            "When %(column)s becomes %(values)s", column=watched, values=say(" or ").join(shown)
        )
    return say("When %(column)s changes", column=watched)


def init_app(app: Flask) -> None:
    """Make the helpers template filters."""
    app.add_template_filter(label, "label")
    app.add_template_filter(table_label, "table_label")
    app.add_template_filter(column_label, "column_label")
    app.add_template_filter(state_label, "state_label")
    app.add_template_filter(producer_label, "producer_label")
