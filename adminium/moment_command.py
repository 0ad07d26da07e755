"""`adminium moment FILE`: try a moment before you ship it.

FILE (a path, or - for standard input) holds one JSON object, or an array of them:
`zone`, `moment`, `row`, `linked`, `tables`. One line per object goes to standard
output, in order: the instant on the venue's clock, `no value`, or `error: <reason>`.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from datetime import date, datetime
from typing import IO, Any

import click
from pydantic import ValidationError

from adminium.refusals import Refused
from core.manifest.model import Moment
from core.time.clock import venue_zone
from core.time.moments import MomentContext, MomentValueError, read_moment

NO_VALUE = "no value"
KEYS = {"zone", "moment", "row", "linked", "tables"}

_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATE_TIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?"
    r"(Z|[+-][0-9]{2}:?[0-9]{2})"
)


class Malformed(ValueError):
    """An object the command cannot read; its message is the one-line reason."""


@click.command("moment")
@click.argument("file", type=click.File("r", encoding="utf-8"))
def moment_command(file: IO[str]) -> None:
    """Read the moments in FILE (a path, or - for stdin): one line each, the instant or no value."""
    lines = list(answer_all(file.read()))
    sys.stdout.write("".join(f"{line}\n" for line in lines))
    sys.stdout.flush()
    failed = sum(line.startswith("error: ") for line in lines)
    if failed:
        raise Refused(f"{failed} of {len(lines)} moments could not be read", "INVALID_VALUE")


def answer_all(text: str) -> Iterator[str]:
    """One output line per object in the JSON text."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        yield f"error: the file is not JSON: {error}"
        return
    objects: Iterable[Any] = data if isinstance(data, list) else [data]
    for item in objects:
        yield answer(item)


def answer(item: Any) -> str:
    """The output line for one object: the instant, `no value`, or `error: <reason>`."""
    try:
        moment, ctx = read_object(item)
        at = read_moment(moment, ctx)
    except (Malformed, MomentValueError) as error:
        return f"error: {one_line(str(error))}"
    if at is None:
        return NO_VALUE
    return at.astimezone(ctx.zone).isoformat(timespec="seconds")


def read_object(item: Any) -> tuple[Moment, MomentContext]:
    """The moment and its context from one JSON object; Malformed when it cannot be read."""
    if not isinstance(item, dict):
        raise Malformed("each moment to try is a JSON object")
    unknown = sorted(set(item) - KEYS)
    if unknown:
        raise Malformed(f"unknown key {unknown[0]!r}; the keys are {', '.join(sorted(KEYS))}")
    for key in ("moment", "row"):
        if key not in item:
            raise Malformed(f"{key} is missing")
    try:
        moment = Moment.model_validate(item["moment"])
    except ValidationError as error:
        raise Malformed(f"moment: {validation_reason(error)}") from error
    zone_name = item.get("zone")
    if zone_name is not None and not isinstance(zone_name, str):
        raise Malformed('"zone" is an IANA zone name such as "Europe/London", or null')
    try:
        zone = venue_zone(zone_name)
    except ValueError as error:
        raise Malformed(str(error)) from error
    row = read_row(item.get("row"), "row")
    linked = {
        via: None if linked is None else read_row(linked, f"linked.{via}")
        for via, linked in read_mapping(item.get("linked", {}), "linked").items()
    }
    tables = {
        name: read_rows(rows, f"tables.{name}")
        for name, rows in read_mapping(item.get("tables", {}), "tables").items()
    }
    return moment, MomentContext(row=row, zone=zone, linked=linked, tables=tables)


def read_mapping(value: Any, where: str) -> Mapping[str, Any]:
    """A JSON object, or Malformed."""
    if not isinstance(value, dict):
        raise Malformed(f"{where} is not a JSON object")
    return value


def read_rows(value: Any, where: str) -> list[dict[str, Any]]:
    """A JSON array of rows, each converted."""
    if not isinstance(value, list):
        raise Malformed(f"{where} is not a JSON array of rows")
    return [read_row(row, f"{where}[{number}]") for number, row in enumerate(value)]


def read_row(value: Any, where: str) -> dict[str, Any]:
    """A row: each value as its column would hold it (dates, date-times, the rest as is)."""
    return {
        column: read_value(cell, f"{where}.{column}")
        for column, cell in read_mapping(value, where).items()
    }


def read_value(value: Any, where: str) -> Any:
    """`YYYY-MM-DD` -> date; ISO 8601 date-time with an offset or Z -> aware datetime."""
    if not isinstance(value, str) or len(value) < 10 or value[4] != "-":
        # Cheap test first: most cells (times, names, numbers) are no date.
        return value
    try:
        if _DATE.fullmatch(value):
            return date.fromisoformat(value)
        if _DATE_TIME.fullmatch(value):
            return datetime.fromisoformat(value)
    except ValueError as error:
        raise Malformed(f"{where}: {value!r} is no date or time ({error})") from error
    return value


def validation_reason(error: ValidationError) -> str:
    """A pydantic error on one line: each problem's place and message."""
    parts = []
    for problem in error.errors():
        place = ".".join(str(part) for part in problem["loc"] if not str(part).startswith("~"))
        parts.append(f"{place}: {problem['msg']}" if place else problem["msg"])
    return "; ".join(parts)


def one_line(text: str) -> str:
    """A reason squeezed onto one line."""
    return " ".join(text.split())
