"""Set-aside rows with the spec's three fixes in place: move by hand, fix the field and try
again now, or give a new moment; several rows at once (select, then try again or move).
A fixed row leaves the list; the header's badge counts the rows still aside.

The screen in three parts: `items` (the blueprint, and what one item's fixes show), `lists`
(the list and its badges) and `fixes` (what a fix does, for one row or several).
"""

from __future__ import annotations

from web.screens.set_aside import fixes, lists
from web.screens.set_aside.items import bp

__all__ = ["bp", "fixes", "lists"]
