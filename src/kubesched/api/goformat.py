"""Go's formatting and integer arithmetic, where kubesched must print or compute
exactly what kube-scheduler does: the one home of these helpers.

``Ops`` gathers these and the few other operations of a Go formula as one
namespace, ``ONE`` over Python numbers (one node) and ``MANY`` over numpy arrays
(one element per node), so a formula written once over ``Ops`` is both forms. The
``_vec`` forms are elementwise over int64 / float64 arrays and agree with the
scalar forms wherever the values fit int64.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]

_GO_ESCAPES: Final = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    '"': '\\"',
    "\\": "\\\\",
}


def go_quote(s: str) -> str:
    """``strconv.Quote`` (as ``%q`` prints a string): printable Unicode kept, the
    rest escaped. Close to Go for all valid text (printability per Python)."""
    out = ['"']
    for ch in s:
        esc = _GO_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch == " " or ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def time_quote(s: str) -> str:
    """The time package's own ``quote``: bytes >= 0x80 and < 0x20 as ``\\xNN``,
    ``"`` and ``\\`` backslash-escaped, everything else as is."""
    out = ['"']
    for ch in s:
        if ch < " " or ord(ch) >= 0x80:
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
        else:
            if ch in ('"', "\\"):
                out.append("\\")
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_string_slice(values: Sequence[str] | None) -> str:
    """``%#v`` of a ``[]string``: ``[]string(nil)`` for a nil slice (None),
    ``[]string{"a", "b"}`` otherwise (``[]string{}`` when empty)."""
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


def go_list(items: Sequence[str]) -> str:
    """``%v`` of a ``[]string``: ``[a b c]``."""
    return "[" + " ".join(items) + "]"


def go_aggregate(messages: Sequence[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: duplicates dropped, one message as
    is, several as ``[a, b]`` in first-seen order."""
    unique = list(dict.fromkeys(messages))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"


def go_div(a: int, b: int) -> int:
    """Go's integer ``/``: truncation toward zero (``b != 0``): the floor quotient,
    one up when it is negative and inexact."""
    q = a // b
    return q + 1 if q < 0 and q * b != a else q


def go_div_vec(a: IntArray, b: IntArray | int) -> IntArray:
    """Elementwise Go ``/`` (truncating); ``b`` (array or scalar) non-zero everywhere."""
    if isinstance(b, int):  # a scalar: no array ops on it (normalising scores per cycle)
        q = np.abs(a) // abs(b)
        out: IntArray = np.where(a < 0, -q, q) if b > 0 else np.where(a < 0, q, -q)
        return out
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def go_round(x: float) -> int:
    """Go's ``math.Round``: the nearest integer, halves away from zero. (``x - trunc(x)``
    is exact for doubles, so the comparison is too.)"""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += 1 if x > 0 else -1
    return t


def go_round_vec(x: npt.NDArray[np.float64]) -> IntArray:
    """``go_round`` elementwise (``x - floor(x)`` and ``x - trunc(x)`` are exact too)."""
    if x.size and x.min() >= 0:  # scores: non-negative, and one pass fewer
        f = np.floor(x)
        out: IntArray = (f + (x - f >= 0.5)).astype(np.int64)
        return out
    t = np.trunc(x)
    d = x - t
    t += d >= 0.5
    t -= d <= -0.5
    return t.astype(np.int64)


Num = Any
"""A value of a formula written over ``Ops``: a Python int / float / bool (``ONE``)
or an int64 / float64 / bool numpy array (``MANY``). Operators (``+ - * // / == <
& abs``) work on both; everything else goes through the namespace."""


@dataclass(frozen=True, slots=True)
class Ops:
    """Go int64 / float64 operations for one value (``ONE``) or elementwise (``MANY``).

    ``where(c, a, b)`` evaluates both branches (guard divisions with safe divisors);
    ``to_float`` is Go's ``float64(int64)``, ``trunc`` Go's ``int64(float64)``;
    ``go_div`` / ``go_round`` as above; ``any`` is true if any element is."""

    where: Callable[[Num, Num, Num], Num]
    minimum: Callable[[Num, Num], Num]
    maximum: Callable[[Num, Num], Num]
    sqrt: Callable[[Num], Num]
    to_float: Callable[[Num], Num]
    trunc: Callable[[Num], Num]
    go_div: Callable[[Num, Num], Num]
    go_round: Callable[[Num], Num]
    any: Callable[[Num], bool]


ONE: Final = Ops(
    where=lambda c, a, b: a if c else b,
    minimum=lambda a, b: b if b < a else a,  # min() / max(): slower calls in 3.11
    maximum=lambda a, b: b if b > a else a,
    sqrt=math.sqrt,
    to_float=float,
    trunc=int,
    go_div=go_div,
    go_round=go_round,
    any=bool,
)
MANY: Final = Ops(
    where=np.where,
    minimum=np.minimum,
    maximum=np.maximum,
    sqrt=np.sqrt,
    to_float=lambda a: a.astype(np.float64),
    trunc=lambda a: a.astype(np.int64),
    go_div=go_div_vec,
    go_round=go_round_vec,
    any=lambda a: bool(a.any()),
)
