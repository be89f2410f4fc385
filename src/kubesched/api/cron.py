"""Cron schedules as the CronJob controller reads them: ``cron.ParseStandard`` of
github.com/robfig/cron/v3 (parser.go, spec.go, constantdelay.go).

- Five fields: minute (0-59), hour (0-23), day of month (1-31), month (1-12 or
  ``jan``-``dec``), day of week (0-6 or ``sun``-``sat``); each a comma list of
  ``*``/``?``, ``N``, ``N-M``, with an optional ``/step`` (``N/step`` means
  ``N-max/step``); names are case-insensitive.
- Descriptors ``@yearly``/``@annually``, ``@monthly``, ``@weekly``,
  ``@daily``/``@midnight``, ``@hourly`` and ``@every <Go duration>``.
- When both day fields are restricted (neither written as ``*``/``?``), a day
  matches if either does; otherwise both must (spec.go ``dayMatches``).
- ``next`` finds the first matching whole minute strictly after a time (Unix-epoch
  ns), in the schedule's time zone, within five years (else None, Go's zero time).

Errors carry robfig's messages (``expected exactly 5 fields, found 4: [* * * *]``).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from kubesched.api.duration import DurationError, parse_duration

NANOS: Final = 1_000_000_000
_UTC: Final = _dt.UTC
_EPOCH: Final = _dt.datetime(1970, 1, 1, tzinfo=_UTC)
STAR_BIT: Final = 1 << 63

_MONTHS: Final[Mapping[str, int]] = {
    name: i + 1
    for i, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
    )
}
_DOWS: Final[Mapping[str, int]] = {
    name: i for i, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))
}


class CronError(ValueError):
    """Not a schedule ParseStandard accepts; the message is robfig/cron's."""


@dataclass(frozen=True, slots=True)
class _Bounds:
    lo: int
    hi: int
    names: Mapping[str, int] | None = None


MINUTES: Final = _Bounds(0, 59)
HOURS: Final = _Bounds(0, 23)
DOM: Final = _Bounds(1, 31)
MONTHS: Final = _Bounds(1, 12, _MONTHS)
DOW: Final = _Bounds(0, 6, _DOWS)


def _bits(lo: int, hi: int, step: int) -> int:
    out = 0
    for i in range(lo, hi + 1, step):
        out |= 1 << i
    return out


def _all(b: _Bounds) -> int:
    return _bits(b.lo, b.hi, 1) | STAR_BIT


def _atoi(expr: str) -> int:
    """strconv.Atoi as mustParseInt uses it, with its error text."""
    body = expr[1:] if expr[:1] in ("+", "-") else expr
    if not body or not body.isascii() or not body.isdigit():
        raise CronError(
            f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": invalid syntax'
        )
    num = int(expr)
    if not -(2**63) <= num < 2**63:
        raise CronError(
            f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": value out of range'
        )
    if num < 0:
        raise CronError(f"negative number ({num}) not allowed: {expr}")
    return num


def _int_or_name(expr: str, names: Mapping[str, int] | None) -> int:
    if names is not None:
        named = names.get(expr.lower())
        if named is not None:
            return named
    return _atoi(expr)


def _range(expr: str, b: _Bounds) -> int:
    """getRange: the bits of ``number | number "-" number [ "/" number ]`` or ``*``/``?``."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    extra = 0
    if low_and_high[0] in ("*", "?"):
        start, end, extra = b.lo, b.hi, STAR_BIT
    else:
        start = _int_or_name(low_and_high[0], b.names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], b.names)
        else:
            raise CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _atoi(range_and_step[1])
        if single:
            end = b.hi  # "N/step" means "N-max/step"
        if step > 1:
            extra = 0
    else:
        raise CronError(f"too many slashes: {expr}")
    if start < b.lo:
        raise CronError(f"beginning of range ({start}) below minimum ({b.lo}): {expr}")
    if end > b.hi:
        raise CronError(f"end of range ({end}) above maximum ({b.hi}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")
    return _bits(start, end, step) | extra


def _field(text: str, b: _Bounds) -> int:
    bits = 0
    for expr in (e for e in text.split(",") if e):
        bits |= _range(expr, b)
    return bits


@dataclass(frozen=True, slots=True)
class CronSchedule:
    """A parsed schedule: bit sets per field (``STAR_BIT`` marks ``*``), or a
    constant delay (``@every``); ``time_zone`` None is UTC."""

    minute: int = 0
    hour: int = 0
    dom: int = 0
    month: int = 0
    dow: int = 0
    every: int | None = None
    time_zone: str | None = None

    def next(self, t: int) -> int | None:
        """The first activation strictly after ``t`` (Schedule.Next), or None when
        there is none within five years."""
        if self.every is not None:
            return t + self.every - t % NANOS
        loc = _location(self.time_zone)
        return _spec_next(self, t, loc)


def _location(name: str | None) -> _dt.tzinfo:
    if name is None or name == "UTC":
        return _UTC
    return ZoneInfo(name)


def load_location(name: str) -> str | None:
    """Go's ``time.LoadLocation`` error for an unknown zone, or None when it loads."""
    if name in {"UTC", ""}:
        return None
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return f"unknown time zone {name}"
    return None


def parse_standard(spec: str, time_zone: str | None = None) -> CronSchedule:
    """``cron.ParseStandard`` (five fields or a descriptor); ``time_zone`` is the
    CronJob's ``spec.timeZone`` (the controller prefixes ``TZ=`` to the schedule)."""
    if not spec:
        raise CronError("empty spec string")
    if spec.startswith(("TZ=", "CRON_TZ=")):
        # A time zone prefix (the API server then refuses TZ in a CronJob's schedule).
        space = spec.find(" ")
        name = spec[spec.index("=") + 1 : space if space >= 0 else len(spec)]
        problem = load_location(name)
        if space < 0 or problem is not None:
            raise CronError(f"provided bad location {name}: {problem or 'missing schedule'}")
        time_zone = name
        spec = spec[space:].strip()
    if spec.startswith("@"):
        return _descriptor(spec, time_zone)
    fields = spec.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    return CronSchedule(
        minute=_field(fields[0], MINUTES),
        hour=_field(fields[1], HOURS),
        dom=_field(fields[2], DOM),
        month=_field(fields[3], MONTHS),
        dow=_field(fields[4], DOW),
        time_zone=time_zone,
    )


def _descriptor(spec: str, time_zone: str | None) -> CronSchedule:
    # (hour, dom, month, dow) of each descriptor; minute 0 for all.
    fixed = {
        "@yearly": (1 << HOURS.lo, 1 << DOM.lo, 1 << MONTHS.lo, _all(DOW)),
        "@annually": (1 << HOURS.lo, 1 << DOM.lo, 1 << MONTHS.lo, _all(DOW)),
        "@monthly": (1 << HOURS.lo, 1 << DOM.lo, _all(MONTHS), _all(DOW)),
        "@weekly": (1 << HOURS.lo, _all(DOM), _all(MONTHS), 1 << DOW.lo),
        "@daily": (1 << HOURS.lo, _all(DOM), _all(MONTHS), _all(DOW)),
        "@midnight": (1 << HOURS.lo, _all(DOM), _all(MONTHS), _all(DOW)),
        "@hourly": (_all(HOURS), _all(DOM), _all(MONTHS), _all(DOW)),
    }.get(spec)
    if fixed is not None:
        hour, dom, month, dow = fixed
        return CronSchedule(1 << MINUTES.lo, hour, dom, month, dow, time_zone=time_zone)
    every = "@every "
    if spec.startswith(every):
        try:
            delay = parse_duration(spec[len(every) :])
        except DurationError as err:
            raise CronError(f"failed to parse duration {spec}: {err}") from None
        delay = max(delay, NANOS)  # constantdelay.go Every: at least a second,
        return CronSchedule(every=delay - delay % NANOS, time_zone=time_zone)  # whole seconds
    raise CronError(f"unrecognized descriptor: {spec}")


# --------------------------------------------------------------------------- next


def _to_dt(t: int, loc: _dt.tzinfo) -> _dt.datetime:
    secs, ns = divmod(t, NANOS)
    return (_EPOCH + _dt.timedelta(seconds=secs, microseconds=ns // 1000)).astimezone(loc)


def _to_ns(d: _dt.datetime) -> int:
    delta = d - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * NANOS + delta.microseconds * 1000


def _add(d: _dt.datetime, seconds: int) -> _dt.datetime:
    """time.Time.Add: absolute time."""
    return (d.astimezone(_UTC) + _dt.timedelta(seconds=seconds)).astimezone(d.tzinfo)


def _date(
    loc: _dt.tzinfo, year: int, month: int, day: int, hour: int = 0, minute: int = 0
) -> _dt.datetime:
    """time.Date: wall-clock fields normalized (month overflow into the year, day
    overflow into the month)."""
    y, m = divmod((year * 12 + month - 1), 12)
    base = _dt.datetime(y, m + 1, 1)
    naive = base + _dt.timedelta(days=day - 1, hours=hour, minutes=minute)
    return naive.replace(tzinfo=loc).astimezone(_UTC).astimezone(loc)


def _day_matches(s: CronSchedule, d: _dt.datetime) -> bool:
    dom_match = bool(1 << d.day & s.dom)
    dow_match = bool(1 << ((d.weekday() + 1) % 7) & s.dow)
    if s.dom & STAR_BIT or s.dow & STAR_BIT:
        return dom_match and dow_match
    return dom_match or dow_match


_Truncate = Callable[[_dt.datetime, _dt.tzinfo], _dt.datetime]
_TIME_UNITS: Final[tuple[tuple[Callable[[_dt.datetime], int], _Truncate, int], ...]] = (
    # (the unit's field, truncation to the unit as upstream does it, the unit in seconds)
    (lambda d: d.hour, lambda d, loc: _date(loc, d.year, d.month, d.day, d.hour), 3600),
    (lambda d: d.minute, lambda d, loc: _to_dt(_to_ns(d) - _to_ns(d) % (60 * NANOS), loc), 60),
    (lambda d: d.second, lambda d, loc: _to_dt(_to_ns(d) - _to_ns(d) % NANOS, loc), 1),
)


def _spec_next(s: CronSchedule, t: int, loc: _dt.tzinfo) -> int | None:
    """SpecSchedule.Next with the seconds field fixed at 0 (ParseStandard)."""
    # Start at the earliest possible time: the upcoming whole second.
    d = _to_dt(t + NANOS - t % NANOS, loc)
    added = False
    year_limit = d.year + 5
    while True:  # WRAP
        if d.year > year_limit:
            return None
        wrapped = False
        while not (1 << d.month & s.month):
            if not added:
                added = True
                d = _date(loc, d.year, d.month, 1)
            d = _date(loc, d.year, d.month + 1, d.day, d.hour, d.minute)
            if d.month == 1:
                wrapped = True
                break
        if wrapped:
            continue
        while not _day_matches(s, d):
            if not added:
                added = True
                d = _date(loc, d.year, d.month, d.day)
            d = _date(loc, d.year, d.month, d.day + 1, d.hour, d.minute)
            if d.hour != 0:  # DST: back to midnight
                d = _add(d, (24 - d.hour) * 3600 if d.hour > 12 else -d.hour * 3600)
            if d.day == 1:
                wrapped = True
                break
        if wrapped:
            continue
        for (unit_of, truncate, step), ok in zip(_TIME_UNITS, (s.hour, s.minute, 1), strict=True):
            while not (1 << unit_of(d) & ok):  # seconds: 0 only (bit 0)
                if not added:
                    added = True
                    d = truncate(d, loc)
                d = _add(d, step)
                if unit_of(d) == 0:
                    wrapped = True
                    break
            if wrapped:
                break
        if wrapped:
            continue
        return _to_ns(d)
