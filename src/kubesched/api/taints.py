"""Taints and tolerations: which toleration tolerates which taint.

Pure functions with upstream's semantics (``k8s.io/api/core/v1``
``Toleration.ToleratesTaint`` and ``component-helpers/scheduling/corev1``
``TolerationsTolerateTaint`` / ``FindMatchingUntoleratedTaint``).

Rules of ``tolerates_taint`` (in this order):

1. A non-empty toleration ``effect`` must equal the taint's effect; an empty one
   matches every effect.
2. A non-empty toleration ``key`` must equal the taint's key; an empty key
   matches every key (matching does not check API validation's ``Exists`` rule).
3. Operator ``""``/``Equal`` compares values; ``Exists`` matches any value;
   ``Lt``/``Gt`` compare integers only with the alpha
   ``TaintTolerationComparisonOperators`` gate (off up to v1.36: never match);
   any other operator never matches.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from kubesched.api.types import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, Taint, Toleration

TAINT_NODE_UNSCHEDULABLE: Final = "node.kubernetes.io/unschedulable"
"""The taint key that stands for ``node.spec.unschedulable`` (v1.TaintNodeUnschedulable)."""

OP_EQUAL: Final = "Equal"
OP_EXISTS: Final = "Exists"
OP_LT: Final = "Lt"
OP_GT: Final = "Gt"

ENABLE_COMPARISON_OPERATORS_DEFAULT: Final = False
"""Default of the ``TaintTolerationComparisonOperators`` gate (alpha since v1.35)."""

# content.IsDecimalInteger: "0" or an optional "-" then a non-zero digit and digits;
# no "+", no leading zeros, no "-0".
_CANONICAL_INT: Final = re.compile(r"0|-?[1-9][0-9]*")
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1

TaintFilter = Callable[[Taint], bool]


def _canonical_int64(value: str) -> int | None:
    """The value as int64 if it is a canonical decimal integer in range, else None."""
    if not _CANONICAL_INT.fullmatch(value):
        return None
    n = int(value)
    if n < _INT64_MIN or n > _INT64_MAX:
        return None
    return n


def tolerates_taint(
    toleration: Toleration,
    taint: Taint,
    enable_comparison_operators: bool = ENABLE_COMPARISON_OPERATORS_DEFAULT,
) -> bool:
    """True if ``toleration`` tolerates ``taint`` (upstream Toleration.ToleratesTaint).

    With comparison operators enabled, a value that is not a canonical int64
    makes ``Lt``/``Gt`` not match (upstream also returns an error then, which
    its callers treat as "not tolerated").
    """
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    op = toleration.operator
    if op in ("", OP_EQUAL):
        return toleration.value == taint.value
    if op == OP_EXISTS:
        return True
    if op in (OP_LT, OP_GT):
        if not enable_comparison_operators:
            return False
        want = _canonical_int64(toleration.value)
        have = _canonical_int64(taint.value)
        if want is None or have is None:
            return False
        return have < want if op == OP_LT else have > want
    return False


def tolerations_tolerate_taint(
    tolerations: Iterable[Toleration],
    taint: Taint,
    enable_comparison_operators: bool = ENABLE_COMPARISON_OPERATORS_DEFAULT,
) -> bool:
    """True if any toleration tolerates the taint (upstream TolerationsTolerateTaint)."""
    return any(tolerates_taint(t, taint, enable_comparison_operators) for t in tolerations)


def do_not_schedule_taint(taint: Taint) -> bool:
    """The Filter's taint filter: NoSchedule and NoExecute taints
    (upstream helper.DoNotScheduleTaintsFilterFunc)."""
    return taint.effect in (NO_SCHEDULE, NO_EXECUTE)


def find_matching_untolerated_taint(
    taints: Sequence[Taint],
    tolerations: Sequence[Toleration],
    inclusion_filter: TaintFilter | None = None,
    enable_comparison_operators: bool = ENABLE_COMPARISON_OPERATORS_DEFAULT,
) -> Taint | None:
    """The first taint (in node order) that passes ``inclusion_filter`` (all taints when
    it is None) and is tolerated by none of ``tolerations``; None if every such taint
    is tolerated (upstream FindMatchingUntoleratedTaint)."""
    for taint in taints:
        if inclusion_filter is not None and not inclusion_filter(taint):
            continue
        if not tolerations_tolerate_taint(tolerations, taint, enable_comparison_operators):
            return taint
    return None


def prefer_no_schedule_tolerations(tolerations: Iterable[Toleration]) -> tuple[Toleration, ...]:
    """Tolerations whose effect is empty (all effects) or PreferNoSchedule
    (upstream getAllTolerationPreferNoSchedule)."""
    return tuple(t for t in tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE)


def count_intolerable_prefer_no_schedule(
    taints: Iterable[Taint],
    tolerations: Sequence[Toleration],
    enable_comparison_operators: bool = ENABLE_COMPARISON_OPERATORS_DEFAULT,
) -> int:
    """How many PreferNoSchedule taints no toleration tolerates
    (upstream countIntolerableTaintsPreferNoSchedule)."""
    return sum(
        1
        for taint in taints
        if taint.effect == PREFER_NO_SCHEDULE
        and not tolerations_tolerate_taint(tolerations, taint, enable_comparison_operators)
    )


UNSCHEDULABLE_TAINT: Final = Taint(TAINT_NODE_UNSCHEDULABLE, "", NO_SCHEDULE)
"""The taint NodeUnschedulable checks tolerations against."""


def tolerates_unschedulable(
    tolerations: Iterable[Toleration],
    enable_comparison_operators: bool = ENABLE_COMPARISON_OPERATORS_DEFAULT,
) -> bool:
    """True if the pod tolerates ``node.kubernetes.io/unschedulable:NoSchedule``."""
    return tolerations_tolerate_taint(tolerations, UNSCHEDULABLE_TAINT, enable_comparison_operators)
