"""The language the screens speak (Flask-Babel), chosen per request.

Which language: the signed-in user's own (`users.locale`: the language select in the menu,
`adminium user add … --locale de`, `adminium user locale`), else the connection's on
screen (`connections.locale`: `adminium connection add … --locale pt_PT`), else the
browser's Accept-Language among the catalogues, else English. `<html lang>` says which.

The catalogues are `translations/<locale>/LC_MESSAGES/messages.po` (in git); each process
compiles them at start into a folder of its own outside the work tree (no `.mo` in git,
none to fall out of step). The console, the logs and the API stay English.

Core's words (`core.time.words`, `core.rules.refusals`) are said through a
`core.basics.speech.Speech` made here for the request: the catalogue's translations and
the locale's CLDR ways of writing times, spans and numbers.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from flask import Flask, current_app, g, has_request_context, request
from flask_babel import Babel, get_locale, get_translations

from core.basics.speech import ENGLISH, Speech
from services.languages import LOCALES, NAMES
from services.models import Connection, db

log = logging.getLogger(__name__)

SIGNED_IN = "adminium.signed_in_user"
"""Where the screens register their reader of the signed-in user (`web.screens`)."""
TRANSLATIONS = Path(__file__).resolve().parent.parent / "translations"
"""The catalogues' sources: one `.po` per language."""


def compile_catalogues(source: Path = TRANSLATIONS) -> Path:
    """Compile every `.po` under `source` into `.mo` files in a folder named by their
    contents (made once per set of catalogues, written whole before it is used)."""
    sources = sorted(source.glob("*/LC_MESSAGES/messages.po"))
    digest = hashlib.sha256()
    for po in sources:
        digest.update(po.parent.parent.name.encode())
        digest.update(po.read_bytes())
    target = Path(tempfile.gettempdir()) / f"adminium-translations-{digest.hexdigest()[:16]}"
    for po in sources:
        locale = po.parent.parent.name
        mo = target / locale / "LC_MESSAGES" / "messages.mo"
        if mo.exists():
            continue
        mo.parent.mkdir(parents=True, exist_ok=True)
        with po.open("rb") as file:
            catalog = read_po(file, locale=locale)
        partial = mo.with_name(f"messages.mo.{os.getpid()}")
        with partial.open("wb") as out:
            write_mo(out, catalog)
        os.replace(partial, mo)
    return target


def _connection_on_screen() -> Connection | None:
    """The connection the request's screen belongs to (its URL names it), if any: an app's
    screens name it `connection` (/apps/<connection>/…), a connection's own `name`
    (/connections/<name>/…)."""
    found_args = request.view_args or {}
    name = found_args.get("connection")
    if name is None and request.path.startswith("/connections/"):
        name = found_args.get("name")
    if not isinstance(name, str) or "\x00" in name:
        return None  # no connection holds a NUL (PostgreSQL's text cannot): none to ask
    found: Connection | None = db.session.query(Connection).filter_by(name=name).one_or_none()
    return found


def select_locale() -> str:
    """The request's language: the user's, the connection's, the browser's, English."""
    forced = g.get("forced_locale")
    if forced:
        return str(forced)
    # The screens name who signed in (web.screens registers its reader: no import back).
    signed_in = current_app.extensions.get(SIGNED_IN)
    user = signed_in() if signed_in is not None else None
    if user is not None and user.locale in LOCALES:
        return str(user.locale)
    connection = _connection_on_screen()
    if connection is not None and connection.locale in LOCALES:
        return str(connection.locale)
    best = request.accept_languages.best_match(_ACCEPTED, default="en").replace("-", "_")
    return "pt_PT" if best == "pt" else best


_ACCEPTED = [locale.replace("_", "-") for locale in LOCALES] + ["pt"]
"""What Accept-Language is matched against (`pt` alone reads European Portuguese)."""


def speech() -> Speech:
    """The request's Speech (English outside a request)."""
    if not has_request_context():
        return ENGLISH
    locale = str(get_locale() or "en")
    if locale == "pt":
        locale = "pt_PT"
    memo: dict[str, Speech] = g.setdefault("speeches", {})
    if locale not in memo:
        memo[locale] = Speech(locale, get_translations())
    return memo[locale]


def html_lang() -> str:
    """The request's language as `<html lang>` names it: `en`, `de`, `pt-PT`."""
    return speech().tag


def init_app(app: Flask) -> None:
    """Flask-Babel over the compiled catalogues, with the request's language chosen above."""
    if not app.config.get("BABEL_TRANSLATION_DIRECTORIES"):
        app.config["BABEL_TRANSLATION_DIRECTORIES"] = str(compile_catalogues())
    Babel(app, locale_selector=select_locale)
    app.add_template_global(html_lang, "html_lang")
    app.add_template_global(speech, "speech")
    app.add_template_global(NAMES, "language_names")
    app.add_template_global(LOCALES, "languages")
