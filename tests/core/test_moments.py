"""Reading a moment: the spec's worked examples, then each part of the shape in turn."""

from __future__ import annotations

import os
import time as time_module
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest

from core.manifest.model import Moment, Shift
from core.manifest.refs import SettingRef
from core.time.clock import venue_zone
from core.time.moments import (
    MomentContext,
    MomentValueError,
    Reading,
    apply_shift,
    read_moment,
    read_setting,
    resolve_moment,
)

LONDON = venue_zone("Europe/London")
BERLIN = venue_zone("Europe/Berlin")
NEW_YORK = venue_zone("America/New_York")
BST = timezone(timedelta(hours=1))

HOURS = {"table": "opening_hours", "weekday": "weekday", "open": "open"}
HOURS |= {"opens": "opens", "closes": "closes"}
PICKUP_AT_CLOSING = {"column": "pickup_at", "time": {"hours": HOURS, "edge": "closes"}}
NO_SHOW = {
    "column": "arrive",
    "time": {"table": "settings", "column": "no_show_at"},
    "plus": {"days": 1},
}
OFFER_LAPSE = {
    "column": "offer_until",
    "or": [
        {"column": "valid_to", "minus": {"hours": {"table": "settings", "column": "offer_hours"}}}
    ],
}
WEEK = [
    {"weekday": "mon", "open": False, "opens": "11:00", "closes": "21:00"},
    {"weekday": "fri", "open": True, "opens": "11:00", "closes": "21:00"},
]


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def read(moment: dict[str, Any], row: dict[str, Any], zone: Any = LONDON, **rest: Any) -> Any:
    return read_moment(Moment.model_validate(moment), MomentContext(row=row, zone=zone, **rest))


@pytest.fixture(params=["as-is", "Pacific/Kiritimati", "America/Adak"])
def server_zone(request: pytest.FixtureRequest) -> Iterator[str]:
    """The server's own zone set far off (UTC+14, UTC-10/-9): the answers must not move."""
    before = os.environ.get("TZ")
    if request.param != "as-is":
        os.environ["TZ"] = request.param
        time_module.tzset()
    yield request.param
    if before is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = before
    time_module.tzset()


# --- the spec's worked examples, on every server zone -----------------------------


def test_friday_pickup_is_cancelled_at_friday_closing(server_zone: str) -> None:
    # Friday 5 June 2026 (1 June is a Monday), pickup 12:30 BST. Friday closes 21:00 BST
    # = 20:00Z.
    row = {"pickup_at": datetime(2026, 6, 5, 12, 30, tzinfo=BST)}
    tables = {"opening_hours": WEEK}
    assert read(PICKUP_AT_CLOSING, row, tables=tables) == utc(2026, 6, 5, 20, 0)


def test_pickup_after_utc_midnight_reads_the_venue_day(server_zone: str) -> None:
    # 00:30 BST on Friday 5 June is 23:30Z on Thursday; the venue's day is Friday, so it
    # reads Friday's closing, 21:00 BST = 20:00Z, not Thursday's (no row: midnight).
    row = {"pickup_at": utc(2026, 6, 4, 23, 30)}
    tables = {"opening_hours": WEEK}
    assert read(PICKUP_AT_CLOSING, row, tables=tables) == utc(2026, 6, 5, 20, 0)


def test_london_stay_is_a_no_show_at_ten_on_sunday_although_the_clocks_went_back(
    server_zone: str,
) -> None:
    # Due Saturday 24 October 2026. One calendar day later keeps the wall time: 10:00 on
    # Sunday the 25th. The clocks went back at 02:00 BST that night, so 10:00 is GMT = 10:00Z
    # (24 hours after Saturday 10:00 BST = 09:00Z would be 09:00Z).
    row = {"arrive": date(2026, 10, 24)}
    tables = {"settings": [{"no_show_at": "10:00"}]}
    assert read(NO_SHOW, row, tables=tables) == utc(2026, 10, 25, 10, 0)


def test_forty_eight_hours_before_fifteen_across_the_clock_change_is_real_hours(
    server_zone: str,
) -> None:
    # Monday 30 March 2026, 15:00 BST = 14:00Z. London sprang forward on Sunday the 29th,
    # so 48 real hours earlier is 14:00Z on Saturday the 28th: 14:00 GMT on the wall.
    moment = {"column": "arrive", "time": "15:00", "minus": {"hours": 48}}
    assert read(moment, {"arrive": date(2026, 3, 30)}) == utc(2026, 3, 28, 14, 0)


def test_two_days_before_fifteen_across_the_clock_change_keeps_the_wall_time(
    server_zone: str,
) -> None:
    # The calendar shift instead: Saturday 28 March at 15:00 GMT = 15:00Z.
    moment = {"column": "arrive", "time": "15:00", "minus": {"days": 2}}
    assert read(moment, {"arrive": date(2026, 3, 30)}) == utc(2026, 3, 28, 15, 0)


def test_half_past_two_on_the_spring_forward_morning_reads_half_past_three(
    server_zone: str,
) -> None:
    # Berlin, Sunday 29 March 2026: 02:00 CET -> 03:00 CEST. 02:30 reads 03:30 CEST = 01:30Z.
    moment = {"column": "day", "time": "02:30"}
    assert read(moment, {"day": date(2026, 3, 29)}, zone=BERLIN) == utc(2026, 3, 29, 1, 30)


def test_fold_reads_the_first(server_zone: str) -> None:
    # New York, Sunday 1 November 2026: 01:30 EDT (05:30Z) comes before 01:30 EST (06:30Z).
    moment = {"column": "day", "time": "01:30"}
    assert read(moment, {"day": date(2026, 11, 1)}, zone=NEW_YORK) == utc(2026, 11, 1, 5, 30)


def test_closed_monday_order_is_cancelled_at_the_end_of_monday(server_zone: str) -> None:
    # Monday 8 June 2026 is closed: midnight ending it is 00:00 BST on the 9th = 23:00Z.
    row = {"pickup_at": datetime(2026, 6, 8, 12, 30, tzinfo=BST)}
    tables = {"opening_hours": WEEK}
    assert read(PICKUP_AT_CLOSING, row, tables=tables) == utc(2026, 6, 8, 23, 0)


def test_offer_lapses_on_the_fallback(server_zone: str) -> None:
    # offer_until is empty; valid_to 20:00Z on 5 June minus 6 real hours = 14:00Z.
    moment = Moment.model_validate(OFFER_LAPSE)
    row = {"offer_until": None, "valid_to": utc(2026, 6, 5, 20, 0)}
    ctx = MomentContext(row=row, zone=LONDON, tables={"settings": [{"offer_hours": 6}]})
    assert resolve_moment(moment, ctx) == Reading(utc(2026, 6, 5, 14, 0), fallback=1)


# --- column, via and time of day --------------------------------------------------


def test_timestamptz_without_time_is_the_stored_instant() -> None:
    stored = datetime(2026, 6, 5, 12, 30, tzinfo=BST)
    at = read({"column": "pickup_at"}, {"pickup_at": stored})
    assert at == utc(2026, 6, 5, 11, 30)
    assert at.tzinfo is UTC


def test_timestamptz_with_a_time_reads_that_wall_time_on_the_venue_day() -> None:
    # 23:30Z on Thursday 4 June is Friday in London; 10:00 BST Friday = 09:00Z.
    moment = {"column": "pickup_at", "time": "10:00"}
    assert read(moment, {"pickup_at": utc(2026, 6, 4, 23, 30)}) == utc(2026, 6, 5, 9, 0)


def test_date_without_a_time_has_no_value() -> None:
    assert read({"column": "arrive"}, {"arrive": date(2026, 6, 5)}) is None


@pytest.mark.parametrize("row", [{"arrive": None}, {}], ids=["null", "absent"])
def test_empty_column_has_no_value(row: dict[str, Any]) -> None:
    assert read({"column": "arrive", "time": "10:00"}, row) is None


@pytest.mark.parametrize(
    ("kept", "expected"),
    [
        # Saturday 6 June 2026 in London (BST, UTC+1).
        pytest.param("14:00", utc(2026, 6, 6, 13, 0), id="hh-mm"),
        pytest.param("9:45", utc(2026, 6, 6, 8, 45), id="h-mm"),
        pytest.param("16:20:30", utc(2026, 6, 6, 15, 20, 30), id="hh-mm-ss"),
        pytest.param("", None, id="empty"),
        pytest.param(None, None, id="null"),
        pytest.param("after lunch", None, id="words"),
        pytest.param("25:00", None, id="no-such-hour"),
    ],
)
def test_time_kept_on_the_row(kept: Any, expected: datetime | None) -> None:
    moment = {"column": "arrive", "time": {"column": "arrival_time"}}
    assert read(moment, {"arrive": date(2026, 6, 6), "arrival_time": kept}) == expected


def test_via_reads_the_linked_row() -> None:
    # Doors 19:00 +01:00 on Friday 4 December 2026 = 18:00Z; 30 minutes before: 17:30Z.
    moment = {"via": "event_id", "column": "doors_at", "minus": {"minutes": 30}}
    doors = datetime(2026, 12, 4, 19, 0, tzinfo=timezone(timedelta(hours=1)))
    linked = {"event_id": {"doors_at": doors}}
    assert read(moment, {"event_id": 7}, linked=linked) == utc(2026, 12, 4, 17, 30)


def test_via_with_a_kept_time_reads_it_on_the_linked_row() -> None:
    # The linked stay arrives Saturday 6 June (BST); its own arrival_time 15:00 = 14:00Z.
    moment = {"via": "stay_id", "column": "arrive", "time": {"column": "arrival_time"}}
    row = {"stay_id": 3, "arrival_time": "09:00"}
    linked = {"stay_id": {"arrive": date(2026, 6, 6), "arrival_time": "15:00"}}
    assert read(moment, row, linked=linked) == utc(2026, 6, 6, 14, 0)


@pytest.mark.parametrize("linked", [{"event_id": None}, {}], ids=["missing-row", "not-given"])
def test_via_with_missing_linked_row_has_no_value(linked: dict[str, Any]) -> None:
    moment = {"via": "event_id", "column": "doors_at"}
    assert read(moment, {"event_id": 7}, linked=linked) is None


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        # 10:00 BST on Saturday 6 June = 09:00Z.
        pytest.param([{"no_show_at": "10:00"}], utc(2026, 6, 6, 9, 0), id="one-row"),
        pytest.param([{"no_show_at": "10:00"}, {"no_show_at": "11:00"}], None, id="two-rows"),
        pytest.param([], None, id="no-row"),
        pytest.param([{"no_show_at": ""}], None, id="empty"),
        pytest.param([{"no_show_at": None}], None, id="null"),
        pytest.param([{}], None, id="no-column"),
        pytest.param(None, None, id="no-table"),
    ],
)
def test_time_from_a_setting(settings: Any, expected: datetime | None) -> None:
    tables = {} if settings is None else {"settings": settings}
    moment = {"column": "arrive", "time": {"table": "settings", "column": "no_show_at"}}
    assert read(moment, {"arrive": date(2026, 6, 6)}, tables=tables) == expected


def test_hours_edge_with_no_hours_table_given_has_no_value() -> None:
    row = {"pickup_at": datetime(2026, 6, 5, 12, 30, tzinfo=BST)}
    assert read(PICKUP_AT_CLOSING, row) is None


def test_hours_edge_with_two_rows_for_friday_has_no_value() -> None:
    row = {"pickup_at": datetime(2026, 6, 5, 12, 30, tzinfo=BST)}
    tables = {"opening_hours": [*WEEK, {"weekday": "fri", "opens": "9:00", "closes": "17:00"}]}
    assert read(PICKUP_AT_CLOSING, row, tables=tables) is None


@pytest.mark.parametrize(
    "value",
    ["2026-06-05", "2026-06-05T12:30:00", 20260605, datetime(2026, 6, 5, 12, 30)],
    ids=["text", "text-date-time", "number", "naive-datetime"],
)
def test_column_that_is_not_a_date_is_refused(value: Any) -> None:
    with pytest.raises(MomentValueError):
        read({"column": "arrive", "time": "10:00"}, {"arrive": value})


def test_no_zone_reads_utc() -> None:
    moment = {"column": "arrive", "time": "10:00"}
    assert read(moment, {"arrive": date(2026, 6, 6)}, zone=venue_zone(None)) == utc(2026, 6, 6, 10)


def test_far_off_server_zone_is_really_set(server_zone: str) -> None:
    # The fixture must move the process's own zone, or the tests above prove nothing.
    expected = {"as-is": None, "Pacific/Kiritimati": "+1400", "America/Adak": "-1000"}
    offset = time_module.strftime("%z", time_module.localtime(1767225600))  # 2026-01-01T00:00Z
    assert expected[server_zone] in (None, offset)


# --- shifts -----------------------------------------------------------------------


SATURDAY_TEN_BST = utc(2026, 6, 6, 9, 0)  # 10:00 BST on Saturday 6 June 2026


@pytest.mark.parametrize(
    ("shift", "sign", "expected"),
    [
        pytest.param({"minutes": 90}, 1, utc(2026, 6, 6, 10, 30), id="plus-minutes"),
        pytest.param({"hours": 3}, -1, utc(2026, 6, 6, 6, 0), id="minus-hours"),
        pytest.param({"days": 2}, 1, utc(2026, 6, 8, 9, 0), id="plus-days"),
        pytest.param({"days": 0}, 1, SATURDAY_TEN_BST, id="zero-days"),
        # A setting: offer_hours 6 (see tables below).
        pytest.param(
            {"hours": {"table": "settings", "column": "offer_hours"}},
            1,
            utc(2026, 6, 6, 15, 0),
            id="hours-from-a-setting",
        ),
        # Zero units or several: the check refuses them; at run time, no value.
        pytest.param({}, 1, None, id="no-unit"),
        pytest.param({"hours": 1, "minutes": 30}, 1, None, id="two-units"),
        pytest.param({"minutes": -5}, 1, None, id="negative-number"),
        pytest.param({"minutes": 1.5}, 1, None, id="fraction"),
        pytest.param({"minutes": 2.0}, 1, utc(2026, 6, 6, 9, 2), id="whole-float"),
        pytest.param({"days": 10**9}, 1, None, id="beyond-the-calendar"),
    ],
)
def test_apply_shift(shift: dict[str, Any], sign: int, expected: datetime | None) -> None:
    tables = {"settings": [{"offer_hours": 6}]}
    result = apply_shift(SATURDAY_TEN_BST, Shift.model_validate(shift), sign, tables, LONDON)
    assert result == expected


@pytest.mark.parametrize(
    ("hours", "expected"),
    [
        # Valid_to 20:00Z on 5 June minus the setting's hours.
        pytest.param(6, utc(2026, 6, 5, 14, 0), id="integer"),
        pytest.param("6", utc(2026, 6, 5, 14, 0), id="digits-in-text"),
        pytest.param(Decimal("6"), utc(2026, 6, 5, 14, 0), id="numeric-column"),
        pytest.param(6.0, utc(2026, 6, 5, 14, 0), id="whole-float"),
        pytest.param(0, utc(2026, 6, 5, 20, 0), id="zero"),
        pytest.param("", None, id="empty"),
        pytest.param(None, None, id="null"),
        pytest.param(-3, None, id="negative"),
        pytest.param("-3", None, id="negative-text"),
        pytest.param("abc", None, id="not-a-number"),
        pytest.param("1.5", None, id="fraction-text"),
        pytest.param(1.5, None, id="fraction"),
        pytest.param(Decimal("1.5"), None, id="fraction-numeric"),
        pytest.param(Decimal("NaN"), None, id="nan"),
        pytest.param(float("inf"), None, id="infinity"),
        pytest.param(True, None, id="yes-no"),
        pytest.param("٦", None, id="arabic-indic-digit"),
    ],
)
def test_shift_from_a_setting(hours: Any, expected: datetime | None) -> None:
    moment = {"column": "valid_to", "minus": {"hours": {"table": "settings", "column": "h"}}}
    tables = {"settings": [{"h": hours}]}
    assert read(moment, {"valid_to": utc(2026, 6, 5, 20, 0)}, tables=tables) == expected


def test_shift_from_a_two_row_settings_table_has_no_value() -> None:
    moment = {"column": "valid_to", "minus": {"hours": {"table": "settings", "column": "h"}}}
    tables = {"settings": [{"h": 6}, {"h": 6}]}
    assert read(moment, {"valid_to": utc(2026, 6, 5, 20, 0)}, tables=tables) is None


def test_plus_and_minus_together_have_no_value() -> None:
    moment = {"column": "valid_to", "plus": {"hours": 1}, "minus": {"hours": 1}}
    assert read(moment, {"valid_to": utc(2026, 6, 5, 20, 0)}) is None


def test_one_day_after_into_the_spring_gap_reads_the_hour_after() -> None:
    # Berlin: 02:30 on Saturday 28 March 2026 (CET, 01:30Z) plus one calendar day is 02:30 on
    # Sunday the 29th, which the clocks skip: it reads 03:30 CEST = 01:30Z.
    moment = {"column": "day", "time": "02:30", "plus": {"days": 1}}
    assert read(moment, {"day": date(2026, 3, 28)}, zone=BERLIN) == utc(2026, 3, 29, 1, 30)


def test_one_day_after_the_second_pass_of_a_fold_keeps_the_wall_time() -> None:
    # New York: 06:30Z on 1 November 2026 is the second 01:30 (EST). One day later is 01:30
    # EST on Monday the 2nd = 06:30Z.
    moment = {"column": "at", "plus": {"days": 1}}
    assert read(moment, {"at": utc(2026, 11, 1, 6, 30)}, zone=NEW_YORK) == utc(2026, 11, 2, 6, 30)


@pytest.mark.parametrize(
    ("tables", "expected"),
    [
        pytest.param({"settings": [{"h": 1}]}, 1, id="one-row"),
        pytest.param({"settings": [{"h": 1}, {"h": 2}]}, None, id="two-rows"),
        pytest.param({"settings": []}, None, id="empty-table"),
        pytest.param({}, None, id="no-table"),
        pytest.param({"settings": [{}]}, None, id="no-column"),
    ],
)
def test_read_setting(tables: dict[str, Any], expected: Any) -> None:
    assert read_setting(SettingRef(table="settings", column="h"), tables) == expected


# --- or ---------------------------------------------------------------------------


CHAIN = {
    "column": "a",
    "or": [
        {"column": "b", "time": {"column": "b_time"}},
        {"column": "c", "or": [{"column": "d", "plus": {"hours": 1}}]},
        {"column": "e", "minus": {"days": 1}},
    ],
}


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        pytest.param({"a": utc(2026, 6, 1, 8)}, Reading(utc(2026, 6, 1, 8), 0), id="itself"),
        # b on Tuesday 2 June at 9:15 BST = 08:15Z.
        pytest.param(
            {"b": date(2026, 6, 2), "b_time": "9:15"},
            Reading(utc(2026, 6, 2, 8, 15), 1),
            id="first-fallback",
        ),
        # b has no kept time: no value, so c, whose own or reads d plus an hour.
        pytest.param(
            {"b": date(2026, 6, 2), "d": utc(2026, 6, 3, 8)},
            Reading(utc(2026, 6, 3, 9), 2),
            id="nested-or-counts-as-its-parent",
        ),
        # e minus one calendar day, same wall time.
        pytest.param({"e": utc(2026, 6, 4, 8)}, Reading(utc(2026, 6, 3, 8), 3), id="last"),
        pytest.param({}, None, id="none-answers"),
    ],
)
def test_or_reads_fallbacks_in_turn(row: dict[str, Any], expected: Reading | None) -> None:
    ctx = MomentContext(row=row, zone=LONDON)
    assert resolve_moment(Moment.model_validate(CHAIN), ctx) == expected
