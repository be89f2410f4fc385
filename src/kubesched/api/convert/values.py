"""Typed values the kinds share beyond the reader kit: RFC 3339 times, resource
lists (quantities in scheduler units) and IntOrString counts or percentages."""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from typing import Any, Final

from kubesched.api.errors import InputError
from kubesched.api.messages import child, describe, fail, invalid, quote
from kubesched.api.quantity import QuantityError, scheduler_amount
from kubesched.api.reader import INT64_MAX, Raw, as_int, as_map, as_str
from kubesched.api.types import CPU, IntOrString, Time

PERCENT_MSG: Final = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)
_PERCENT_RE: Final = re.compile(r"^[0-9]+%$")
_RFC3339_RE: Final = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|z|[+-]\d{2}:\d{2})$"
)


def parse_time(value: Any, path: str) -> Time:
    """An RFC 3339 time as integer nanoseconds since the Unix epoch (not rebased)."""
    if isinstance(value, _dt.datetime):  # an explicit !!timestamp tag
        stamp: _dt.datetime = value
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=_dt.UTC)
        delta = stamp - _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
        seconds: int = delta.days * 86_400 + delta.seconds
        return seconds * 10**9 + delta.microseconds * 1000
    text = as_str(value, path)
    m = _RFC3339_RE.match(text)
    if m is None:
        raise _bad_time(text, path)
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    try:
        _dt.datetime(year, month, day, hour, minute, second)
    except ValueError:
        raise _bad_time(text, path) from None
    secs = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    frac = m.group(7) or ""
    nanos = int((frac + "000000000")[:9])
    zone = m.group(8)
    if zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        zh, zm = int(zone[1:3]), int(zone[4:6])
        if zh > 23 or zm > 59:
            raise _bad_time(text, path)
        secs -= sign * (zh * 3600 + zm * 60)
    return secs * 10**9 + nanos


def _bad_time(text: str, path: str) -> InputError:
    return fail(path, f'{quote(text)}: expected an RFC 3339 time such as "2024-01-02T03:04:05Z"')


def opt_time(raw: Raw, key: str, path: str) -> Time | None:
    value = raw.get(key)
    if value is None:
        return None
    return parse_time(value, child(path, key))


def resource_list(raw: Raw, key: str, path: str) -> dict[str, int]:
    """A ResourceList in scheduler units; bad quantities name the resource's path."""
    p = child(path, key)
    out: dict[str, int] = {}
    for name, text in as_map(raw.get(key), p).items():
        if not isinstance(name, str):
            raise fail(p, f"expected string keys, got {describe(name)}")
        rp = f"{p}.{name}"
        # null is a zero quantity (Quantity.UnmarshalJSON)
        if text is not None and (isinstance(text, bool) or not isinstance(text, str | int | float)):
            raise fail(rp, f"expected a quantity, got {describe(text)}")
        cache_key = (name == CPU, type(text), text)
        amount = _AMOUNTS.get(cache_key)
        if amount is None:
            amount = _amount(name, text, rp)
            if len(_AMOUNTS) < 65536:
                _AMOUNTS[cache_key] = amount
        out[name] = amount
    return out


# (is cpu, type, text) -> amount: inputs repeat the same few quantities endlessly.
_AMOUNTS: dict[tuple[bool, type, str | int | float | None], int] = {}


def _amount(name: str, text: str | int | float | None, path: str) -> int:
    try:
        amount = scheduler_amount(name, text)
    except (QuantityError, ValueError, OverflowError) as err:
        shown = text if isinstance(text, str) else repr(text)
        raise fail(path, f"{quote(shown)}: {err}") from None
    if amount < 0:
        raise fail(path, invalid(str(text), "must be greater than or equal to 0"))
    if amount > INT64_MAX:
        raise fail(path, invalid(str(text), "value is too large"))
    return amount


def opt_int_or_percent(
    raw: Raw, key: str, path: str, *, at_most_100: bool = False
) -> IntOrString | None:
    """A non-negative IntOrString (``ValidatePositiveIntOrPercent``): an int32 or a
    percentage; ``at_most_100`` also refuses percentages over 100% (a PDB's)."""
    value = raw.get(key)
    p = child(path, key)
    if value is None:
        return None
    if isinstance(value, str):
        if not _PERCENT_RE.match(value):
            raise fail(p, invalid(value, PERCENT_MSG))
        if at_most_100 and int(value[:-1]) > 100:
            raise fail(p, invalid(value, "must not be greater than 100%"))
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        n = as_int(value, p, 32)
        if n < 0:
            raise fail(p, invalid(n, "must be greater than or equal to 0"))
        return n
    raise fail(p, f"expected an integer or a percentage, got {describe(value)}")
