"""Small words the screens show for values they read: an amount with the locale's
separators, an email's or a delivery's status, a sweep's outcome (template globals)."""

from __future__ import annotations

from decimal import Decimal

from flask import Flask

from web.language import speech


def amount_words(amount: object) -> str:
    """An amount as the reader's locale writes numbers: `12.5`, `12,5`, `1.234`."""
    if isinstance(amount, bool) or not isinstance(amount, int | float | Decimal):
        return "" if amount is None else str(amount)
    return str(amount) if speech().english else speech().number(amount)


def status_words(status: str) -> str:
    """An email's or a delivery's status in words: queued, sent, failed, dropped."""
    say = speech()
    known = {
        "queued": say("queued"),
        "sent": say("sent"),
        "failed": say("failed"),
        "dropped": say("dropped"),
    }
    return known.get(status, status)


def outcome_words(outcome: object) -> str:
    """A sweep's outcome as a connection's card names it: done, more, deadline, fenced, …"""
    say = speech()
    value = str(getattr(outcome, "value", outcome))
    known = {
        "done": say("done"),
        "more": say("more"),
        "deadline": say("deadline"),
        "fenced": say("fenced"),
        "fence-lost": say("fence-lost"),
        "stopped": say("stopped"),
        "paused": say("paused"),
        "running": say("running"),
    }
    return known.get(value, value)


def full_stop(words: str) -> str:
    """Words that end a sentence, with its full stop: none more after an abbreviation's
    ("in 57 Min." stays, "in 57 min" becomes "in 57 min.")."""
    return words if words.endswith(".") else f"{words}."


def init_app(app: Flask) -> None:
    """Make the words template globals."""
    app.add_template_filter(full_stop, "full_stop")
    app.add_template_global(amount_words, "amount_words")
    app.add_template_global(status_words, "status_words")
    app.add_template_global(outcome_words, "outcome_words")
