"""The weighted mean shared by the LeastAllocated and MostAllocated strategies.

``resource_score`` (0..100) of every resource with allocatable > 0 (called with
allocatable 1 where absent, then ignored), combined as ``sum(score * weight) //
sum(weight)`` (operands non-negative: floor equals Go's division); 0 when no
resource takes part.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kubesched.api.goformat import Num, Ops

ResourceScore = Callable[[Ops, Num, Num], Num]


class WeightedMeanScorer:
    """A ``Scorer`` (resource_allocation.Scorer); ``weights`` in configuration order."""

    __slots__ = ("resource_score", "weights")

    def __init__(self, weights: Sequence[int], resource_score: ResourceScore) -> None:
        self.weights = tuple(weights)
        self.resource_score = resource_score

    def __call__(
        self,
        xp: Ops,
        requested: Sequence[Num],
        allocated: Sequence[Num],
        allocatable: Sequence[Num],
    ) -> Num:
        node_score: Num = 0
        weight_sum: Num = 0
        for req, alloc, w in zip(requested, allocatable, self.weights, strict=True):
            has = alloc != 0
            s = self.resource_score(xp, req, alloc + (alloc == 0))
            node_score = node_score + s * w * has
            weight_sum = weight_sum + w * has
        return node_score // xp.maximum(weight_sum, 1)
