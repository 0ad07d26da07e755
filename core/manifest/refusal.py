"""A refusal of the manifest check: where it is, and the sentence a person reads."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_PLAIN = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Refusal:
    """One thing the check refuses: `where` like `tables.orders.states.timed[0].at`."""

    where: str
    sentence: str

    def __str__(self) -> str:
        return f"{self.where}: {self.sentence}"

    def printable(self) -> Refusal:
        """The refusal with any lone surrogate it echoes written as JSON writes it (`\\ud800`).

        A lone surrogate is valid in JSON text but is no character: printed, or sent as
        UTF-8, it would fail where the refusal is shown rather than be read.
        """
        return Refusal(escape_surrogates(self.where), escape_surrogates(self.sentence))


def escape_surrogates(text: str) -> str:
    """Text with each lone surrogate written as its JSON escape, so it encodes as UTF-8."""
    return _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def where(*parts: str | int) -> str:
    """A location from path parts: names joined by dots, list positions in brackets."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _PLAIN.match(part):
            text += f".{part}" if text else part
        else:
            quoted = json.dumps(part, ensure_ascii=False)
            text += f".{quoted}" if text else quoted
    return text or "manifest"


def shown(value: Any, limit: int = 40) -> str:
    """A value as the manifest author wrote it, cut short when long."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def listing(names: list[str] | tuple[str, ...] | set[str]) -> str:
    """Names for a sentence: `a, b, c`, or `(none)`."""
    return ", ".join(names) if names else "(none)"
