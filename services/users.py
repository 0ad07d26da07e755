"""Users: staff, their roles per app, passwords for the screens and tokens for the API.

A new password, a role given or taken away and a user removed close the user's open live
screens in every web process, as signing out does (`Publisher.signed_out`, after the
commit): an open socket must not keep showing rows under what no longer holds. A new
password and a removal also end every screen session (the cookie opens nothing more); a
role change keeps the session, so the page the screen reloads shows the new roles.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
import secrets
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session
from werkzeug.security import check_password_hash, generate_password_hash

from services.apps import find_app
from services.errors import InvalidValue, NotFound
from services.events import NO_PUBLISHER, Publisher
from services.languages import check_locale
from services.models import ADMIN, User, UserRole

log = logging.getLogger(__name__)

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")


@dataclass(frozen=True)
class NewUser:
    """A user just added or given a role; `token` is shown once, and only when new."""

    user: User
    token: str | None


def hash_token(token: str) -> str:
    """What is stored of an API token: its SHA-256 (the token itself is shown once)."""
    return hashlib.sha256(token.encode()).hexdigest()


def add_user(
    session: Session,
    email: str,
    role: str,
    app: str | None = None,
    password: str | None = None,
    publisher: Publisher = NO_PUBLISHER,
    locale: str | None = None,
) -> NewUser:
    """Add a user (or a role to one): `admin` of every app, or a role of the app's `roles`.

    An existing user's new password or new role closes their open live screens."""
    email = email.strip().lower()
    if not EMAIL.match(email):
        raise InvalidValue(f"{email!r} is no email address", {"field": "email"})
    target = find_app(session, app) if app else None
    if target is None and role != ADMIN:
        raise InvalidValue(
            f"the role {role!r} belongs to an app: name it with --app", {"role": role}
        )
    if target is not None and role != ADMIN and role not in target.model.roles:
        raise InvalidValue(
            f"app {target.name!r} has no role {role!r}; its roles: "
            + (", ".join(target.model.roles) or "none"),
            {"role": role, "app": target.name},
        )
    user = session.scalar(select(User).where(User.email == email))
    token = None
    changed: list[str] = []
    if user is None:
        token = secrets.token_urlsafe(32)
        user = User(email=email, token_hash=hash_token(token), session_version=0)
        session.add(user)
    if locale is not None:
        user.locale = check_locale(locale)
    if password is not None:
        user.password_hash = generate_password_hash(password)
        # A new password signs out every browser signed in with the old one.
        user.session_version += 1
        changed.append("new password")
    app_id = target.id if target else None
    if not any(r.role == role and r.app_id == app_id for r in user.roles):
        user.roles.append(UserRole(app=target, role=role))
        changed.append("role change")
    session.commit()
    log.info("user %s holds %s in %s", user.id, role, target.name if target else "every app")
    if token is None and changed:
        publisher.signed_out(user.id, " and ".join(changed))
    return NewUser(user=user, token=token)


def set_locale(session: Session, email: str, locale: str | None) -> User:
    """A user's own language on the screens (None or "": none of their own, so their
    connection's or their browser's speaks)."""
    return choose_locale(session, _user(session, email), locale)


def choose_locale(session: Session, user: User, locale: str | None) -> User:
    """Set the user's language (the language select on the screens, or the console)."""
    user.locale = check_locale(locale)
    session.commit()
    log.info("user %s: locale %s", user.id, user.locale or "none")
    return user


def _user(session: Session, email: str) -> User:
    user: User | None = session.scalar(select(User).where(User.email == email.strip().lower()))
    if user is None:
        raise NotFound(f"no user {email!r}", {"email": email})
    return user


def remove_role(
    session: Session,
    email: str,
    role: str,
    app: str | None = None,
    publisher: Publisher = NO_PUBLISHER,
) -> User:
    """Take a role away from a user (`admin` without an app); their open screens close."""
    user = _user(session, email)
    target = find_app(session, app) if app else None
    app_id = target.id if target else None
    held = [r for r in user.roles if r.role == role and r.app_id == app_id]
    where = target.name if target else "every app"
    if not held:
        raise NotFound(
            f"{user.email} holds no role {role!r} in {where}", {"email": user.email, "role": role}
        )
    for found in held:
        user.roles.remove(found)
    session.commit()
    log.info("user %s no longer holds %s in %s", user.id, role, where)
    publisher.signed_out(user.id, "role change")
    return user


def remove_user(session: Session, email: str, publisher: Publisher = NO_PUBLISHER) -> None:
    """Remove a user with their roles and token; their sessions and open screens end."""
    user = _user(session, email)
    user_id = user.id
    session.delete(user)
    session.commit()
    log.info("user %s removed", user_id)
    publisher.signed_out(user_id, "user removed")


def end_sessions(session: Session, user: User, publisher: Publisher = NO_PUBLISHER) -> None:
    """End every screen session of the user (sign-out): their cookies open nothing more,
    and their open live screens close in every web process."""
    user.session_version += 1
    session.commit()
    log.info("user %s: sessions ended", user.id)
    publisher.signed_out(user.id)


def renew_token(session: Session, email: str) -> str:
    """Give a user a new API token (the old one opens nothing); shown once."""
    user = _user(session, email)
    token = secrets.token_urlsafe(32)
    user.token_hash = hash_token(token)
    session.commit()
    return token


def user_by_token(session: Session, token: str) -> User | None:
    """The user an API token belongs to."""
    return session.scalar(select(User).where(User.token_hash == hash_token(token)))


@functools.cache
def _stand_in_hash() -> str:
    """A hash no password matches, made as real ones are (so checking it costs the same)."""
    return generate_password_hash(secrets.token_urlsafe(32))


def user_by_password(session: Session, email: str, password: str) -> User | None:
    """The user when the email and password match.

    An unknown email (or a user without a password) is checked against a stand-in hash,
    so the answer takes as long as a wrong password's and does not tell which emails exist.
    """
    user = session.scalar(select(User).where(User.email == email.strip().lower()))
    if user is None or not user.password_hash:
        check_password_hash(_stand_in_hash(), password)
        return None
    return user if check_password_hash(user.password_hash, password) else None
