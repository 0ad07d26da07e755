"""Rules for automations (WHAT-A-MOVE-SETS-OFF.md: Automations): each has a name of its
own, watches a table the app has, and a column and values that table can hold.

The webhook an automation names is kept per connection in the control plane, so the
manifest check cannot know it: a delivery to a webhook the connection lacks is tried
again with growing waits (the webhook may be added meanwhile), then failed, on the
Deliveries screen.
"""

from __future__ import annotations

from core.manifest.ledger_rules import WatchCheck
from core.manifest.lookup import Lookup
from core.manifest.moment_rules import Out, no_table
from core.manifest.refusal import Refusal, where


def check_automations(lk: Lookup, out: Out, check_watch: WatchCheck) -> None:
    """The app's automations: unique names, real tables, real columns and values."""
    seen: dict[str, int] = {}
    for index, automation in enumerate(lk.app.automations or ()):
        at = ("automations", index)
        first = seen.get(automation.name)
        if first is not None:
            sentence = (
                f'"{automation.name}" is already an automation (automations[{first}]):'
                " give each its own name"
            )
            out.append(Refusal(where(*at, "name"), sentence))
        seen.setdefault(automation.name, index)
        table = lk.table(automation.table)
        if table is None:
            out.append(Refusal(where(*at, "table"), no_table(automation.table)))
            continue
        if automation.on is not None:
            check_watch(out, (*at, "on"), automation.table, table, automation.on)
