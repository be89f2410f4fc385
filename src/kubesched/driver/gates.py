"""CI gates on a run: ``--assert EXPR`` checked against the SimulationResult.

An expression compares one quantity of the result with a value::

    EXPR     := QUANTITY OP VALUE
    QUANTITY := NAME [ "(" FILTER { "," FILTER } ")" ]
    FILTER   := "priority" OP INTEGER | "class" "=" NAME | "namespace" "=" NAME
    OP       := "<" | "<=" | "==" | "!=" | ">=" | ">"   ("=" in a filter means "==")
    VALUE    := a number, or a duration such as 30s, 1m30s (for delays)

Quantities (pods are the result's ``pods[]``; a filter keeps the pods it
matches: ``priority``, ``priorityClassName``, ``namespace``):

- ``pending``, ``running``, ``scheduled``, ``preempted``, ``pods``: how many
  pods are Pending at the end (not deleted), Running at the end, were ever
  bound, were deleted as preemption victims, exist at all;
- ``preemptions``: preemptions whose *preemptor* matches the filters;
- ``delay.p50``, ``delay.p90``, ``delay.p99``, ``delay.max``: scheduling delay
  (``scheduledAt - createdAt``, seconds) of the bound pods, nearest-rank
  percentile; 0 when no pod matches.

``parse`` raises ``GateError`` for a malformed expression (bad input: exit 2
before the run); ``check`` returns the violated ones with what was found.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from kubesched.api.duration import parse_duration
from kubesched.api.types import NANOS

OPS: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    ">": operator.gt,
}
COUNTS: Final = ("pending", "running", "scheduled", "preempted", "pods", "preemptions")
DELAYS: Final = {"delay.p50": 0.50, "delay.p90": 0.90, "delay.p99": 0.99, "delay.max": 1.0}
NAMED_PODS: Final = 5
"""Pods named in a violation message."""

_EXPR = re.compile(
    r"^\s*(?P<name>[a-z][a-z0-9.]*)\s*(?:\((?P<filters>[^)]*)\))?\s*"
    r"(?P<op><=|>=|==|!=|<|>)\s*(?P<value>\S+)\s*$"
)
_FILTER = re.compile(r"^\s*(?P<key>[a-zA-Z]+)\s*(?P<op><=|>=|==|!=|<|>|=)\s*(?P<value>\S+)\s*$")


class GateError(ValueError):
    """A malformed ``--assert`` expression."""


@dataclass(frozen=True)
class Filter:
    key: str
    op: str
    value: str | int


@dataclass(frozen=True)
class Gate:
    text: str
    name: str
    filters: tuple[Filter, ...]
    op: str
    value: float


@dataclass(frozen=True)
class Violation:
    gate: Gate
    got: float
    pods: tuple[str, ...]
    """Up to ``NAMED_PODS`` of the pods counted (for pod counts)."""

    def message(self) -> str:
        got = f"{self.got:g}"
        if self.gate.name.startswith("delay."):
            got += "s"
        named = f" ({', '.join(self.pods)}{', ...' if self.got > len(self.pods) else ''})"
        return f"assertion failed: {self.gate.text}: got {got}{named if self.pods else ''}"


def parse(text: str) -> Gate:
    m = _EXPR.match(text)
    if m is None:
        raise GateError(
            f'"{text}": expected QUANTITY OP VALUE, e.g. "pending(priority>=1000) == 0"'
        )
    name = m["name"]
    if name not in COUNTS and name not in DELAYS:
        known = ", ".join([*COUNTS, *DELAYS])
        raise GateError(f'"{text}": unknown quantity "{name}" (one of {known})')
    filters = tuple(_filter(text, f) for f in (m["filters"] or "").split(",") if f.strip())
    if m["filters"] is not None and not filters:
        raise GateError(f'"{text}": empty filter list')
    return Gate(text.strip(), name, filters, m["op"], _value(text, name, m["value"]))


def _filter(text: str, raw: str) -> Filter:
    m = _FILTER.match(raw)
    if m is None:
        raise GateError(f'"{text}": filter "{raw.strip()}": expected KEY OP VALUE')
    key, op, value = m["key"], m["op"], m["value"]
    op = "==" if op == "=" else op
    if key == "priority":
        try:
            return Filter(key, op, int(value))
        except ValueError:
            raise GateError(f'"{text}": filter priority: "{value}" is not an integer') from None
    if key in ("class", "namespace"):
        if op not in ("==", "!="):
            raise GateError(f'"{text}": filter {key}: only = and != apply')
        return Filter(key, op, value)
    raise GateError(f'"{text}": unknown filter "{key}" (priority, class, namespace)')


def _value(text: str, name: str, raw: str) -> float:
    if name in DELAYS and not re.fullmatch(r"[0-9.]+", raw):
        try:
            return parse_duration(raw) / NANOS
        except ValueError as err:
            raise GateError(f'"{text}": {err}') from None
    try:
        v = float(raw)
    except ValueError:
        raise GateError(f'"{text}": "{raw}" is not a number') from None
    if not math.isfinite(v):
        raise GateError(f'"{text}": "{raw}" is not a finite number')
    return v


def _matches(pod: dict[str, Any], filters: Sequence[Filter]) -> bool:
    for f in filters:
        if f.key == "priority":
            got: Any = pod["priority"]
        elif f.key == "class":
            got = pod["priorityClassName"] or ""
        else:
            got = pod["namespace"]
        if not OPS[f.op](got, f.value):
            return False
    return True


def _pods(doc: dict[str, Any], name: str, filters: Sequence[Filter]) -> list[dict[str, Any]]:
    pods = [p for p in doc["pods"] if _matches(p, filters)]
    if name == "pending":
        return [p for p in pods if p["phase"] == "Pending" and p["deletedAt"] is None]
    if name == "running":
        return [p for p in pods if p["phase"] == "Running" and p["deletedAt"] is None]
    if name == "scheduled":
        return [p for p in pods if p["scheduledAt"] is not None]
    if name == "preempted":
        return [p for p in pods if p["deletionReason"] == "Preempted"]
    return pods


def quantity(
    doc: dict[str, Any], name: str, filters: Sequence[Filter] = ()
) -> tuple[float, list[str]]:
    """The quantity ``name`` (one of ``COUNTS`` or ``DELAYS``) of ``doc`` and the
    pods it counted (pod counts only)."""
    if name == "preemptions":
        preemptors = {f"{p['namespace']}/{p['name']}": p for p in doc["pods"]}
        n = sum(
            1
            for p in doc["preemptions"]
            if (pod := preemptors.get(p["preemptor"])) is not None and _matches(pod, filters)
        )
        return float(n), []
    if name in DELAYS:
        delays = sorted(p["scheduledAt"] - p["createdAt"] for p in _pods(doc, "scheduled", filters))
        if not delays:
            return 0.0, []
        rank = max(1, math.ceil(DELAYS[name] * len(delays)))
        return float(delays[rank - 1]), []
    pods = _pods(doc, name, filters)
    return float(len(pods)), [f"{p['namespace']}/{p['name']}" for p in pods[:NAMED_PODS]]


def measure(doc: dict[str, Any], gate: Gate) -> tuple[float, list[str]]:
    """The gate's quantity in ``doc`` and the pods it counted (pod counts)."""
    return quantity(doc, gate.name, gate.filters)


def check(doc: dict[str, Any], gates: Sequence[Gate]) -> list[Violation]:
    """The gates ``doc`` violates, in the order given."""
    out = []
    for g in gates:
        got, pods = measure(doc, g)
        if not OPS[g.op](got, g.value):
            out.append(Violation(g, got, tuple(pods)))
    return out
