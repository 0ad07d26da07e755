"""A manifest's automations: rules that post a table's changes to a webhook of the
connection."""

from __future__ import annotations

from core.manifest.base import Model, Name
from core.manifest.refs import ValueWatch


class Automation(Model):
    """A rule that watches a table and posts each change it hears to a webhook of the
    connection (its URL and secret are kept in the control plane, never here); `on` left
    out: every change of the table; sample rows only with `samples`."""

    name: Name
    table: Name
    on: ValueWatch | None = None
    webhook: Name
    samples: bool = False
