"""Names as people read them: a manifest's `title` where it gives one, else the name with
underscores as spaces and a capital first letter ("picked_up" reads "Picked up")."""

from __future__ import annotations

from typing import Any

from flask import Flask


def label(name: object, title: str | None = None) -> str:
    """A state, column or table name as a screen shows it."""
    if title:
        return title
    text = str(name).replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def table_label(spec: Any, name: str) -> str:
    """A table's label: its manifest `title` when it gives one."""
    return label(name, getattr(spec, "title", None))


def column_label(column: Any, spec: Any = None) -> str:
    """A column's label: its manifest `title` when it gives one. Takes the column, or its
    name and the table's spec."""
    if isinstance(column, str):
        found = next((c for c in getattr(spec, "columns", ()) if c.ref == column), None)
        return label(column, getattr(found, "title", None))
    return label(column.ref, getattr(column, "title", None))


def state_label(state: object, spec: Any = None) -> str:
    """A state's label: the title the table's `states.titles` gives it, when it does."""
    states = getattr(spec, "states", None)
    titles = getattr(states, "titles", None) or {}
    return label(state, titles.get(str(state)))


def producer_label(model: Any, number: object) -> str:
    """An email's producer in plain words, by its number in the manifest's `outbox.producers`
    (from 1): "Reminder before Pickup at", "When Status becomes Cancelled"."""
    listed = model.outbox.producers if getattr(model, "outbox", None) is not None else []
    try:
        producer = listed[int(str(number)) - 1]
    except (ValueError, IndexError):
        return "Email"
    if producer.kind == "reminder":
        spec = model.tables.get(producer.before.table)
        return f"Reminder before {column_label(producer.before.at, spec)}"
    spec = model.tables.get(producer.table)
    states = getattr(getattr(spec, "states", None), "column", None)
    if producer.on.column == states:
        shown = [state_label(v, spec) for v in producer.on.values or []]
    else:
        shown = [str(v) for v in producer.on.values or []]
    watched = column_label(producer.on.column, spec)
    return f"When {watched} becomes {' or '.join(shown)}" if shown else f"When {watched} changes"


def init_app(app: Flask) -> None:
    """Make the helpers template filters."""
    app.add_template_filter(label, "label")
    app.add_template_filter(table_label, "table_label")
    app.add_template_filter(column_label, "column_label")
    app.add_template_filter(state_label, "state_label")
    app.add_template_filter(producer_label, "producer_label")
