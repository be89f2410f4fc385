"""The MostAllocated scoring strategy of NodeResourcesFit (upstream most_allocated.go).

Per resource with allocatable > 0: ``min(requested, allocatable) * 100 /
allocatable`` (requested may exceed allocatable because of the non-zero
defaults), weighted mean with truncating division; 0 when no resource takes
part. Favours fuller nodes (bin packing).
"""

from __future__ import annotations

import numpy as np

from kubesched.framework.nodetable import IntArray
from kubesched.framework.results import MAX_NODE_SCORE
from kubesched.plugins.noderesources.weighted_mean import WeightedMeanScorer


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    requested = min(requested, capacity)
    return (requested * MAX_NODE_SCORE) // capacity


class MostAllocatedScorer(WeightedMeanScorer):
    """Scorer for ``MostAllocated``; ``weights`` in configuration order."""

    __slots__ = ()

    resource_score = staticmethod(most_requested_score)

    @staticmethod
    def resource_score_vector(requested: IntArray, capacity: IntArray) -> IntArray:
        return (np.minimum(requested, capacity) * MAX_NODE_SCORE) // capacity
