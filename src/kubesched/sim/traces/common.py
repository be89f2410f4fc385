"""Helpers every trace format shares: seeded choices, node resizing, time scaling,
and parsing of the option values the command line passes.

Random choices use ``random.Random(f"{seed}/<format>/<what>")`` streams (string
seeds are hashed with SHA-512, so they are stable across processes and
platforms); each choice has its own stream so that changing one option never
changes another option's choice.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Final, TypeVar

from kubesched.api.admission import HIGHEST_USER_DEFINABLE_PRIORITY
from kubesched.api.types import NANOS, PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER, Node
from kubesched.sim.traces import ImportOptions, TierPriority

T = TypeVar("T")

COPY_INFIX: Final = "-copy-"


def rng(seed: int, fmt: str, what: str) -> random.Random:
    return random.Random(f"{seed}/{fmt}/{what}")


def keep_indices(total: int, options: ImportOptions, fmt: str) -> list[int]:
    """Indices of the pods kept by ``limit`` then ``sample``, ascending."""
    n = total if options.limit is None else min(total, options.limit)
    sample = options.sample
    if sample is None:
        return list(range(n))
    k = sample if isinstance(sample, int) else round(sample * n)
    if k >= n:
        return list(range(n))
    return sorted(rng(options.seed, fmt, "pods").sample(range(n), k))


def resize_nodes(nodes: Sequence[Node], options: ImportOptions, fmt: str) -> list[Node]:
    """Apply ``node_fraction`` then ``drop_nodes``; kept nodes stay in trace order,
    added copies follow them (same labels and allocatable, fresh name)."""
    out = list(nodes)
    n = len(out)
    f = options.node_fraction
    if f < 1:
        keep = round(f * n)
        chosen = sorted(rng(options.seed, fmt, "node-fraction").sample(range(n), keep))
        out = [out[i] for i in chosen]
    elif f > 1 and n:
        extra = round((f - 1) * n)
        r = rng(options.seed, fmt, "node-fraction")
        copies: dict[str, int] = {}
        for _ in range(extra):
            src = out[r.randrange(n)]
            k = copies.get(src.name, 0) + 1
            copies[src.name] = k
            out.append(copy_node(src, f"{src.name}{COPY_INFIX}{k}"))
    if options.drop_nodes:
        n = len(out)
        drop = min(options.drop_nodes, n)
        gone = set(rng(options.seed, fmt, "drop-nodes").sample(range(n), drop))
        out = [node for i, node in enumerate(out) if i not in gone]
    return out


def copy_node(node: Node, name: str) -> Node:
    return Node(
        name,
        labels=dict(node.labels),
        annotations=dict(node.annotations),
        taints=node.taints,
        unschedulable=node.unschedulable,
        allocatable=dict(node.allocatable),
        conditions=node.conditions,
        images=node.images,
    )


class TimeScaler:
    """Trace seconds -> scaled nanoseconds, exactly: ``seconds * scale`` rounded half
    up to the nanosecond (integer arithmetic; no float error on months of trace)."""

    __slots__ = ("_den2", "_num", "identity")

    def __init__(self, scale: Fraction) -> None:
        if scale <= 0:
            raise ValueError(f"time scale must be positive, got {scale}")
        self._num = scale.numerator * NANOS * 2
        self._den2 = scale.denominator * 2
        self.identity = scale == 1

    def ns(self, seconds: int) -> int:
        if self.identity:
            return seconds * NANOS
        return (seconds * self._num + self._den2 // 2) // self._den2


# --------------------------------------------------------------------------- option parsing


def parse_fraction(text: str, what: str) -> Fraction:
    """A positive decimal (``0.8``, ``1.5``, ``1e-3``) or ratio (``1/1000``); percentages
    (``80%``) too. ValueError with a message naming ``what``."""
    t = text.strip()
    try:
        value = Fraction(t[:-1]) / 100 if t.endswith("%") else Fraction(t)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f'{what}: "{text}" is not a number') from None
    if value <= 0:
        raise ValueError(f'{what}: "{text}" must be positive')
    return value


def parse_sample(text: str) -> int | Fraction:
    """``200`` -> 200 pods; ``0.1``, ``10%`` or ``1/10`` -> that fraction of the pods."""
    t = text.strip()
    if t.isdigit():
        n = int(t)
        if n < 1:
            raise ValueError(f'--sample: "{text}" must be at least 1 (or a fraction)')
        return n
    f = parse_fraction(t, "--sample")
    if f > 1:
        raise ValueError(f'--sample: "{text}": a fraction must be at most 1')
    return f


def parse_priorities(text: str, known: Sequence[str] = ()) -> dict[str, TierPriority]:
    """``LS=10000,BE=0:Never`` -> tier -> TierPriority. Values are PriorityClass values
    (at most 1000000000, as the API server allows for user classes); ``:Never`` sets
    ``preemptionPolicy: Never``. With ``known``, an unknown tier is an error."""
    out: dict[str, TierPriority] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        tier, sep, rest = part.partition("=")
        tier = tier.strip()
        if not sep or not tier:
            raise ValueError(f'--priorities: "{part}": expected TIER=VALUE[:Never]')
        if known and tier not in known:
            raise ValueError(f'--priorities: unknown tier "{tier}"; tiers: {", ".join(known)}')
        value_text, _, policy = rest.partition(":")
        try:
            value = int(value_text)
        except ValueError:
            raise ValueError(f'--priorities: "{part}": "{value_text}" is not an integer') from None
        if value > HIGHEST_USER_DEFINABLE_PRIORITY:
            raise ValueError(
                f'--priorities: "{part}": maximum allowed value of a user defined priority '
                f"is {HIGHEST_USER_DEFINABLE_PRIORITY}"
            )
        if value < -(2**31):
            raise ValueError(f'--priorities: "{part}": value out of int32 range')
        policies: Mapping[str, str] = {
            "": PREEMPT_LOWER_PRIORITY,
            PREEMPT_LOWER_PRIORITY: PREEMPT_LOWER_PRIORITY,
            PREEMPT_NEVER: PREEMPT_NEVER,
        }
        if policy not in policies:
            raise ValueError(
                f'--priorities: "{part}": preemption policy must be '
                f"{PREEMPT_LOWER_PRIORITY} or {PREEMPT_NEVER}"
            )
        out[tier] = TierPriority(value, policies[policy])
    return out
