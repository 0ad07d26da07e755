"""The demo's account, as `adminium run` installs it and the README documents it; the
sign-in page names it while it still signs in with the documented password."""

from __future__ import annotations

import threading
import time

from sqlalchemy.orm import Session

from services.users import user_by_password

DEMO_EMAIL = "demo@example.com"
DEMO_PASSWORD = "adminium-demo"

_CHECK_SECONDS = 60.0
"""How long one answer to "does the demo account sign in?" stands (a password check costs
a hash: the sign-in page does not pay it on every view)."""
_checked: dict[str, tuple[float, bool]] = {}
_lock = threading.Lock()


def demo_signs_in(session: Session) -> bool:
    """Whether the demo account exists and signs in with the documented password (no demo
    installed, or its password changed: no)."""
    with _lock:
        found = _checked.get(DEMO_EMAIL)
        if found is not None and time.monotonic() - found[0] < _CHECK_SECONDS:
            return found[1]
    answer = user_by_password(session, DEMO_EMAIL, DEMO_PASSWORD) is not None
    with _lock:
        _checked[DEMO_EMAIL] = (time.monotonic(), answer)
    return answer


def forget_demo_check() -> None:
    """Check again on the next sign-in page (after the demo is installed or changed)."""
    with _lock:
        _checked.clear()
