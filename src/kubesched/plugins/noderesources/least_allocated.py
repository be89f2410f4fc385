"""The LeastAllocated scoring strategy of NodeResourcesFit (upstream least_allocated.go).

Per resource with allocatable > 0: ``(allocatable - requested) * 100 / allocatable``
(0 when requested exceeds allocatable), weighted mean with integer (truncating)
division; 0 when no resource takes part. Favours emptier nodes.
"""

from __future__ import annotations

import numpy as np

from kubesched.framework.nodetable import IntArray
from kubesched.framework.results import MAX_NODE_SCORE
from kubesched.plugins.noderesources.weighted_mean import WeightedMeanScorer


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return ((capacity - requested) * MAX_NODE_SCORE) // capacity


class LeastAllocatedScorer(WeightedMeanScorer):
    """Scorer for ``LeastAllocated``; ``weights`` in configuration order."""

    __slots__ = ()

    resource_score = staticmethod(least_requested_score)

    @staticmethod
    def resource_score_vector(requested: IntArray, capacity: IntArray) -> IntArray:
        return np.where(
            requested > capacity, 0, ((capacity - requested) * MAX_NODE_SCORE) // capacity
        )
