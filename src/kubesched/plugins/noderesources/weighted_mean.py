"""The weighted mean shared by the LeastAllocated and MostAllocated strategies.

Both strategies score every configured resource with allocatable > 0 on 0..100
and combine them as ``sum(score * weight) // sum(weight)`` (integer, truncating
division; all operands are non-negative, so floor division equals Go's); a
node where no resource takes part scores 0. Subclasses give the per-resource
score twice: for one node (``resource_score``) and for a vector of nodes
(``resource_score_vector``, called with ``alloc`` made non-zero where the
resource is absent — those entries are ignored).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubesched.framework.nodetable import IntArray


class WeightedMeanScorer:
    """A ``Scorer`` (resource_allocation.Scorer); ``weights`` in configuration order."""

    __slots__ = ("weights",)

    def __init__(self, weights: Sequence[int]) -> None:
        self.weights = tuple(weights)

    @staticmethod
    def resource_score(requested: int, capacity: int) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    @staticmethod
    def resource_score_vector(
        requested: IntArray, capacity: IntArray
    ) -> IntArray:  # pragma: no cover
        raise NotImplementedError

    def score(
        self, requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]
    ) -> int:
        node_score = weight_sum = 0
        for req, alloc, w in zip(requested, allocatable, self.weights, strict=True):
            if alloc == 0:
                continue
            node_score += self.resource_score(req, alloc) * w
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
            s = self.resource_score_vector(req, np.where(has, alloc, 1))
            node_score += np.where(has, s * w, 0)
            weight_sum += np.where(has, w, 0)
        return np.where(weight_sum == 0, 0, node_score // np.maximum(weight_sum, 1))
