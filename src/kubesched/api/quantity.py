"""Kubernetes resource quantities, parsed exactly as apimachinery's ``resource.Quantity``.

Grammar (quantity.go's doc comment)::

    <quantity>  ::= <sign>? <number> <suffix>
    <number>    ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
    <suffix>    ::= Ki | Mi | Gi | Ti | Pi | Ei            (binary SI)
                  | n | u | m | "" | k | M | G | T | P | E  (decimal SI)
                  | e<signed int> | E<signed int>         (decimal exponent)

The parser transcribes upstream's *behaviour* (``parseQuantityString``,
``ParseQuantity``, ``suffixer.interpret``), quirks included: same accepted strings
and values, same messages for rejected ones:

- ``ERR_FORMAT_WRONG`` when the scanner cannot split (``"1.2.3"``, ``" 1"``, ``""``);
  ``ERR_SUFFIX`` for an unknown suffix (``"5i"``, ``"1e"``, ``"0.1mi"``);
  ``ERR_NUMERIC`` when the slow (``inf.Dec``) path sees no digit (``"e-10"``, ``".Pi"``).
- The fast path allows an empty or dot-only number: ``"-"``, ``"."``, ``"e3"``,
  ``"Ki"`` parse to 0, ``"1."``/``"1.G"`` to 1 and 1e9; ``"1E"`` is 10^18 while
  ``"1e"`` is an error; a decimal exponent is parsed as int64 and narrowed to int32
  with wrap-around (``"1e4294967297"`` is 10), as v1.36 does (master now rejects
  it, kubernetes#142395; we follow the release).
- Values are rounded away from zero to a multiple of 1n (``"0.1n"`` -> 1n) and
  binary-suffixed magnitudes are capped at 2^63-1 (``"9Ei"``), as the slow path does.

Limits (ours): magnitudes above 2^63-1 parse, but ``milli_value``/``value`` raise
``ERR_OUT_OF_RANGE`` (v1.36's int64 accessors return garbage, master saturates);
values of 10^1000 or more raise ``ERR_TOO_LARGE`` at parse time, bounding the work
on absurd exponents. The accessors round *away from zero* (``ceil`` for the
non-negative amounts the API server admits): ``MilliValue()``/``Value()`` of the
int64 fast path and master's documented behaviour (kubernetes#138510).
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Final

from kubesched.api.types import CPU

SPLIT_RE_STRING: Final = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"

# apimachinery's error texts, verbatim.
ERR_FORMAT_WRONG: Final = "quantities must match the regular expression '" + SPLIT_RE_STRING + "'"
ERR_NUMERIC: Final = "unable to parse numeric part of quantity"
ERR_SUFFIX: Final = "unable to parse quantity's suffix"
# Ours (see the module docstring).
ERR_TOO_LARGE: Final = "quantity is too large: its magnitude must be below 10^1000"
ERR_OUT_OF_RANGE: Final = "quantity does not fit an int64 in the unit asked for"

MAX_INT64: Final = 2**63 - 1
MIN_INT64: Final = -(2**63)

_DIGITS: Final = frozenset("0123456789")
_SUFFIX_CHARS: Final = frozenset("eEinumkKMGTP")

_DECIMAL_SI: Final = "DecimalSI"
_BINARY_SI: Final = "BinarySI"
_DECIMAL_EXPONENT: Final = "DecimalExponent"

# suffix -> (base, exponent); the lookup tables of suffix.go.
_DECIMAL_SUFFIXES: Final = {
    "": 0,
    "n": -9,
    "u": -6,
    "m": -3,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

# For format_bytes (largest first).
_BINARY_MULTIPLIERS: Final = tuple((s, 2**e) for s, e in reversed(_BINARY_SUFFIXES.items()))

# Go's unicode.IsSpace set, used by strings.TrimSpace (Quantity.UnmarshalJSON).
# Python's str.strip() would also strip U+001C..U+001F, which Go keeps.
_GO_SPACE: Final = frozenset(
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

_NANO: Final = 10**9
# Parse-time bound on the integer digits of a value (see the module docstring).
_MAX_INTEGER_DIGITS: Final = 1000
_TOO_LARGE: Final = 10**_MAX_INTEGER_DIGITS


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity; the message is apimachinery's."""


# --------------------------------------------------------------------------- scanning


def _scan(s: str) -> tuple[bool, str, str, str, str]:
    """Split like ``parseQuantityString``: (positive, value = sign and number as
    written, num without leading zeros or "0", denom = digits after the point,
    suffix). Only ASCII digits count, as Go compares bytes."""
    positive = True
    pos = 0
    end = len(s)
    if end and s[0] in "+-":
        positive = s[0] == "+"
        pos = 1

    # Leading zeros; a string that is only a sign and zeros is zero.
    while True:
        if pos >= end:
            return positive, "0", "0", "", ""
        if s[pos] != "0":
            break
        pos += 1

    i = pos
    while i < end and s[i] in _DIGITS:
        i += 1
    if i >= end:
        return positive, s, s[pos:], "", ""
    num = s[pos:i] or "0"
    pos = i

    denom = ""
    if s[pos] == ".":
        pos += 1
        i = pos
        while i < end and s[i] in _DIGITS:
            i += 1
        if i >= end:
            return positive, s, num, s[pos:], ""
        denom = s[pos:i]
        pos = i
    value = s[:pos]

    suffix_start = pos
    i = pos
    while i < end and s[i] in _SUFFIX_CHARS:
        i += 1
    if i >= end:
        return positive, value, num, denom, s[suffix_start:]
    pos = i
    if s[pos] in "+-":
        pos += 1
    i = pos
    while i < end and s[i] in _DIGITS:
        i += 1
    if i >= end:
        return positive, value, num, denom, s[suffix_start:]
    # Something other than an exponent follows the suffix.
    raise QuantityError(ERR_FORMAT_WRONG)


def _parse_go_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64): optional sign, ASCII digits, int64 range."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or any(c not in _DIGITS for c in body):
        return None
    n = int(body)
    if text[:1] == "-":
        n = -n
    return n if MIN_INT64 <= n <= MAX_INT64 else None


def _wrap32(n: int) -> int:
    """Go's int32 conversion / int32 arithmetic overflow (two's complement)."""
    return ((n + 2**31) % 2**32) - 2**31


def _interpret(suffix: str) -> tuple[int, int, str] | None:
    """(base, exponent, format) of a suffix, as ``quantitySuffixer.interpret``."""
    exp = _DECIMAL_SUFFIXES.get(suffix)
    if exp is not None:
        return 10, exp, _DECIMAL_SI
    exp = _BINARY_SUFFIXES.get(suffix)
    if exp is not None:
        return 2, exp, _BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        parsed = _parse_go_int64(suffix[1:])
        if parsed is None:
            return None
        # v1.36 stores the int64 in an int32 without a range check.
        return 10, _wrap32(parsed), _DECIMAL_EXPONENT
    return None


# --------------------------------------------------------------------------- values


def _int(digits: str) -> int:
    """int() of an ASCII digit string of any length (Python refuses to convert
    more than 4300 digits with int(); Decimal has no such limit)."""
    if len(digits) <= 4000:
        return int(digits)
    return Fraction(Decimal(digits)).numerator


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def _decimal_magnitude(digits: str, exp10: int) -> Fraction:
    """``int(digits) * 10^exp10`` rounded up to a multiple of 1n, working on the
    digit string so that no huge power of ten is ever built; raises ERR_TOO_LARGE
    at 10^1000 and above."""
    digits = digits.lstrip("0")
    if not digits:
        return Fraction(0)
    # The value is in [10^(len-1+exp10), 10^(len+exp10)).
    if len(digits) + exp10 > _MAX_INTEGER_DIGITS:
        raise QuantityError(ERR_TOO_LARGE)
    # Count nanos: the first len+exp10+9 digits, plus one if any digit is left.
    keep = len(digits) + exp10 + 9
    if keep <= 0:
        return Fraction(1, _NANO)
    if keep >= len(digits):
        nanos = _int(digits) * 10 ** (keep - len(digits))
    else:
        nanos = _int(digits[:keep]) + (digits[keep:].strip("0") != "")
    return Fraction(nanos, _NANO)


def _parse_string(s: str) -> Fraction:
    """ParseQuantity on a string; see the module docstring for the contract."""
    if not s:
        raise QuantityError(ERR_FORMAT_WRONG)
    if s == "0":
        return Fraction(0)
    positive, value, num, denom, suffix = _scan(s)
    interpreted = _interpret(suffix)
    if interpreted is None:
        raise QuantityError(ERR_SUFFIX)
    base, exponent, fmt = interpreted

    # Which path upstream takes matters for the empty-number quirks and for the
    # exact int32 wrap-arounds of the scale arithmetic, so decide it the same way.
    if fmt == _BINARY_SI:
        if len(denom) == 0:
            precision = 15 - len(num) - int(exponent * 3 / 10) - 1
            if precision >= 0:
                # Fast path: an integer times 2^exponent that provably fits int64.
                magnitude = Fraction(int(num) << exponent)
                return magnitude if positive else -magnitude
    else:
        precision = 18 - (len(num) + len(denom))
        if precision >= 0:
            scale = _wrap32(exponent - len(denom))
            if scale >= -9:
                magnitude = _decimal_magnitude(num + denom, scale)
                return magnitude if positive else -magnitude

    # Slow path (inf.Dec): needs at least one digit in what was written.
    if not any(c in _DIGITS for c in value):
        raise QuantityError(ERR_NUMERIC)
    digits = "".join(c for c in value if c in _DIGITS).lstrip("0")
    if base == 10:
        # inf.Dec scale = len(denom) + (-exponent), both as int32.
        inf_scale = _wrap32(len(denom) + _wrap32(-exponent))
        magnitude = _decimal_magnitude(digits, -inf_scale)
    elif len(digits) - len(denom) > 20:
        # At least 10^20 before the binary multiplier: over the cap.
        magnitude = Fraction(MAX_INT64)
    else:
        exact = Fraction(_int(digits or "0") << exponent, 10 ** len(denom))
        magnitude = Fraction(_ceil_div(exact.numerator * _NANO, exact.denominator), _NANO)
        # Binary amounts are capped, not rejected (upstream's maxAllowed).
        magnitude = min(magnitude, Fraction(MAX_INT64))
    return magnitude if positive else -magnitude


def _go_trim_space(s: str) -> str:
    start, end = 0, len(s)
    while start < end and s[start] in _GO_SPACE:
        start += 1
    while end > start and s[end - 1] in _GO_SPACE:
        end -= 1
    return s[start:end]


def parse_quantity(text: str | int | float) -> Fraction:
    """Parse a quantity into upstream's exact value (``resource.ParseQuantity``).

    Strings are taken as written (``parse_quantity_json`` trims). Ints are exact,
    floats go through their shortest repr (the digits Go's JSON encoder writes),
    booleans are rejected. Raises QuantityError with apimachinery's message.
    """
    if isinstance(text, bool):
        raise QuantityError(ERR_FORMAT_WRONG)
    if isinstance(text, int):
        if abs(text) >= _TOO_LARGE:
            raise QuantityError(ERR_TOO_LARGE)
        return Fraction(text)
    if isinstance(text, float):
        return _parse_string(repr(text))
    return _parse_string(text)


def parse_quantity_json(text: str | int | float | None) -> Fraction:
    """A quantity as ``Quantity.UnmarshalJSON`` reads it from an object: ``null``
    (None) is zero and surrounding Unicode whitespace is trimmed (Go's
    ``strings.TrimSpace``) before ``ParseQuantity``."""
    if text is None:
        return Fraction(0)
    if isinstance(text, str):
        return _parse_string(_go_trim_space(text))
    return parse_quantity(text)


# --------------------------------------------------------------------------- accessors


def _round_away(q: Fraction) -> int:
    n, d = q.numerator, q.denominator
    # ceil for n >= 0, floor for n < 0.
    return -((-n) // d) if n >= 0 else n // d


def _int64(n: int) -> int:
    if not MIN_INT64 <= n <= MAX_INT64:
        raise QuantityError(ERR_OUT_OF_RANGE)
    return n


def milli_value(q: Fraction) -> int:
    """``q * 1000`` rounded away from zero (``Quantity.MilliValue``); raises
    ERR_OUT_OF_RANGE where upstream would overflow."""
    return _int64(_round_away(q * 1000))


def value(q: Fraction) -> int:
    """``q`` rounded away from zero (``Quantity.Value``); raises ERR_OUT_OF_RANGE
    where upstream would overflow."""
    return _int64(_round_away(q))


def scheduler_amount(resource: str, text: str | int | float | None) -> int:
    """The integer the scheduler uses for an amount of ``resource`` read from an
    object: milli-CPU for ``cpu`` (``MilliValue``), rounded-up units for every
    other resource (``Value``), as ``framework.NewResource`` does."""
    q = parse_quantity_json(text)
    return milli_value(q) if resource == CPU else value(q)


# --------------------------------------------------------------------------- formatting


def format_milli_cpu(milli: int) -> str:
    """Canonical form of a cpu amount, as ``Quantity.String()`` prints a DecimalSI
    milli quantity: ``500m``, ``2``, ``1500m``."""
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def format_bytes(n: int) -> str:
    """Canonical binary form when exact (``2Gi``), plain bytes otherwise; parses
    back to ``n``."""
    for suffix, mult in _BINARY_MULTIPLIERS:
        if n and n % mult == 0:
            return f"{n // mult}{suffix}"
    return str(n)


def _canonical_decimal(magnitude: Fraction, fmt: str) -> str:
    """``CanonicalizeBytes`` for DecimalSI / DecimalExponent: an integer mantissa
    without trailing zeros, its exponent lowered to a multiple of three. Parsed
    values are multiples of 1n, so the mantissa starts as the count of nanos."""
    nanos = magnitude * _NANO
    mantissa, exponent = _round_away(nanos), -9
    while mantissa and mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    shift = exponent % 3  # Python's % floors: lower the exponent to a multiple of 3
    mantissa *= 10**shift
    exponent -= shift
    if exponent == 0:
        return str(mantissa)
    if fmt == _DECIMAL_SI:
        for suffix, exp in _DECIMAL_SUFFIXES.items():
            if exp == exponent:
                return f"{mantissa}{suffix}"
    return f"{mantissa}e{exponent}"


def canonical_string(text: str | int | float | None) -> str:
    """``Quantity.String()`` of a quantity read from an object: the canonical form
    in the format its suffix chose (``2000m`` -> ``2``, ``1.5`` -> ``1500m``,
    ``2048Mi`` -> ``2Gi``, ``1000`` -> ``1k``, ``1e3`` -> ``1e3``), as the API
    server prints values in validation errors. Raises QuantityError like
    ``parse_quantity_json``."""
    q = parse_quantity_json(text)
    if q == 0:
        return "0"
    fmt = _DECIMAL_SI
    if isinstance(text, str):
        s = _go_trim_space(text)
        interpreted = _interpret(_scan(s)[4]) if s not in ("", "0") else None
        if interpreted is not None:
            fmt = interpreted[2]
    sign = "-" if q < 0 else ""
    magnitude = abs(q)
    if fmt == _BINARY_SI:
        # Small or fractional binary amounts print as DecimalSI (no rounding).
        if magnitude < 1024 or magnitude.denominator != 1:
            return sign + _canonical_decimal(magnitude, _DECIMAL_SI)
        n, exp = magnitude.numerator, 0
        while n % 1024 == 0 and exp < 60:
            n //= 1024
            exp += 10
        suffix = next((s for s, e in _BINARY_SUFFIXES.items() if e == exp), "")
        return f"{sign}{n}{suffix}"
    return sign + _canonical_decimal(magnitude, fmt)
