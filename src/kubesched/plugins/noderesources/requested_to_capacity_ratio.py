"""The RequestedToCapacityRatio scoring strategy of NodeResourcesFit
(upstream requested_to_capacity_ratio.go and helper/shape_score.go).

Per resource with allocatable > 0, utilization ``requested * 100 / allocatable``
(truncated, at most 100) through the shape's broken-linear function (scores x10);
resources scoring 0 are left out of the weighted mean, a float64 division rounded
half away from zero (Go ``math.Round``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

from kubesched.api.goformat import Num, Ops
from kubesched.framework.config import UtilizationShapePoint
from kubesched.framework.results import MAX_NODE_SCORE

MAX_UTILIZATION: Final = 100
MAX_CUSTOM_PRIORITY_SCORE: Final = 10
"""Upper bound of a shape point's score in the configuration."""


class FunctionShapePoint(NamedTuple):
    utilization: int
    score: int


def broken_linear(xp: Ops, shape: Sequence[FunctionShapePoint], p: Num) -> Num:
    """f(p): ``shape[0].score`` up to the first point, the last score above the last
    point, linear (Go truncating division) in between. ``shape`` must be non-empty
    with strictly increasing utilization."""
    out = shape[-1].score
    # From the last point back, so that the first point with p <= utilization wins.
    for i in range(len(shape) - 1, -1, -1):
        pt = shape[i]
        val = pt.score
        if i > 0:
            prev = shape[i - 1]
            val = prev.score + xp.go_div(
                (pt.score - prev.score) * (p - prev.utilization), pt.utilization - prev.utilization
            )
        out = xp.where(p <= pt.utilization, val, out)
    return out


def scaled_shape(shape: Sequence[UtilizationShapePoint]) -> tuple[FunctionShapePoint, ...]:
    """Configured shape points with scores scaled to MaxNodeScore."""
    factor = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    return tuple(FunctionShapePoint(p.utilization, p.score * factor) for p in shape)


class RequestedToCapacityRatioScorer:
    """Scorer for ``RequestedToCapacityRatio``; ``weights`` in configuration order."""

    __slots__ = ("shape", "weights")

    def __init__(self, weights: Sequence[int], shape: Sequence[UtilizationShapePoint]) -> None:
        self.weights = tuple(weights)
        self.shape = scaled_shape(shape)

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
            util = xp.where(
                req > alloc, MAX_UTILIZATION, req * MAX_UTILIZATION // (alloc + (alloc == 0))
            )
            s = broken_linear(xp, self.shape, util)
            take = has & (s > 0)  # resources scoring 0 are left out
            node_score = node_score + s * w * take
            weight_sum = weight_sum + w * take
        # No resource taking part: node_score is 0, and so is the score.
        return xp.go_round(xp.to_float(node_score) / xp.to_float(xp.maximum(weight_sum, 1)))
