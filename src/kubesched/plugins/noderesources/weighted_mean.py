"""The weighted mean shared by the LeastAllocated and MostAllocated strategies.

Both strategies score every configured resource with allocatable > 0 on 0..100
(``resource_score(xp, requested, allocatable)``, called with allocatable 1
where the resource is absent — those entries are ignored) and combine
them as ``sum(score * weight) // sum(weight)`` (integer, truncating division;
all operands are non-negative, so floor division equals Go's); a node where no
resource takes part scores 0.
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
