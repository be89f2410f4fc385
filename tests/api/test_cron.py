"""Cron schedules (api/cron.py) against robfig/cron v3, which the CronJob controller
and the API server's validation use (``cron.ParseStandard``).

Cases come from robfig/cron's parser_test.go (TestRange, TestParseScheduleErrors,
TestStandardSpecSchedule) and spec_test.go (TestActivation, TestNext), with the
seconds field of the six-field cases dropped where it is 0 (ParseStandard has no
seconds field).
"""

from __future__ import annotations

import datetime as dt

import pytest

from kubesched.api.cron import (
    DOM,
    DOW,
    HOURS,
    MINUTES,
    MONTHS,
    STAR_BIT,
    CronError,
    _Bounds,
    _range,
    parse_standard,
)

NANOS = 10**9


def t(text: str, tz: str = "UTC") -> int:
    """A wall-clock time in the given zone, as nanoseconds since the Unix epoch."""
    from zoneinfo import ZoneInfo

    d = dt.datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(tz))
    return int(d.timestamp()) * NANOS


@pytest.mark.parametrize(
    ("expr", "lo", "hi", "bits", "err"),
    [
        pytest.param("5", 0, 7, 1 << 5, "", id="TestRange/5"),
        pytest.param("0", 0, 7, 1 << 0, "", id="TestRange/0"),
        pytest.param("7", 0, 7, 1 << 7, "", id="TestRange/7"),
        pytest.param("5-5", 0, 7, 1 << 5, "", id="TestRange/5-5"),
        pytest.param("5-6", 0, 7, 1 << 5 | 1 << 6, "", id="TestRange/5-6"),
        pytest.param("5-7", 0, 7, 1 << 5 | 1 << 6 | 1 << 7, "", id="TestRange/5-7"),
        pytest.param("5-6/2", 0, 7, 1 << 5, "", id="TestRange/5-6/2"),
        pytest.param("5-7/2", 0, 7, 1 << 5 | 1 << 7, "", id="TestRange/5-7/2"),
        pytest.param("5-7/1", 0, 7, 1 << 5 | 1 << 6 | 1 << 7, "", id="TestRange/5-7/1"),
        pytest.param("*", 1, 3, 1 << 1 | 1 << 2 | 1 << 3 | STAR_BIT, "", id="TestRange/*"),
        pytest.param("*/2", 1, 3, 1 << 1 | 1 << 3, "", id="TestRange/*/2 drops the star bit"),
        pytest.param("5--5", 0, 0, 0, "too many hyphens: 5--5", id="TestRange/5--5"),
        pytest.param(
            "2-x",
            1,
            5,
            0,
            'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax',
            id="TestRange/2-x",
        ),
        pytest.param(
            "*/-12", 0, 0, 0, "negative number (-12) not allowed: -12", id="TestRange/*/-12"
        ),
        pytest.param("*//2", 0, 0, 0, "too many slashes: *//2", id="TestRange/*//2"),
        pytest.param("1", 3, 5, 0, "beginning of range (1) below minimum (3): 1", id="TestRange/1"),
        pytest.param("6", 3, 5, 0, "end of range (6) above maximum (5): 6", id="TestRange/6"),
        pytest.param(
            "5-3",
            3,
            5,
            0,
            "beginning of range (5) beyond end of range (3): 5-3",
            id="TestRange/5-3",
        ),
        pytest.param(
            "*/0", 0, 0, 0, "step of range should be a positive number: */0", id="TestRange/*/0"
        ),
    ],
)
def test_range(expr: str, lo: int, hi: int, bits: int, err: str) -> None:
    bounds = _Bounds(lo, hi)
    if err:
        with pytest.raises(CronError) as info:
            _range(expr, bounds)
        assert str(info.value) == err
    else:
        assert _range(expr, bounds) == bits


@pytest.mark.parametrize(
    ("spec", "err"),
    [
        pytest.param(
            "5 j * * *",
            'failed to parse int from j: strconv.Atoi: parsing "j": invalid syntax',
            id="TestParseScheduleErrors/* 5 j * * *",
        ),
        pytest.param(
            "@every Xm",
            'failed to parse duration @every Xm: time: invalid duration "Xm"',
            id="TestParseScheduleErrors/@every Xm",
        ),
        pytest.param(
            "@unrecognized",
            "unrecognized descriptor: @unrecognized",
            id="TestParseScheduleErrors/@unrecognized",
        ),
        pytest.param(
            "* * * *",
            "expected exactly 5 fields, found 4: [* * * *]",
            id="TestParseScheduleErrors/* * * *",
        ),
        pytest.param(
            "0 * * * * *",
            "expected exactly 5 fields, found 6: [0 * * * * *]",
            id="ParseStandard has no seconds field",
        ),
        pytest.param("", "empty spec string", id="TestParseScheduleErrors/empty"),
        pytest.param("* * * * 7", "end of range (7) above maximum (6): 7", id="day of week is 0-6"),
    ],
)
def test_parse_errors(spec: str, err: str) -> None:
    with pytest.raises(CronError) as info:
        parse_standard(spec)
    assert str(info.value) == err


def test_standard_spec_schedule_fields() -> None:
    """TestStandardSpecSchedule: "5 * * * *" is minute 5 of every hour."""
    s = parse_standard("5 * * * *")
    assert s.minute == 1 << 5
    assert s.hour == (1 << 24) - 1 | STAR_BIT
    assert s.dom == ((1 << 32) - 2) | STAR_BIT
    assert s.month == ((1 << 13) - 2) | STAR_BIT
    assert s.dow == (1 << 7) - 1 | STAR_BIT
    assert (MINUTES.hi, HOURS.hi, DOM.lo, MONTHS.hi, DOW.hi) == (59, 23, 1, 12, 6)


@pytest.mark.parametrize(
    ("when", "spec", "expected"),
    [
        pytest.param(
            "2012-07-09T15:00", "0/15 * * * *", True, id="TestActivation/every 15 min 15:00"
        ),
        pytest.param(
            "2012-07-09T15:45", "0/15 * * * *", True, id="TestActivation/every 15 min 15:45"
        ),
        pytest.param(
            "2012-07-09T15:40", "0/15 * * * *", False, id="TestActivation/every 15 min 15:40"
        ),
        pytest.param("2012-07-09T15:05", "5/15 * * * *", True, id="TestActivation/5/15 at 15:05"),
        pytest.param("2012-07-09T15:20", "5/15 * * * *", True, id="TestActivation/5/15 at 15:20"),
        pytest.param("2012-07-09T15:50", "5/15 * * * *", True, id="TestActivation/5/15 at 15:50"),
        pytest.param(
            "2012-07-15T15:00", "0/15 * * Jul *", True, id="TestActivation/named month Jul"
        ),
        pytest.param(
            "2012-07-15T15:00", "0/15 * * Jun *", False, id="TestActivation/named month Jun"
        ),
        pytest.param(
            "2012-07-15T08:30", "30 08 ? Jul Sun", True, id="TestActivation/everything set, dow"
        ),
        pytest.param(
            "2012-07-15T08:30", "30 08 15 Jul ?", True, id="TestActivation/everything set, dom"
        ),
        pytest.param(
            "2012-07-16T08:30", "30 08 ? Jul Sun", False, id="TestActivation/Monday, dow Sun"
        ),
        pytest.param("2012-07-16T08:30", "30 08 15 Jul ?", False, id="TestActivation/16th, dom 15"),
        pytest.param("2012-07-09T15:00", "@hourly", True, id="TestActivation/@hourly on the hour"),
        pytest.param("2012-07-09T15:04", "@hourly", False, id="TestActivation/@hourly at :04"),
        pytest.param("2012-07-09T15:00", "@daily", False, id="TestActivation/@daily at 15:00"),
        pytest.param("2012-07-09T00:00", "@daily", True, id="TestActivation/@daily at midnight"),
        pytest.param("2012-07-09T00:00", "@weekly", False, id="TestActivation/@weekly on Monday"),
        pytest.param("2012-07-08T00:00", "@weekly", True, id="TestActivation/@weekly on Sunday"),
        pytest.param("2012-07-08T01:00", "@weekly", False, id="TestActivation/@weekly at 01:00"),
        pytest.param(
            "2012-07-08T00:00", "@monthly", False, id="TestActivation/@monthly on the 8th"
        ),
        pytest.param("2012-07-01T00:00", "@monthly", True, id="TestActivation/@monthly on the 1st"),
        pytest.param(
            "2012-07-15T00:00", "* * 1,15 * Sun", True, id="TestActivation/dom or dow: both"
        ),
        pytest.param(
            "2012-06-15T00:00", "* * 1,15 * Sun", True, id="TestActivation/dom or dow: dom"
        ),
        pytest.param(
            "2012-08-01T00:00", "* * 1,15 * Sun", True, id="TestActivation/dom or dow: 1st"
        ),
        pytest.param(
            "2012-07-15T00:00", "* * * * Mon", False, id="TestActivation/star dom: dow must match"
        ),
        # v3: a stepped star ("*/10") is no star, so day of month OR day of week: Sunday.
        pytest.param(
            "2012-07-15T00:00", "* * */10 * Sun", True, id="TestActivation/*/10 is no star"
        ),
        pytest.param(
            "2012-07-09T00:00", "* * 1,15 * *", False, id="TestActivation/star dow: dom 9"
        ),
        pytest.param(
            "2012-07-15T00:00", "* * 1,15 * *", True, id="TestActivation/star dow: dom 15"
        ),
        pytest.param("2012-07-15T00:00", "* * */2 * Sun", True, id="TestActivation/*/2 or Sunday"),
    ],
)
def test_activation(when: str, spec: str, expected: bool) -> None:
    """A schedule activates at a time when Next(time - 1s) is that time."""
    at = t(when)
    assert (parse_standard(spec).next(at - NANOS) == at) is expected


@pytest.mark.parametrize(
    ("now", "spec", "expected", "tz"),
    [
        pytest.param(
            "2012-07-09T14:45", "0/15 * * * *", "2012-07-09T15:00", "UTC", id="TestNext/simple"
        ),
        pytest.param(
            "2012-07-09T14:59", "0/15 * * * *", "2012-07-09T15:00", "UTC", id="TestNext/14:59"
        ),
        pytest.param(
            "2012-07-09T14:59:59", "0/15 * * * *", "2012-07-09T15:00", "UTC", id="TestNext/14:59:59"
        ),
        pytest.param(
            "2012-07-09T15:45",
            "20-35/15 * * * *",
            "2012-07-09T16:20",
            "UTC",
            id="TestNext/wrap hours",
        ),
        pytest.param(
            "2012-07-09T23:46", "*/15 * * * *", "2012-07-10T00:00", "UTC", id="TestNext/wrap days"
        ),
        pytest.param(
            "2012-07-09T23:45",
            "20-35/15 * * * *",
            "2012-07-10T00:20",
            "UTC",
            id="TestNext/wrap days 2",
        ),
        pytest.param(
            "2012-07-09T23:35",
            "0 0 9 Apr-Oct ?",
            "2012-08-09T00:00",
            "UTC",
            id="TestNext/wrap months",
        ),
        pytest.param(
            "2012-07-09T23:35",
            "0 0 */5 Apr,Aug,Oct Mon",
            "2012-08-01T00:00",  # v3: "*/5" is no star, so Aug 1 (day 1) matches
            "UTC",
            id="TestNext/wrap months, dom or dow",
        ),
        pytest.param(
            "2012-07-09T23:35", "0 0 */5 Oct Mon", "2012-10-01T00:00", "UTC", id="TestNext/October"
        ),
        pytest.param(
            "2012-07-09T23:35", "0 0 * Feb Mon", "2013-02-04T00:00", "UTC", id="TestNext/wrap years"
        ),
        pytest.param(
            "2012-07-09T23:35", "0 0 * Feb Mon/2", "2013-02-01T00:00", "UTC", id="TestNext/Mon/2"
        ),
        pytest.param(
            "2012-12-31T23:59:45", "* * * * *", "2013-01-01T00:00", "UTC", id="TestNext/wrap all"
        ),
        pytest.param(
            "2012-07-09T23:35", "0 0 29 Feb ?", "2016-02-29T00:00", "UTC", id="TestNext/leap year"
        ),
        pytest.param(
            "2012-03-11T00:00",
            "30 2 11 Mar ?",
            "2013-03-11T02:30",
            "America/New_York",
            id="TestNext/daylight savings time EST -> EDT",
        ),
        pytest.param(
            "2012-11-04T00:00",
            "30 2 04 Nov ?",
            "2012-11-04T02:30",
            "America/New_York",
            id="TestNext/daylight savings time EDT -> EST",
        ),
    ],
)
def test_next(now: str, spec: str, expected: str, tz: str) -> None:
    schedule = parse_standard(spec, None if tz == "UTC" else tz)
    assert schedule.next(t(now, tz)) == t(expected, tz)


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param("0 0 30 Feb ?", id="TestNext/unsatisfiable Feb 30"),
        pytest.param("0 0 31 Apr ?", id="TestNext/unsatisfiable Apr 31"),
    ],
)
def test_next_unsatisfiable_is_none(spec: str) -> None:
    assert parse_standard(spec).next(t("2012-07-09T23:35")) is None


def test_every_is_a_constant_delay_of_whole_seconds() -> None:
    """constantdelay.go: Next(t) = t + delay - t's nanoseconds; delays under a second
    are a second, others are rounded down to whole seconds."""
    at = t("2012-07-09T00:00") + 500_000_000
    assert parse_standard("@every 90s").next(at) == t("2012-07-09T00:01:30")
    assert parse_standard("@every 100ms").next(at) == t("2012-07-09T00:00:01")
    assert parse_standard("@every 1.5s").next(at) == t("2012-07-09T00:00:01")
