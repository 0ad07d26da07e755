"""An email's address as a producer's `to` column gives it: one address, checked as the
email is queued (a refused one is kept `failed` with the reason, never sent) and again as it
is sent (a row queued before the check, or written in SQL).

Only what would break the email or send it elsewhere is refused: a line break (a header of
its own: the probe's `\\r\\nBcc:`), a control character, a list where one address is
expected, text that is not `name@domain`, and characters outside ASCII, which the drain
cannot encode in SMTP's commands. Whether the mailbox exists is the mail server's to say.
"""

from __future__ import annotations

import re
from email.utils import getaddresses

LINE_BREAK = "the address holds a line break"
"""Why an address with a CR or LF is never queued nor sent (a header could ride in it)."""

_SPLIT = re.compile(r"[\s,;]+")
_ONE = re.compile(r"[^@\s]+@[^@\s]+")


def address_fault(value: str) -> str | None:
    """Why `value` is not one address an email can go to, in words; None when it is."""
    if "\r" in value or "\n" in value:
        return LINE_BREAK
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        return "the address holds a control character"
    if not value.isascii():
        wrong = next(c for c in value if not c.isascii())
        return f"the address holds {wrong!r}, which is not ASCII: this outbox sends no such address"
    found = [address for _, address in getaddresses([value]) if address]
    count = max(len(found), sum(1 for part in _SPLIT.split(value) if "@" in part))
    if count > 1:
        return f"the address is a list of {count} addresses where one is expected"
    if len(found) != 1 or not _ONE.fullmatch(found[0]):
        return "the address is not one name@domain"
    return None
