"""A bounded, thread-safe least-recently-used map: what a process keeps warm (engines by
URL, parsed apps by id) without growing with the number of venues."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LeastRecent(Generic[K, V]):
    """At most `size` values by key; putting one more lets the least recently used go."""

    def __init__(self, size: int) -> None:
        self.size = max(1, size)
        self._values: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value kept for `key` (now the most recently used), or None."""
        with self._lock:
            found = self._values.get(key)
            if found is not None:
                self._values.move_to_end(key)
            return found

    def put(self, key: K, value: V) -> list[V]:
        """Keep `value` for `key`; the values let go of to make room (the caller closes them)."""
        with self._lock:
            return self._keep(key, value)

    def get_or_make(self, key: K, make: Callable[[], V]) -> tuple[V, list[V]]:
        """The value kept for `key`, or one made and kept at once (two threads asking for
        the same key get the same value); with the values let go of to make room."""
        with self._lock:
            found = self._values.get(key)
            if found is not None:
                self._values.move_to_end(key)
                return found, []
            made = make()
            return made, self._keep(key, made)

    def _keep(self, key: K, value: V) -> list[V]:
        self._values[key] = value
        self._values.move_to_end(key)
        dropped = []
        while len(self._values) > self.size:
            dropped.append(self._values.popitem(last=False)[1])
        return dropped

    def forget(self, key: K) -> V | None:
        """Let the value kept for `key` go (not closed: the caller keeps it elsewhere)."""
        with self._lock:
            return self._values.pop(key, None)

    def take_all(self) -> list[V]:
        """Let every value go; them, for the caller to close."""
        with self._lock:
            values = list(self._values.values())
            self._values.clear()
            return values

    def __len__(self) -> int:
        return len(self._values)
