"""The MostAllocated scoring strategy of NodeResourcesFit (upstream most_allocated.go).

Per resource with allocatable > 0: ``min(requested, allocatable) * 100 /
allocatable`` (requested may exceed allocatable because of the non-zero
defaults), weighted mean with truncating division; 0 when no resource takes
part. Favours fuller nodes (bin packing).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubesched.framework.nodetable import IntArray
from kubesched.framework.results import MAX_NODE_SCORE


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    requested = min(requested, capacity)
    return (requested * MAX_NODE_SCORE) // capacity


class MostAllocatedScorer:
    """Scorer for ``MostAllocated``; ``weights`` in configuration order."""

    __slots__ = ("weights",)

    def __init__(self, weights: Sequence[int]) -> None:
        self.weights = tuple(weights)

    def score(
        self, requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]
    ) -> int:
        node_score = weight_sum = 0
        for req, alloc, w in zip(requested, allocatable, self.weights, strict=True):
            if alloc == 0:
                continue
            node_score += most_requested_score(req, alloc) * w
            weight_sum += w
        return 0 if weight_sum == 0 else node_score // weight_sum

    def score_vector(
        self,
        requested: Sequence[IntArray],
        allocated: Sequence[IntArray],
        allocatable: Sequence[IntArray],
    ) -> IntArray:
        n = len(requested[0]) if requested else 0
        node_score = np.zeros(n, dtype=np.int64)
        weight_sum = np.zeros(n, dtype=np.int64)
        for req, alloc, w in zip(requested, allocatable, self.weights, strict=True):
            has = alloc != 0
            safe = np.where(has, alloc, 1)
            s = (np.minimum(req, alloc) * MAX_NODE_SCORE) // safe
            node_score += np.where(has, s * w, 0)
            weight_sum += np.where(has, w, 0)
        return np.where(weight_sum == 0, 0, node_score // np.maximum(weight_sum, 1))
