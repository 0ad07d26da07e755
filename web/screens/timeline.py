"""The pending screen's timeline: how many rows the clock moves in each of the next 24 hours,
by rule, drawn on the server as SVG (no script, no style attribute: the CSP keeps both out;
colours come from classes in static/css/screens.css)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from core.manifest.titles import state_label, table_label
from core.sweep.due_streams import Rule
from core.sweep.pending import Pending

HOURS = 24
"""How many hours the timeline shows, from the current hour on the venue's clock."""
LIMIT = 5000
"""How many timed moves it counts at most (it says so when there are more)."""
SERIES_CLASSES = 5
"""How many rule colours the stylesheet has (`.bar.rule-1` … `.bar.rule-5`)."""
WIDTH, HEIGHT, LEFT, BOTTOM, TOP = 960, 190, 34, 24, 8


@dataclass(frozen=True)
class Bar:
    """One rule's part of one hour's bar: where it is drawn, and what it counts."""

    x: float
    y: float
    width: float
    height: float
    count: int
    series: int
    title: str


@dataclass(frozen=True)
class Timeline:
    """Hourly counts by rule, and the shapes that draw them."""

    start: datetime
    hours: tuple[str, ...]
    series: tuple[str, ...]
    counts: tuple[tuple[int, ...], ...]
    bars: tuple[Bar, ...]
    ticks: tuple[tuple[float, str], ...]
    peak: int
    total: int
    capped: bool
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    base: int = HEIGHT - BOTTOM

    def css(self, series: int) -> str:
        """The class that colours a rule's bars and legend key."""
        return f"rule-{series % SERIES_CLASSES + 1}"


def hour_start(now: datetime, zone: ZoneInfo) -> datetime:
    """The start of the current hour on the venue's clock (a zone half an hour off UTC too)."""
    return now.astimezone(zone).replace(minute=0, second=0, microsecond=0)


def timeline(moves: Sequence[Pending], now: datetime, zone: ZoneInfo, capped: bool) -> Timeline:
    """Count the moves by hour (one already due counts in the current hour) and rule; a row
    set aside is left out, as the clock leaves it alone."""
    start = hour_start(now, zone)
    names: list[str] = []
    grid: list[list[int]] = []
    for move in moves:
        if move.set_aside:
            continue
        hour = max(0, int((move.moment - start).total_seconds() // 3600))
        if hour >= HOURS:
            continue
        name = series_name(move.rule)
        if name not in names:
            names.append(name)
            grid.append([0] * HOURS)
        grid[names.index(name)][hour] += 1
    labels = tuple(
        (start + timedelta(hours=h)).astimezone(zone).strftime("%H:%M") for h in range(HOURS)
    )
    totals = [sum(row[h] for row in grid) for h in range(HOURS)]
    peak = max(totals, default=0)
    return Timeline(
        start,
        labels,
        tuple(names),
        tuple(tuple(row) for row in grid),
        tuple(_bars(grid, names, labels, peak)),
        tuple((LEFT + _slot() * h + _slot() / 2, labels[h]) for h in range(0, HOURS, 3)),
        peak,
        sum(totals),
        capped,
    )


def series_name(rule: Rule) -> str:
    """A rule as the chart's legend names it, by its titles: "venue · Orders rule 1: Placed
    → Cancelled"."""
    spec = rule.store.spec(rule.table)
    app = rule.store.app.title or rule.app
    states = f"{state_label(rule.timed.from_, spec)} → {state_label(rule.timed.to, spec)}"
    return f"{app} · {table_label(spec, rule.table)} rule {rule.number}: {states}"


def _slot() -> float:
    return (WIDTH - LEFT) / HOURS


def _bars(grid: list[list[int]], names: list[str], labels: tuple[str, ...], peak: int) -> list[Bar]:
    """Each rule's count stacked in its hour, scaled so the busiest hour fills the height."""
    bars: list[Bar] = []
    room = HEIGHT - BOTTOM - TOP
    for hour in range(HOURS):
        base = float(HEIGHT - BOTTOM)
        for series, row in enumerate(grid):
            count = row[hour]
            if not count:
                continue
            height = room * count / peak
            base -= height
            title = f"{labels[hour]}: {count} × {names[series]}"
            x = LEFT + _slot() * hour + 2
            bars.append(Bar(x, base, _slot() - 4, height, count, series, title))
    return bars
