"""NodeResourcesBalancedAllocation (upstream balanced_allocation.go, v1.36).

Per configured resource with allocatable > 0, the fraction ``requested /
allocatable`` (capped at 1, plain Requested) with the pod and without it;
``std`` is ``|f1 - f2| / 2`` for two resources, the population standard deviation
for more, else 0; ``balance = int64((1 - std) * 100)``. The score (v1.36,
kubernetes PR #135573; before: ``balance_with_pod``) is

    50 + (50 + balance_with_pod - balance_without_pod) / 2      (int64, truncating)

Pods requesting none of the resources are skipped at PreScore (#129138) and
score 0 without PreScore.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from kubesched.api.goformat import Num, Ops
from kubesched.framework.config import NodeResourcesBalancedAllocationArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeSet, ScoreExtensions
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.results import MAX_NODE_SCORE
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.noderesources.resource_allocation import (
    AllocationScores,
    ResourceAllocation,
)
from kubesched.plugins.noderesources.validation import validate_balanced_allocation_args

NAME: Final = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

# --------------------------------------------------------------------------- the formula


_HALF: Final = MAX_NODE_SCORE // 2
_MAX: Final = float(MAX_NODE_SCORE)


def balanced_score(
    xp: Ops, requested: Sequence[Num], allocated: Sequence[Num], allocatable: Sequence[Num]
) -> Num:
    """The score of the module docstring (a ``Scorer``), with Go's float64
    operations in Go's order; resources not taking part add exact zeros."""
    count: Num = 0  # resources taking part so far
    diff_with: Num = 0.0  # first fraction - second fraction (exact: the others add 0.0)
    diff_without: Num = 0.0
    with_pod: list[Num] = []
    without_pod: list[Num] = []
    for req, alloc, a in zip(requested, allocated, allocatable, strict=True):
        has = a != 0
        d = xp.to_float(a + (a == 0))
        f_with = xp.minimum(req / d, 1.0)
        f_without = xp.minimum(alloc / d, 1.0)
        sign = has * (1 - 2 * count) * (count < 2)  # +1 first, -1 second, else 0
        diff_with = diff_with + sign * f_with
        diff_without = diff_without + sign * f_without
        with_pod.append(f_with)
        without_pod.append(f_without)
        count = count + has
    two = count == 2  # std = |f1 - f2| / 2
    std_with = abs(diff_with / 2) * two
    std_without = abs(diff_without / 2) * two
    many = count > 2  # std = the population standard deviation
    if xp.any(many):
        std_with = xp.where(many, _deviation(xp, with_pod, allocatable, count), std_with)
        std_without = xp.where(many, _deviation(xp, without_pod, allocatable, count), std_without)
    balance_with = xp.trunc((1 - std_with) * _MAX)  # int64((1 - std) * MaxNodeScore)
    balance_without = xp.trunc((1 - std_without) * _MAX)
    return _HALF + xp.go_div(_HALF + balance_with - balance_without, 2)


def _deviation(xp: Ops, fractions: Sequence[Num], allocatable: Sequence[Num], count: Num) -> Num:
    """The population standard deviation of the fractions taking part (more than
    two), summed in Go's order."""
    n = xp.to_float(xp.maximum(count, 1))
    total: Num = 0.0
    for f in fractions:
        total = total + f
    mean = total / n
    acc: Num = 0.0
    for f, a in zip(fractions, allocatable, strict=True):
        acc = acc + (f - mean) * (f - mean) * (a != 0)
    return xp.sqrt(acc / n)


# --------------------------------------------------------------------------- the plugin


class BalancedAllocation:
    """No normalisation; Score Error "resources not found" without resources."""

    name = NAME

    def __init__(self, args: object = None, handle: object = None) -> None:
        if args is None:
            args = NodeResourcesBalancedAllocationArgs()
        if not isinstance(args, NodeResourcesBalancedAllocationArgs):
            got = type(args).__name__
            raise TypeError(
                f"want args to be of type NodeResourcesBalancedAllocationArgs, got {got}"
            )
        validate_balanced_allocation_args(args)
        self.args = args
        self._scores = AllocationScores(
            ResourceAllocation(args.resources, use_requested=True),
            balanced_score,
            PRE_SCORE_STATE_KEY,
            skip_best_effort=True,
        )

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Status:
        return self._scores.pre_score(state, pod)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        return self._scores.score(state, pod, node)

    def score_vector(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> IntArray | None:
        return self._scores.score_vector(state, pod, nodes)

    def score_slots(self, state: CycleState, pod: PodInfo, table: NodeTable) -> IntArray | None:
        return self._scores.score_slots(state, pod, table)

    def score_extensions(self) -> ScoreExtensions | None:
        return None
