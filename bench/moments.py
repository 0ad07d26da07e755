"""Moments per second: `adminium moment` on 10,000 objects, beside a baseline in the same run.

Prints one JSON object per line:
- in-process, a plain column-only moment (the baseline) vs the full no-show moment
  (a date, a setting's time, a calendar-day shift) vs a closing-hour moment;
- through the command (`adminium moment -`, a fresh process), the same 10,000 no-show
  objects, and the same command on an empty array (its start-up alone).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adminium.moment_command import answer_all
from bench.common import arguments

OBJECTS = 10_000
ZONES = ["Europe/London", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", None]
HOURS = {"table": "opening_hours", "weekday": "weekday", "open": "open"}
HOURS |= {"opens": "opens", "closes": "closes"}
WEEK = [
    {"weekday": day, "open": day != "mon", "opens": "11:00", "closes": "21:00"}
    for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
]


def objects(kind: str) -> list[dict[str, Any]]:
    """OBJECTS objects of one kind, on days spread over eleven years and five zones."""
    made = []
    for number in range(OBJECTS):
        day = date(2020, 1, 1) + timedelta(days=number % 4000)
        zone = ZONES[number % len(ZONES)]
        if kind == "column":
            moment: dict[str, Any] = {"column": "at"}
            row: dict[str, Any] = {"at": f"{day.isoformat()}T12:30:00+01:00"}
        elif kind == "no-show":
            moment = {"column": "arrive", "plus": {"days": 1}}
            moment["time"] = {"table": "settings", "column": "no_show_at"}
            row = {"arrive": day.isoformat()}
        else:
            moment = {"column": "pickup_at", "time": {"hours": HOURS, "edge": "closes"}}
            row = {"pickup_at": f"{day.isoformat()}T12:30:00+01:00"}
        tables = {"settings": [{"no_show_at": "10:00"}], "opening_hours": WEEK}
        made.append({"zone": zone, "moment": moment, "row": row, "tables": tables})
    return made


def report(name: str, seconds: float, count: int = OBJECTS) -> None:
    """One figure, as a JSON line."""
    line = {"bench": "moments", "case": name, "objects": count, "seconds": round(seconds, 3)}
    line["per_second"] = round(count / seconds) if count else None
    print(json.dumps(line), flush=True)


def in_process(kind: str) -> None:
    """Parse, validate and read every object in this process, as the command does."""
    text = json.dumps(objects(kind))
    started = time.perf_counter()
    lines = list(answer_all(text))
    seconds = time.perf_counter() - started
    assert len(lines) == OBJECTS and not any(line.startswith("error") for line in lines)
    report(f"in-process {kind}", seconds)


def through_the_command(items: list[dict[str, Any]], name: str) -> float:
    """The whole command in a fresh process, start-up included; returns its seconds."""
    command = [str(Path(sys.executable).with_name("adminium")), "moment", "-"]
    started = time.perf_counter()
    done = subprocess.run(command, input=json.dumps(items), capture_output=True, text=True)
    seconds = time.perf_counter() - started
    assert done.returncode == 0, done.stdout[-500:] + done.stderr[-500:]
    assert len(done.stdout.splitlines()) == len(items)
    report(name, seconds, len(items))
    return seconds


def main() -> None:
    """Run every case once, baseline first."""
    arguments(__doc__)
    for kind in ("column", "no-show", "closing-hour"):
        in_process(kind)
    start_up = through_the_command([], "command start-up (empty array)")
    whole = through_the_command(objects("no-show"), "command no-show")
    report("command no-show, start-up taken off", whole - start_up)


if __name__ == "__main__":
    main()
