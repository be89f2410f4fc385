"""The LeastAllocated scoring strategy of NodeResourcesFit (upstream least_allocated.go).

Per resource with allocatable > 0: ``(allocatable - requested) * 100 / allocatable``
(0 when requested exceeds allocatable), weighted mean with integer (truncating)
division (:mod:`weighted_mean`); 0 when no resource takes part. Favours emptier nodes.
"""

from __future__ import annotations

from kubesched.api.goformat import Num, Ops
from kubesched.framework.results import MAX_NODE_SCORE


def least_requested_score(xp: Ops, requested: Num, capacity: Num) -> Num:
    """The resource's score, 0 when ``requested`` exceeds ``capacity`` (> 0): the
    operands of the division taken are non-negative, so ``//`` is Go's ``/``."""
    return ((capacity - requested) * MAX_NODE_SCORE) // capacity * (requested <= capacity)
