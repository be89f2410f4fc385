"""The MostAllocated scoring strategy of NodeResourcesFit (upstream most_allocated.go).

Per resource with allocatable > 0: ``min(requested, allocatable) * 100 /
allocatable`` (requested may exceed allocatable because of the non-zero
defaults), weighted mean with truncating division (:mod:`weighted_mean`); 0
when no resource takes part. Favours fuller nodes (bin packing).
"""

from __future__ import annotations

from kubesched.api.goformat import Num, Ops
from kubesched.framework.results import MAX_NODE_SCORE


def most_requested_score(xp: Ops, requested: Num, capacity: Num) -> Num:
    """The resource's score; ``capacity`` > 0 (operands non-negative: ``//`` is Go's ``/``)."""
    return (xp.minimum(requested, capacity) * MAX_NODE_SCORE) // capacity
