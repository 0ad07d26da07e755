"""Helpers shared by the manifest tests: the examples, and small mutations of them."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.manifest.check import check_manifest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_NAMES = ("takeaway", "tickets", "hotel")

Mutation = Callable[[dict[str, Any]], None]


def example(name: str) -> dict[str, Any]:
    """A fresh copy of an example manifest."""
    return copy.deepcopy(_loaded(name))


_CACHE: dict[str, dict[str, Any]] = {}


def _loaded(name: str) -> dict[str, Any]:
    if name not in _CACHE:
        _CACHE[name] = json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))
    return _CACHE[name]


def node(doc: Any, *path: str | int) -> Any:
    """The value at a path of keys and list positions."""
    for part in path:
        doc = doc[part]
    return doc


def put(*path: str | int, value: Any) -> Mutation:
    """A mutation that sets the value at a path."""

    def mutate(doc: dict[str, Any]) -> None:
        node(doc, *path[:-1])[path[-1]] = copy.deepcopy(value)

    return mutate


def drop(*path: str | int) -> Mutation:
    """A mutation that deletes the key (or list entry) at a path."""

    def mutate(doc: dict[str, Any]) -> None:
        del node(doc, *path[:-1])[path[-1]]

    return mutate


def append(*path: str | int, value: Any) -> Mutation:
    """A mutation that appends to the list at a path."""

    def mutate(doc: dict[str, Any]) -> None:
        node(doc, *path).append(copy.deepcopy(value))

    return mutate


def both(*mutations: Mutation) -> Mutation:
    """Several mutations in turn."""

    def mutate(doc: dict[str, Any]) -> None:
        for mutation in mutations:
            mutation(doc)

    return mutate


ORDERS = ("tables", "orders", "states")
TICKETS = ("tables", "tickets", "states")
STAYS = ("tables", "stays", "states")
CHECK_IN_AFTER = (*TICKETS, "moves", "valid", 1, "requires", "time", "after")
LEAD = ("outbox", "producers", 0, "before", "lead")
NEVER_PASSES = {
    "to": "valid",
    "requires": {"time": {"after": {"column": "offer_until", "plus": {"minutes": 30}}}},
}
Expected = list[tuple[str, str]]


def refused(name: str, mutate: Mutation) -> Expected:
    """The refusals of an example after one mutation, as (where, sentence) pairs."""
    doc = example(name)
    mutate(doc)
    return [(r.where, r.sentence) for r in check_manifest(doc)]
