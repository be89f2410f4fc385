"""Kubernetes resource quantities, parsed exactly as apimachinery's ``resource.Quantity``.

A quantity is ``<signed number><suffix>`` where the suffix is a binary SI
multiplier (``Ki Mi Gi Ti Pi Ei``), a decimal SI one (``n u m "" k M G T P E``)
or a decimal exponent (``e3``, ``E-2``). Values are kept as exact fractions;
``milli_value`` and ``value`` round *up* to an integer as ``MilliValue()`` and
``Value()`` do, which is how the scheduler reads cpu (milli) and every other
resource (units).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Final

from kubesched.api.types import CPU

SPLIT_RE_STRING: Final = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_SPLIT_RE: Final = re.compile(SPLIT_RE_STRING)
_NUMBER_RE: Final = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$")
_EXPONENT_RE: Final = re.compile(r"^[eE]([-+]?[0-9]+)$")

ERR_FORMAT_WRONG: Final = (
    "quantities must match the regular expression '" + SPLIT_RE_STRING + "'"
)
ERR_NUMERIC: Final = "unable to parse numeric part of quantity"
ERR_SUFFIX: Final = "unable to parse quantity's suffix"

_BINARY: Final = {
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}
_DECIMAL: Final = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity; the message is apimachinery's."""


def parse_quantity(text: str | int | float) -> Fraction:
    """Parse a quantity into its exact value.

    YAML may hand us numbers: ints are exact; floats go through their shortest
    decimal repr (``1.5`` -> ``"1.5"``), as the string a user wrote.
    """
    if isinstance(text, bool):
        raise QuantityError(ERR_FORMAT_WRONG)
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        text = repr(text)
        if "e" in text or "E" in text:
            mant, _, exp = text.partition("e")
            text = mant + "e" + str(int(exp))
    s = text.strip() if isinstance(text, str) else text
    if s != text or not s:
        raise QuantityError(ERR_FORMAT_WRONG)
    m = _SPLIT_RE.match(s)
    if m is None:
        raise QuantityError(ERR_FORMAT_WRONG)
    number, suffix = m.group(1), m.group(2)
    if not _NUMBER_RE.match(number):
        raise QuantityError(ERR_NUMERIC)
    value = Fraction(number)
    if suffix in _BINARY:
        return value * _BINARY[suffix]
    if suffix in _DECIMAL:
        return value * _DECIMAL[suffix]
    e = _EXPONENT_RE.match(suffix)
    if e is not None:
        exp = int(e.group(1))
        return value * (Fraction(10) ** exp)
    raise QuantityError(ERR_SUFFIX)


def _ceil(q: Fraction) -> int:
    return -((-q.numerator) // q.denominator)


def milli_value(q: Fraction) -> int:
    """``q * 1000`` rounded up (``Quantity.MilliValue``)."""
    return _ceil(q * 1000)


def value(q: Fraction) -> int:
    """``q`` rounded up (``Quantity.Value``)."""
    return _ceil(q)


def scheduler_amount(resource: str, text: str | int | float) -> int:
    """The integer the scheduler uses for an amount of ``resource``: milli-CPU for
    ``cpu``, rounded-up units for everything else."""
    q = parse_quantity(text)
    return milli_value(q) if resource == CPU else value(q)


def parse_resource_list(raw: Mapping[str, str | int | float]) -> dict[str, int]:
    """Parse a ResourceList; raises QuantityError naming the resource."""
    out: dict[str, int] = {}
    for name, text in raw.items():
        try:
            out[str(name)] = scheduler_amount(str(name), text)
        except QuantityError as err:
            raise QuantityError(f"{name}: {text!r}: {err}") from None
    return out


def format_milli_cpu(milli: int) -> str:
    """Canonical form of a cpu amount: ``500m``, ``2``."""
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def format_bytes(n: int) -> str:
    """Canonical binary form when exact (``2Gi``), plain bytes otherwise."""
    for suffix, mult in reversed(_BINARY.items()):
        if n and n % mult == 0:
            return f"{n // mult}{suffix}"
    return str(n)
