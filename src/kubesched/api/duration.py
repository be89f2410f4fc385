"""Go durations: ``time.ParseDuration`` and ``time.Duration.String``, exactly.

Durations are integer nanoseconds (int64 range), like ``api.types.Time``. Parsing
follows Go's src/time/format.go (behaviour, not code): signed sequences of decimal
numbers with optional fraction and a unit among ``ns us µs μs ms s m h``; ``"0"``
alone is zero; fractions go through float64 as in Go (``"1.0000000001s"`` agrees to
the nanosecond); overflow past int64 is an error except ``-9223372036854775808ns``.
Errors carry Go's message and quoting (``time: invalid duration "x"``, ``time:
missing unit in duration "10"``, ``time: unknown unit "d" in duration "1d"``).
"""

from __future__ import annotations

from typing import Final

from kubesched.api.goformat import time_quote

NANOSECOND: Final = 1
MICROSECOND: Final = 1_000
MILLISECOND: Final = 1_000_000
SECOND: Final = 1_000_000_000
MINUTE: Final = 60 * SECOND
HOUR: Final = 60 * MINUTE

_UNITS: Final = {
    "ns": NANOSECOND,
    "us": MICROSECOND,
    "\u00b5s": MICROSECOND,  # micro sign
    "\u03bcs": MICROSECOND,  # Greek mu
    "ms": MILLISECOND,
    "s": SECOND,
    "m": MINUTE,
    "h": HOUR,
}

_DIGITS: Final = frozenset("0123456789")
_TWO63: Final = 1 << 63
_UINT64_MASK: Final = (1 << 64) - 1


class DurationError(ValueError):
    """Not a Go duration; the message is Go's."""


def _invalid(orig: str) -> DurationError:
    return DurationError("time: invalid duration " + time_quote(orig))


def parse_duration(text: str) -> int:
    """Nanoseconds of a Go duration string (``90s``, ``1h30m``, ``-1.5h``, ``0``);
    DurationError (a ValueError) with Go's message."""
    orig = text
    s = text
    neg = False
    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise _invalid(orig)

    d = 0  # uint64 in Go
    i = 0
    n = len(s)
    while i < n:
        if not (s[i] == "." or s[i] in _DIGITS):
            raise _invalid(orig)
        # Integer part; Go gives up past 2^63.
        start = i
        v = 0
        while i < n and s[i] in _DIGITS:
            if v > _TWO63 // 10:
                raise _invalid(orig)
            v = v * 10 + ord(s[i]) - 48
            if v > _TWO63:
                raise _invalid(orig)
            i += 1
        pre = i != start

        # Fraction: stops accumulating precision instead of failing.
        f = 0
        scale = 1.0
        post = False
        if i < n and s[i] == ".":
            i += 1
            start = i
            overflow = False
            while i < n and s[i] in _DIGITS:
                if not overflow:
                    if f > (_TWO63 - 1) // 10:
                        overflow = True
                    else:
                        y = f * 10 + ord(s[i]) - 48
                        if y > _TWO63:
                            overflow = True
                        else:
                            f = y
                            scale *= 10
                i += 1
            post = i != start
        if not pre and not post:
            raise _invalid(orig)

        # Unit: everything up to the next '.' or digit.
        start = i
        while i < n and not (s[i] == "." or s[i] in _DIGITS):
            i += 1
        if i == start:
            raise DurationError("time: missing unit in duration " + time_quote(orig))
        u = s[start:i]
        unit = _UNITS.get(u)
        if unit is None:
            raise DurationError(
                "time: unknown unit " + time_quote(u) + " in duration " + time_quote(orig)
            )
        if v > _TWO63 // unit:
            raise _invalid(orig)
        v *= unit
        if f > 0:
            # float64, as Go: nanosecond-accurate for fractions of hours.
            v += int(float(f) * (float(unit) / scale))
            if v > _TWO63:
                raise _invalid(orig)
        d = (d + v) & _UINT64_MASK  # uint64 addition wraps in Go
        if d > _TWO63:
            raise _invalid(orig)
    if neg:
        # -Duration(d): 2^63 wraps to MinInt64, which is its own negation.
        return -d
    if d > _TWO63 - 1:
        raise _invalid(orig)
    return d


def _fmt_frac(v: int, prec: int) -> tuple[str, int]:
    """Go's fmtFrac: the fraction of v/10**prec without trailing zeros (and
    without the point when it is zero), and v/10**prec."""
    digits: list[str] = []
    printing = False
    for _ in range(prec):
        digit = v % 10
        printing = printing or digit != 0
        if printing:
            digits.append(chr(48 + digit))
        v //= 10
    if not printing:
        return "", v
    return "." + "".join(reversed(digits)), v


def format_duration(ns: int) -> str:
    """``time.Duration(ns).String()`` for int64 ``ns``: ``0s``, ``1.5µs``, ``1h30m0s``."""
    if not -_TWO63 <= ns < _TWO63:
        raise ValueError(f"duration out of int64 range: {ns}")
    u = -ns if ns < 0 else ns
    sign = "-" if ns < 0 else ""
    if u < SECOND:
        # Smaller units for sub-second durations, like 1.2ms.
        if u == 0:
            return "0s"
        if u < MICROSECOND:
            return f"{sign}{u}ns"
        if u < MILLISECOND:
            frac, whole = _fmt_frac(u, 3)
            return f"{sign}{whole}{frac}\u00b5s"
        frac, whole = _fmt_frac(u, 6)
        return f"{sign}{whole}{frac}ms"
    frac, secs = _fmt_frac(u, 9)
    out = f"{secs % 60}{frac}s"
    mins = secs // 60
    if mins > 0:
        out = f"{mins % 60}m{out}"
        hours = mins // 60
        if hours > 0:
            out = f"{hours}h{out}"
    return sign + out
