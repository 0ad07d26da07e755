"""Every string a screen shows is in every catalogue, translated and not fuzzy.

The messages are extracted as `pybabel extract -F babel.cfg -k say -k plural:1,2` does
(templates and Python), and compared with each `translations/<locale>/LC_MESSAGES/
messages.po`: a new English string wrapped in `_()` or `say()` and left untranslated in any
language fails here, naming it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from services.languages import LOCALES

ROOT = Path(__file__).resolve().parents[2]
KEYWORDS = {**DEFAULT_KEYWORDS, "say": None, "plural": (1, 2)}
TRANSLATED = [locale for locale in LOCALES if locale != "en"]


def extracted(folder: Path = ROOT) -> dict[str, tuple[str, ...]]:
    """Every message in the screens' sources, as babel.cfg names them: id -> all its ids."""
    with (ROOT / "babel.cfg").open() as file:
        method_map, options_map = parse_mapping_cfg(file)
    found: dict[str, tuple[str, ...]] = {}
    for _name, _line, message, _comments, _context in extract_from_dir(
        str(folder), method_map, options_map, keywords=KEYWORDS
    ):
        ids = (message,) if isinstance(message, str) else tuple(message)
        found[ids[0]] = ids
    return found


def faults(catalog: Catalog, messages: dict[str, tuple[str, ...]]) -> list[str]:
    """What is wrong of `messages` in a catalogue: missing, untranslated, fuzzy, its
    placeholders not the English ones."""
    wrong = []
    for key, ids in sorted(messages.items()):
        entry = catalog.get(ids if len(ids) > 1 else key)
        if entry is None:
            wrong.append(f"missing: {key!r}")
            continue
        strings = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        if not all(strings):
            wrong.append(f"untranslated: {key!r}")
        if entry.fuzzy:
            wrong.append(f"fuzzy: {key!r}")
        errors = list(entry.check(catalog))
        if errors:
            wrong.append(f"placeholders: {key!r}: {errors[0]}")
    return wrong


def catalogue(locale: str) -> Catalog:
    path = ROOT / "translations" / locale / "LC_MESSAGES" / "messages.po"
    with path.open("rb") as file:
        return read_po(file, locale=locale)


def test_the_screens_sources_hold_the_messages_the_screens_show() -> None:
    messages = extracted()
    # A sample across the layers: a template, a screen's Python, core's words.
    assert "Sign in" in messages
    assert "Move to %(state)s" in messages
    assert "%(row)s moved to %(state)s %(by)s." in messages
    assert "due %(span)s ago: %(what)s" in messages
    assert "%(num)d day" in messages and messages["%(num)d day"][1] == "%(num)d days"
    assert len(messages) > 350


@pytest.mark.parametrize("locale", TRANSLATED)
def test_every_message_is_translated_in(locale: str) -> None:
    assert faults(catalogue(locale), extracted()) == []


def test_a_new_english_string_left_untranslated_fails(tmp_path: Path) -> None:
    # A screen of its own, with one string the catalogues have and one they do not.
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "new.html").write_text(
        '<p>{{ _("Sign in") }}</p><p>{{ _("Fold the napkins before service") }}</p>'
    )
    found = extracted(tmp_path)
    assert set(found) == {"Sign in", "Fold the napkins before service"}
    for locale in TRANSLATED:
        assert faults(catalogue(locale), found) == ["missing: 'Fold the napkins before service'"]


def test_a_fuzzy_or_empty_translation_fails() -> None:
    catalog = catalogue("de")
    catalog["Sign in"].flags.add("fuzzy")
    catalog["Sign out"].string = ""
    assert faults(catalog, {"Sign in": ("Sign in",), "Sign out": ("Sign out",)}) == [
        "fuzzy: 'Sign in'",
        "untranslated: 'Sign out'",
    ]
