"""`adminium preview`'s word for each effect, as docs/manifest.md's table names it (the
console printed `still-due`, a word missing from its map)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from adminium.preview_commands import print_preview
from core.preview.changes import Changed
from core.preview.preview import Preview

NOW = datetime(2026, 10, 23, 19, 30, tzinfo=UTC)
HOUR = timedelta(hours=1)


@pytest.mark.parametrize(
    ("old", "new", "word"),
    [
        pytest.param(NOW - 2 * HOUR, NOW - HOUR, "still due", id="still_due"),
        pytest.param(NOW + HOUR, NOW - HOUR, "due at once", id="due_at_once"),
        pytest.param(NOW - HOUR, NOW + HOUR, "no longer due", id="no_longer_due"),
        pytest.param(NOW + HOUR, NOW + 2 * HOUR, "later", id="later"),
        pytest.param(NOW + 2 * HOUR, NOW + HOUR, "earlier", id="earlier"),
        pytest.param(NOW + HOUR, None, "no time after", id="no_time_after"),
        pytest.param(None, NOW + HOUR, "a time after", id="a_time_after"),
    ],
)
def test_each_effect_prints_the_docs_word(
    old: datetime | None, new: datetime | None, word: str, capsys: pytest.CaptureFixture[str]
) -> None:
    change = Changed("timed", "takeaway", "orders", "7", "placed → cancelled", old, new)
    print_preview(Preview(NOW, timedelta(days=8), [change]), ZoneInfo("Europe/London"))
    line = capsys.readouterr().out.splitlines()[0]
    assert line.split("\t")[2] == word, line
