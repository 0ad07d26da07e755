"""Names as people read them: a manifest's `title` where it gives one, else the name with
underscores as spaces and a capital first letter ("picked_up" reads "Picked up"). The one
home of the rule: the screens' filters and the words core builds for them both read it."""

from __future__ import annotations

from typing import Any


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


def lower_first(words: str) -> str:
    """A label inside a sentence: "Note" reads "note", "No show" "no show" (an acronym such
    as "VIP" stays)."""
    if len(words) > 1 and words[:2].isupper():
        return words
    return words[:1].lower() + words[1:]
