"""The languages the screens speak, and a person's or a connection's choice of one.

The screens speak English and each language a catalogue of `translations/` holds (German,
French, European Portuguese and Spanish). A user's own choice comes first, then their
connection's, then the browser's Accept-Language among these, then English (`web.language`).
The console, the logs and the API stay English.
"""

from __future__ import annotations

from services.errors import InvalidValue

LOCALES = ("en", "de", "fr", "pt_PT", "es")
"""The screens' languages, English first (the words the code is written in)."""
NAMES = {
    "en": "English",
    "de": "Deutsch",
    "fr": "Français",
    "pt_PT": "Português (Portugal)",
    "es": "Español",
}
"""Each language as its own speakers name it (the language select's options)."""


def check_locale(locale: str | None) -> str | None:
    """A locale the screens speak (`pt-PT` reads `pt_PT`); None or "" for no choice."""
    if not locale:
        return None
    wanted = locale.strip().replace("-", "_")
    for known in LOCALES:
        if wanted.lower() == known.lower():
            return known
    raise InvalidValue(
        f"{locale!r} is no language the screens speak: choose one of {', '.join(LOCALES)}",
        {"field": "locale", "value": locale},
    )
