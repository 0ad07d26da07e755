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
    """A table's label: its manifest title, when the manifest gives tables one."""
    return label(name, getattr(spec, "title", None))


def init_app(app: Flask) -> None:
    """Make the helpers template filters."""
    app.add_template_filter(label, "label")
    app.add_template_filter(table_label, "table_label")
