"""The RequestedToCapacityRatio scoring strategy of NodeResourcesFit
(upstream requested_to_capacity_ratio.go and helper/shape_score.go).

Per resource with allocatable > 0, utilization ``requested * 100 / allocatable``
(truncated; 100 when requested exceeds allocatable) is mapped through a
broken-linear function built from the configured shape, whose scores are
scaled by ``MaxNodeScore / MaxCustomPriorityScore`` (= 10). Resources scoring 0
are left out of the weighted mean; the mean is a float64 division rounded half
away from zero (Go ``math.Round``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, NamedTuple

import numpy as np

from kubesched.api.goformat import go_div, go_div_vec, go_round, go_round_vec
from kubesched.framework.config import UtilizationShapePoint
from kubesched.framework.nodetable import IntArray
from kubesched.framework.results import MAX_NODE_SCORE

MAX_UTILIZATION: Final = 100
MAX_CUSTOM_PRIORITY_SCORE: Final = 10
"""Upper bound of a shape point's score in the configuration."""


class FunctionShapePoint(NamedTuple):
    utilization: int
    score: int


def build_broken_linear_function(shape: Sequence[FunctionShapePoint]) -> Callable[[int], int]:
    """f(p): ``shape[0].score`` below the first point, the last score above the last
    point, linear (Go truncating division) in between. ``shape`` must be non-empty
    with strictly increasing utilization."""
    points = tuple(shape)

    def f(p: int) -> int:
        for i, pt in enumerate(points):
            if p <= pt.utilization:
                if i == 0:
                    return points[0].score
                prev = points[i - 1]
                return prev.score + go_div(
                    (pt.score - prev.score) * (p - prev.utilization),
                    pt.utilization - prev.utilization,
                )
        return points[-1].score

    return f


def broken_linear_vector(shape: Sequence[FunctionShapePoint], p: IntArray) -> IntArray:
    """:func:`build_broken_linear_function` applied elementwise."""
    points = tuple(shape)
    out = np.full(p.shape, points[-1].score, dtype=np.int64)
    done = np.zeros(p.shape, dtype=np.bool_)
    for i, pt in enumerate(points):
        sel = ~done & (p <= pt.utilization)
        if i == 0:
            out = np.where(sel, points[0].score, out)
        else:
            prev = points[i - 1]
            val = prev.score + go_div_vec(
                (pt.score - prev.score) * (p - prev.utilization), pt.utilization - prev.utilization
            )
            out = np.where(sel, val, out)
        done |= sel
    return out


def scaled_shape(shape: Sequence[UtilizationShapePoint]) -> tuple[FunctionShapePoint, ...]:
    """Configured shape points with scores scaled to MaxNodeScore."""
    factor = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    return tuple(FunctionShapePoint(p.utilization, p.score * factor) for p in shape)


class RequestedToCapacityRatioScorer:
    """Scorer for ``RequestedToCapacityRatio``; ``weights`` in configuration order."""

    __slots__ = ("_f", "shape", "weights")

    def __init__(self, weights: Sequence[int], shape: Sequence[UtilizationShapePoint]) -> None:
        self.weights = tuple(weights)
        self.shape = scaled_shape(shape)
        self._f = build_broken_linear_function(self.shape)

    def resource_score(self, requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return self._f(MAX_UTILIZATION)
        return self._f(requested * MAX_UTILIZATION // capacity)

    def score(
        self, requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]
    ) -> int:
        node_score = weight_sum = 0
        for req, alloc, w in zip(requested, allocatable, self.weights, strict=True):
            if alloc == 0:
                continue
            s = self.resource_score(req, alloc)
            if s > 0:
                node_score += s * w
                weight_sum += w
        if weight_sum == 0:
            return 0
        return go_round(float(node_score) / float(weight_sum))

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
            over = req > alloc
            safe = np.where(has, alloc, 1)
            util = np.where(over, MAX_UTILIZATION, (req * MAX_UTILIZATION) // safe)
            s = broken_linear_vector(self.shape, util)
            take = has & (s > 0)
            node_score += np.where(take, s * w, 0)
            weight_sum += np.where(take, w, 0)
        safe = np.maximum(weight_sum, 1).astype(np.float64)
        rounded = go_round_vec(node_score.astype(np.float64) / safe)
        return np.where(weight_sum == 0, 0, rounded)
