"""The sign-in throttle's counts in Redis: their names, and an admin's unlock.

The web's throttle (`web/throttle.py`, Flask-Limiter) counts refused sign-ins per email from
one address, and per address, under a prefix of its control plane's own, so two control
planes on one Redis never share counts. `unlock` clears an email's counts from every
address before their 15 minutes are over (`adminium user unlock EMAIL`).
"""

from __future__ import annotations

import hashlib
import logging

import redis

log = logging.getLogger(__name__)


def key_prefix(database_url: str) -> str:
    """The prefix of one control plane's sign-in counts."""
    return "adminium-signin-" + hashlib.sha256(database_url.encode()).hexdigest()[:12]


def account_counter(email: str, address: str) -> str:
    """What counts an email's refused sign-ins from one address."""
    return f"account:{email}@from:{address}"


def unlock(client: redis.Redis, database_url: str, email: str) -> int:
    """Clear an email's refused sign-ins from every address; how many counts were cleared."""
    email = email.strip().lower()
    # `limits` names a count LIMITS:LIMITER/PREFIX/KEY/SCOPE/...; escaped for MATCH.
    name = f"{key_prefix(database_url)}/{account_counter(email, '')}"
    escaped = "".join(f"\\{c}" if c in "*?[]\\" else c for c in name)
    pattern = f"*LIMITER/{escaped}*"
    found = list(client.scan_iter(match=pattern, count=1000))
    if found:
        client.delete(*found)
    log.info("sign-in unlocked for %s: %s counts cleared", email, len(found))
    return len(found)
