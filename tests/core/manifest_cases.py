"""Helpers shared by the manifest tests: the examples, and small mutations of them."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
