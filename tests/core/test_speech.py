"""core.basics.speech: the words in a language, times on the venue's clock as its locale
writes them (Babel's CLDR data), and core's sentences through a catalogue.

Every expected string is worked out by hand from CLDR as Babel ships it: German abbreviates
Friday "Fr." and writes a weekday with a time as "E, HH:mm", a date as "E, d. MMM y" (July
short is "Juli"), a date with its time "{1}, {0}", an hour short "{0} Std.", a minute
"{0} Min.", a day "{0} Tg."; European Portuguese abbreviates Friday "sexta", writes a
date "E, d/MM/y", an hour "{0} h", a day "{0} dia"/"{0} dias"; both use 24-hour clocks.
"""

from __future__ import annotations

import io
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations

from core.basics.speech import ENGLISH, Speech
from core.time.words import aside_words, mover_words, overdue_words, span_words

ROOT = Path(__file__).resolve().parents[2]
BERLIN = ZoneInfo("Europe/Berlin")
LISBON = ZoneInfo("Europe/Lisbon")
# Fri 10 Jul 2026 19:00 UTC: 21:00 in Berlin (CEST, +2), 20:00 in Lisbon (WEST, +1).
AT = datetime(2026, 7, 10, 19, 0, tzinfo=UTC)


def speech(locale: str) -> Speech:
    """A Speech with the project's catalogue for `locale`, compiled in memory."""
    path = ROOT / "translations" / locale / "LC_MESSAGES" / "messages.po"
    with path.open("rb") as file:
        catalog = read_po(file, locale=locale)
    compiled = io.BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    return Speech(locale, Translations(compiled))


def test_english_is_the_words_as_written() -> None:
    assert ENGLISH.weekday_clock(AT, BERLIN) == "Fri 21:00"
    assert ENGLISH.dated(AT, BERLIN) == "Fri 10 Jul 2026 21:00"
    assert span_words(timedelta(hours=23, minutes=55)) == "23 h 55 min"
    assert ENGLISH.tag == "en"


def test_german_times_on_the_venues_clock() -> None:
    de = speech("de")
    assert de.tag == "de"
    assert de.weekday_clock(AT, BERLIN) == "Fr., 21:00"
    assert de.clock(AT, BERLIN) == "21:00"
    assert de.clock(AT + timedelta(seconds=30), BERLIN, seconds=True) == "21:00:30"
    assert de.dated(AT, BERLIN) == "Fr., 10. Juli 2026, 21:00"
    assert de.day(date(2026, 7, 11), year=False) == "Sa., 11. Juli"
    assert de.weekday(date(2026, 7, 10)) == "Freitag"
    # The language never moves the clock: German read in Lisbon is Lisbon's 20:00.
    assert de.weekday_clock(AT, LISBON) == "Fr., 20:00"


def test_german_spans_are_babels_short_units() -> None:
    de = speech("de")
    assert de.span(timedelta(hours=23, minutes=55)) == "23 Std. 55 Min."
    assert de.span(timedelta(minutes=5)) == "5 Min."
    assert de.span(timedelta(days=1, minutes=5)) == "1 Tg. 5 Min."
    assert de.span(timedelta(seconds=59)) == ""
    assert de("in %(span)s", span=de.span(timedelta(minutes=5))) == "in 5 Min."
    ago = de("%(span)s ago", span=de.span(timedelta(hours=23, minutes=55)))
    assert ago == "vor 23 Std. 55 Min."


def test_portuguese_times_and_spans() -> None:
    pt = speech("pt_PT")
    assert pt.tag == "pt-PT"
    assert pt.weekday_clock(AT, LISBON) == "sexta, 20:00"
    assert pt.dated(AT, LISBON) == "sexta, 10/07/2026, 20:00"
    assert pt.weekday(date(2026, 7, 10)) == "sexta-feira"
    assert pt.span(timedelta(days=2, hours=3)) == "2 dias 3 h"
    assert pt("%(span)s ago", span=pt.span(timedelta(minutes=12))) == "há 12 min"
    assert pt("in %(span)s", span=pt.span(timedelta(hours=2, minutes=5))) == "dentro de 2 h 5 min"


def test_numbers_and_money_with_the_locales_separators() -> None:
    assert speech("de").number(Decimal("1234.50")) == "1.234,50"
    assert speech("pt_PT").number(Decimal("1234.50")) == "1\N{NO-BREAK SPACE}234,50"
    assert ENGLISH.number(Decimal("1234.50")) == "1,234.50"
    assert speech("de").money(Decimal("12.5"), "EUR") == "12,50\N{NO-BREAK SPACE}€"
    assert speech("pt_PT").money(Decimal("12.5"), "EUR") == "12,50\N{NO-BREAK SPACE}€"


def test_cores_words_in_german() -> None:
    de = speech("de")
    due = AT - timedelta(hours=23, minutes=55)
    assert overdue_words(due, AT, BERLIN, say=de) == (
        "fällig seit 23 Std. 55 Min.: wechselt in der nächsten Minute"
    )
    since = AT - timedelta(minutes=3)
    assert overdue_words(due, AT, BERLIN, "stalled", since, say=de) == (
        "fällig seit 23 Std. 55 Min.: wartet auf die Uhr (steht seit 20:57)"
    )
    assert aside_words(AT, BERLIN, say=de) == "zurückgestellt bis 21:00"
    assert mover_words("clock", "clock", AT, AT, BERLIN, say=de) == (
        "gewechselt von der Uhr um 21:00"
    )
    yesterday = AT + timedelta(days=1)
    assert mover_words("public", "guest", AT, yesterday, BERLIN, say=de) == (
        "gewechselt von dem Gast um Fr., 21:00"
    )
