"""What manifest parts read besides the row: linked rows by foreign key, settings and hours
tables. The pipeline reads exactly these inside a write."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from core.manifest.model import Moment
from core.manifest.refs import HoursRef, SettingCondition, SettingRef


@dataclass(frozen=True)
class Reads:
    """What a set of rules reads besides the row: linked rows by foreign key, and tables."""

    vias: frozenset[str]
    tables: frozenset[str]


def reads_of(parts: Iterable[Any]) -> Reads:
    """The foreign keys (`via`) and the settings or hours tables some manifest parts read."""
    vias: set[str] = set()
    tables: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, Moment) and node.via is not None:
            vias.add(node.via)
        if isinstance(node, SettingRef | SettingCondition | HoursRef):
            tables.add(node.table)
        elif isinstance(node, BaseModel):
            for name in type(node).model_fields:
                walk(getattr(node, name))
        elif isinstance(node, list | tuple):
            for value in node:
                walk(value)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)

    for part in parts:
        walk(part)
    return Reads(frozenset(vias), frozenset(tables))


class ReadsCache:
    """`reads_of` remembered by the parts' identity: a manifest never changes once loaded."""

    def __init__(self) -> None:
        self._found: dict[tuple[int, ...], tuple[tuple[Any, ...], Reads]] = {}

    def __call__(self, parts: Sequence[Any]) -> Reads:
        key = tuple(map(id, parts))
        hit = self._found.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], parts, strict=True)):
            return hit[1]
        reads = reads_of(parts)
        # The parts are kept with their answer, so no id is reused while it is remembered.
        self._found[key] = (tuple(parts), reads)
        return reads
