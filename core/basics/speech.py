"""Words in a person's language: how core's sentences are translated and its times written.

Core builds the sentences staff read (`core.time.words`, `core.rules.refusals`); a `Speech`
says them in one language: its gettext translations (an adapter hands in the catalogue's,
the web Flask-Babel's for the request), and Babel's CLDR data for the locale's weekday and
month names, clocks, units and number separators. Core imports no web framework: the
adapter hands a Speech in, and `ENGLISH` is the words as the code writes them.

The venue's clock is never the language's: every instant is written on the zone it is
given (the connection's), whatever the locale.

A message is marked for the catalogue by its call, `say("due %(ago)s ago: ", ago=...)`
(`pybabel extract -k say`, babel.cfg); `say.plural(...)` for one with a count.
"""

from __future__ import annotations

import gettext
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Literal
from zoneinfo import ZoneInfo

from babel import Locale
from babel.dates import format_skeleton, format_timedelta
from babel.numbers import format_currency, format_decimal

Unit = Literal["day", "hour", "minute"]
_UNITS: tuple[tuple[Unit, int], ...] = (("day", 24 * 60), ("hour", 60), ("minute", 1))
_ENGLISH_UNITS = {"day": "d", "hour": "h", "minute": "min"}


class Speech:
    """One language's words and its ways of writing times, numbers and spans."""

    def __init__(self, locale: str = "en", translations: gettext.NullTranslations | None = None):
        self.locale = Locale.parse(locale)
        self.translations = translations if translations is not None else gettext.NullTranslations()

    @property
    def english(self) -> bool:
        """English writes as the code does ("Fri 21:00", "7 h 5 min"): the words as written."""
        return self.locale.language == "en"

    @property
    def tag(self) -> str:
        """The language as `<html lang>` names it: `de`, `pt-PT`."""
        return str(self.locale).replace("_", "-")

    # --- words ----------------------------------------------------------------

    def __call__(self, message: str, **values: object) -> str:
        """The message in this language, its `%(name)s` filled from `values`."""
        said = self.translations.gettext(message)
        return said % values if values else said

    def plural(self, singular: str, plural: str, n: int, **values: object) -> str:
        """The message for a count `n` (`%(num)d` is n), in this language's plural forms."""
        said = self.translations.ngettext(singular, plural, n)
        return said % {"num": n, **values}

    # --- times on the venue's clock ---------------------------------------------

    def _skeleton(self, skeleton: str, instant: datetime | date) -> str:
        return format_skeleton(skeleton, instant, locale=self.locale)

    def clock(self, instant: datetime, zone: ZoneInfo, seconds: bool = False) -> str:
        """A wall time: `21:00` (`21:00:30` with seconds), 24-hour as the locale writes it."""
        local = instant.astimezone(zone)
        if self.english:
            return local.strftime("%H:%M:%S" if seconds else "%H:%M")
        return self._skeleton("Hms" if seconds else "Hm", local)

    def weekday_clock(self, instant: datetime, zone: ZoneInfo) -> str:
        """A time with its weekday: `Fri 21:00`, `Fr., 21:00`, `sexta, 21:00`."""
        local = instant.astimezone(zone)
        if self.english:
            return local.strftime("%a %H:%M")
        return self._skeleton("EHm", local)

    def dated(self, instant: datetime, zone: ZoneInfo, seconds: bool = False) -> str:
        """A time with its date: `Fri 10 Jul 2026 21:00`, `Fr., 10. Juli 2026, 21:00`."""
        local = instant.astimezone(zone)
        if self.english:
            return local.strftime("%a %d %b %Y %H:%M:%S" if seconds else "%a %d %b %Y %H:%M")
        day = self._skeleton("yMMMEd", local)
        time = self.clock(instant, zone, seconds)
        pattern = self.locale.datetime_formats.get("medium", "{1} {0}")
        return str(pattern).replace("{1}", day).replace("{0}", time)

    def day(self, value: date, year: bool = True) -> str:
        """A date alone: `Sat 11 Jul 2026` (`Sat 11 Jul` without the year), `Sa., 11. Juli`."""
        if self.english:
            return value.strftime("%a %d %b %Y" if year else "%a %d %b")
        return self._skeleton("yMMMEd" if year else "MMMEd", value)

    def weekday(self, value: date) -> str:
        """A day's whole name: `Friday`, `Freitag`, `sexta-feira`."""
        if self.english:
            return value.strftime("%A")
        return str(self.locale.days["format"]["wide"][value.weekday()])

    # --- spans and numbers ------------------------------------------------------

    def span(self, delta: timedelta) -> str:
        """A duration in its two largest units, rounded down to the minute: `7 h 5 min`,
        `7 Std. 5 Min.` (each unit Babel's short one); under a minute the empty string."""
        minutes = int(delta.total_seconds() // 60)
        parts: list[str] = []
        for unit, size in _UNITS:
            amount, minutes = divmod(minutes, size)
            if amount:
                parts.append(self.unit(amount, unit))
        return " ".join(parts[:2])

    def unit(self, amount: object, unit: Unit) -> str:
        """An amount of one unit (`day`, `hour`, `minute`), short: `48 h`, `48 Std.`."""
        if self.english or not isinstance(amount, int):
            return f"{amount} {_ENGLISH_UNITS[unit]}"
        seconds = {"day": 86400, "hour": 3600, "minute": 60}[unit] * amount
        return format_timedelta(
            timedelta(seconds=seconds),
            granularity=unit,
            threshold=1,
            format="short",
            locale=self.locale,
        )

    def number(self, value: int | float | Decimal) -> str:
        """A number with the locale's separators: `1,234.5`, `1.234,5`, `1 234,5`; a Decimal
        keeps its places (`12.50` reads `12,50`)."""
        if isinstance(value, Decimal):
            exponent = value.as_tuple().exponent
            places = -exponent if isinstance(exponent, int) and exponent < 0 else 0
            pattern = "#,##0" + ("." + "0" * places if places else "")
            return format_decimal(value, format=pattern, locale=self.locale)
        return format_decimal(value, locale=self.locale)

    def money(self, value: int | float | Decimal, currency: str) -> str:
        """An amount of money in its currency as the locale writes it: `€12.50`, `12,50 €`."""
        return format_currency(value, currency, locale=self.locale)


ENGLISH = Speech()
"""The words as the code writes them (no catalogue)."""
