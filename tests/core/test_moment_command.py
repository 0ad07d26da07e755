"""`adminium moment FILE`: the engine's black-box interface for manifest authors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from adminium.cli import main
from adminium.moment_command import moment_command

HOURS = {"table": "opening_hours", "weekday": "weekday", "open": "open"}
HOURS |= {"opens": "opens", "closes": "closes"}
WEEK = [
    {"weekday": "mon", "open": False, "opens": "11:00", "closes": "21:00"},
    {"weekday": "fri", "open": True, "opens": "11:00", "closes": "21:00"},
]
# The spec's example: a stay due Saturday 24 October 2026 in London. One calendar day
# later at the setting's 10:00 is Sunday the 25th at 10:00; the clocks went back at 02:00
# BST that night, so it is 10:00 GMT.
NO_SHOW = {
    "zone": "Europe/London",
    "moment": {
        "column": "arrive",
        "time": {"table": "settings", "column": "no_show_at"},
        "plus": {"days": 1},
    },
    "row": {"arrive": "2026-10-24"},
    "linked": {"event_id": {"doors_at": "2026-12-04T19:00:00+01:00"}},
    "tables": {
        "settings": [{"no_show_at": "10:00"}],
        "opening_hours": [{"weekday": "fri", "open": True, "opens": "11:00", "closes": "21:00"}],
    },
}
NO_SHOW_LINE = "2026-10-25T10:00:00+00:00"
# Friday 5 June 2026 (1 June is a Monday): a 12:30 pickup is cancelled at 21:00 BST.
FRIDAY_PICKUP = {
    "zone": "Europe/London",
    "moment": {"column": "pickup_at", "time": {"hours": HOURS, "edge": "closes"}},
    "row": {"pickup_at": "2026-06-05T12:30:00+01:00"},
    "tables": {"opening_hours": WEEK},
}
FRIDAY_PICKUP_LINE = "2026-06-05T21:00:00+01:00"
# Monday 30 March 2026, 15:00 BST (14:00Z); 48 real hours earlier is 14:00Z on Saturday
# the 28th, before London sprang forward: 14:00 GMT on the venue's clock.
BEFORE_ARRIVAL = {
    "zone": "Europe/London",
    "moment": {"column": "arrive", "time": "15:00", "minus": {"hours": 48}},
    "row": {"arrive": "2026-03-30"},
}
BEFORE_ARRIVAL_LINE = "2026-03-28T14:00:00+00:00"
# Doors 19:00 +01:00 on Friday 4 December 2026 = 18:00Z; half an hour before is 17:30Z,
# 17:30 GMT in London in December.
DOORS = {
    "zone": "Europe/London",
    "moment": {"via": "event_id", "column": "doors_at", "minus": {"minutes": 30}},
    "row": {"event_id": 7},
    "linked": {"event_id": {"doors_at": "2026-12-04T19:00:00+01:00"}},
}
DOORS_LINE = "2026-12-04T17:30:00+00:00"
DOORS_MISSING = {**DOORS, "linked": {"event_id": None}}
GOOD = [NO_SHOW, FRIDAY_PICKUP, BEFORE_ARRIVAL, DOORS, DOORS_MISSING]
GOOD_LINES = [NO_SHOW_LINE, FRIDAY_PICKUP_LINE, BEFORE_ARRIVAL_LINE, DOORS_LINE, "no value"]


def run(data: Any, *, raw: str | None = None) -> Result:
    """The command on standard input."""
    text = raw if raw is not None else json.dumps(data)
    return CliRunner().invoke(moment_command, ["-"], input=text)


def test_single_object_prints_one_line() -> None:
    result = run(NO_SHOW)
    assert result.exit_code == 0
    assert result.stdout == f"{NO_SHOW_LINE}\n"


def test_array_prints_one_line_per_object_in_order() -> None:
    result = run(GOOD)
    assert result.exit_code == 0
    assert result.stdout.splitlines() == GOOD_LINES


def test_reads_a_file_by_its_path(tmp_path: Path) -> None:
    path = tmp_path / "moments.json"
    path.write_text(json.dumps(GOOD), encoding="utf-8")
    result = CliRunner().invoke(moment_command, [str(path)])
    assert result.exit_code == 0
    assert result.stdout.splitlines() == GOOD_LINES


def test_empty_array_prints_nothing() -> None:
    result = run([])
    assert (result.exit_code, result.stdout) == (0, "")


@pytest.mark.parametrize(
    "zone", [{}, {"zone": None}, {"zone": ""}], ids=["absent", "null", "empty"]
)
def test_no_zone_reads_utc(zone: dict[str, Any]) -> None:
    # 10:00 on Friday 5 June 2026 on UTC's clock.
    item = {"moment": {"column": "day", "time": "10:00"}, "row": {"day": "2026-06-05"}, **zone}
    result = run(item)
    assert (result.exit_code, result.stdout) == (0, "2026-06-05T10:00:00+00:00\n")


def test_kept_time_with_seconds_prints_them() -> None:
    # 09:30:15 in Kolkata (UTC+05:30, no daylight saving) on 5 June 2026.
    item = {
        "zone": "Asia/Kolkata",
        "moment": {"column": "day", "time": {"column": "at"}},
        "row": {"day": "2026-06-05", "at": "9:30:15"},
    }
    assert run(item).stdout == "2026-06-05T09:30:15+05:30\n"


MALFORMED = [
    pytest.param([1, 2], "each moment to try is a JSON object", id="not-an-object"),
    pytest.param({"row": {}}, "moment is missing", id="no-moment"),
    pytest.param({"moment": {"column": "a"}}, "row is missing", id="no-row"),
    pytest.param({**NO_SHOW, "zon": "UTC"}, "unknown key 'zon'", id="unknown-key"),
    pytest.param({**NO_SHOW, "zone": "Mars/Olympus"}, "unknown time zone", id="unknown-zone"),
    pytest.param({**NO_SHOW, "zone": 1}, "IANA zone name", id="zone-not-text"),
    pytest.param(
        {**NO_SHOW, "moment": {"column": "arrive", "plus": {"weeks": 1}}},
        "moment: plus.weeks",
        id="moment-shape",
    ),
    pytest.param({**NO_SHOW, "row": {"arrive": "2026-02-30"}}, "row.arrive", id="no-such-day"),
    pytest.param(
        {**NO_SHOW, "row": {"arrive": "2026-10-24T10:00"}},
        "with an offset",
        id="date-time-without-offset",
    ),
    pytest.param({**NO_SHOW, "tables": {"settings": {}}}, "tables.settings", id="table-not-rows"),
    pytest.param({**NO_SHOW, "linked": []}, "linked is not a JSON object", id="linked-not-object"),
]


@pytest.mark.parametrize(("bad", "reason"), MALFORMED)
def test_malformed_object_among_good_ones(bad: Any, reason: str) -> None:
    result = run([NO_SHOW, bad, FRIDAY_PICKUP])
    assert result.exit_code == 1
    first, error, last = result.stdout.splitlines()
    assert (first, last) == (NO_SHOW_LINE, FRIDAY_PICKUP_LINE)
    assert error.startswith("error: ")
    assert reason in error


def test_every_error_is_one_line() -> None:
    # A moment with several mistakes at once still reports on a single line.
    bad = {"moment": {"column": "Bad Name", "time": 10, "plus": {"hours": "x"}}, "row": {}}
    result = run([bad, NO_SHOW])
    assert result.exit_code == 1
    assert len(result.stdout.splitlines()) == 2
    assert result.stdout.splitlines()[1] == NO_SHOW_LINE


def test_file_that_is_not_json_is_one_error_line() -> None:
    result = run(None, raw='{"zone": ')
    assert result.exit_code == 1
    assert result.stdout.startswith("error: the file is not JSON")
    assert len(result.stdout.splitlines()) == 1


def test_moment_is_a_command_of_adminium() -> None:
    result = CliRunner().invoke(main, ["moment", "-"], input=json.dumps(NO_SHOW))
    assert (result.exit_code, result.stdout) == (0, f"{NO_SHOW_LINE}\n")


@pytest.mark.parametrize("server_zone", ["Pacific/Kiritimati", "America/Adak"])
def test_installed_command_on_a_far_off_server_zone(server_zone: str) -> None:
    # The server's own zone (UTC+14, or UTC-10/-9) must change nothing: same lines, and
    # only those lines on standard output.
    bad = {"moment": {"column": "a"}, "row": {"a": "yesterday"}}
    adminium = Path(sys.executable).with_name("adminium")
    done = subprocess.run(
        [str(adminium), "moment", "-"],
        input=json.dumps([*GOOD, bad]),
        capture_output=True,
        text=True,
        env={**os.environ, "TZ": server_zone},
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    *lines, error = done.stdout.splitlines()
    assert lines == GOOD_LINES
    assert error.startswith("error: column 'a' holds the text 'yesterday'")
