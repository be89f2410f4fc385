"""NodeResourcesBalancedAllocation (upstream balanced_allocation.go, v1.36).

Favours nodes whose resource usage becomes *more balanced* with the pod.

For each configured resource the node has (allocatable > 0) the fraction
``requested / allocatable`` (capped at 1) is taken, once with the pod
(``requested``) and once without it (``allocated``); both use plain Requested,
not the non-zero defaults (``useRequested``). For each set of fractions
``std`` is ``|f1 - f2| / 2`` for two resources, the population standard
deviation for more, 0 otherwise, and ``balance = int64((1 - std) * 100)``
(float64, truncated). The score is

    50 + (50 + balance_with_pod - balance_without_pod) / 2      (int64, truncating)

so it lies in [50, 100], 75 meaning "no change". This "with vs without" form
is new in v1.36 (kubernetes PR #135573, listed in CHANGELOG-1.36
v1.36.0-alpha.1); up to v1.35 the score was ``balance_with_pod`` alone.

Pods requesting none of the configured resources are skipped at PreScore
(Skip; upstream issue #129138), and Score returns 0 for them when PreScore
was not run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from kubesched.api.goformat import go_div, go_div_vec
from kubesched.framework.config import NodeResourcesBalancedAllocationArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeSet, ScoreExtensions
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.results import MAX_NODE_SCORE
from kubesched.framework.status import SKIP, SUCCESS, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.noderesources.resource_allocation import (
    AllocationScores,
    ResourceAllocation,
    resources_not_found,
)
from kubesched.plugins.noderesources.validation import validate_balanced_allocation_args

NAME: Final = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

FloatArray = npt.NDArray[np.float64]


# --------------------------------------------------------------------------- the formula


def balance_score(used: Sequence[int], allocatable: Sequence[int]) -> int:
    """``int64((1 - std) * MaxNodeScore)`` over the resources with allocatable > 0,
    with Go's float64 operations in Go's order."""
    if len(allocatable) == 2:
        return _balance_score_2(used[0], used[1], allocatable[0], allocatable[1])
    return _balance_score_n(used, allocatable)


def _balance_score_2(u0: int, u1: int, a0: int, a1: int) -> int:
    """:func:`_balance_score_n` for two resources (the default), unrolled: the same
    float64 operations (two fractions: ``std = |f0 - f1| / 2``; fewer: 0)."""
    if a0 == 0 or a1 == 0:
        return int((1 - 0.0) * float(MAX_NODE_SCORE))
    f0 = float(u0) / float(a0)
    if f0 > 1:
        f0 = 1.0
    f1 = float(u1) / float(a1)
    if f1 > 1:
        f1 = 1.0
    std = abs((f0 - f1) / 2)
    return int((1 - std) * float(MAX_NODE_SCORE))


def _balance_score_n(used: Sequence[int], allocatable: Sequence[int]) -> int:
    """The general form of :func:`balance_score`."""
    fractions: list[float] = []
    total = 0.0
    for u, a in zip(used, allocatable, strict=True):
        if a == 0:
            continue
        fraction = float(u) / float(a)
        if fraction > 1:
            fraction = 1.0
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / float(len(fractions))
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / float(len(fractions)))
    return int((1 - std) * float(MAX_NODE_SCORE))


def balance_score_vector(used: Sequence[IntArray], allocatable: Sequence[IntArray]) -> IntArray:
    """:func:`balance_score` for many nodes; the same float64 operations in the
    same order (skipped resources add exactly 0.0, which changes nothing)."""
    n = len(used[0]) if used else 0
    count = np.zeros(n, dtype=np.int64)
    total = np.zeros(n, dtype=np.float64)
    first = np.zeros(n, dtype=np.float64)
    second = np.zeros(n, dtype=np.float64)
    fracs: list[FloatArray] = []
    masks: list[npt.NDArray[np.bool_]] = []
    for u, a in zip(used, allocatable, strict=True):
        has = a != 0
        f = u.astype(np.float64) / np.where(has, a, 1).astype(np.float64)
        f = np.where(f > 1, 1.0, f)
        f = np.where(has, f, 0.0)
        total = total + f
        first = np.where(has & (count == 0), f, first)
        second = np.where(has & (count == 1), f, second)
        count += has
        fracs.append(f)
        masks.append(has)
    std = np.zeros(n, dtype=np.float64)
    two = count == 2
    std = np.where(two, np.abs((first - second) / 2), std)
    many = count > 2
    if many.any():
        cnt = np.maximum(count, 1).astype(np.float64)
        mean = total / cnt
        acc = np.zeros(n, dtype=np.float64)
        for f, has in zip(fracs, masks, strict=True):
            d = f - mean
            acc = acc + np.where(has, d * d, 0.0)
        std = np.where(many, np.sqrt(acc / cnt), std)
    return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)


class BalancedScorer:
    """The v1.36 balanced-allocation scorer (see the module docstring)."""

    __slots__ = ()

    def score(
        self, requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]
    ) -> int:
        with_pod = balance_score(requested, allocatable)
        without_pod = balance_score(allocated, allocatable)
        half = MAX_NODE_SCORE // 2
        return half + go_div(half + with_pod - without_pod, 2)

    def score_vector(
        self,
        requested: Sequence[IntArray],
        allocated: Sequence[IntArray],
        allocatable: Sequence[IntArray],
    ) -> IntArray:
        with_pod = balance_score_vector(requested, allocatable)
        without_pod = balance_score_vector(allocated, allocatable)
        half = MAX_NODE_SCORE // 2
        return half + go_div_vec(half + with_pod - without_pod, 2)


# --------------------------------------------------------------------------- the plugin


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]

    def clone(self) -> _PreScoreState:
        return self


class BalancedAllocation:
    """PreScore + Score plugin; no normalisation (ScoreExtensions is None).

    PreScore: Success, or Skip for a pod requesting none of the configured
    resources. Score: Success, or Error "resources not found" when no resource
    is configured.
    """

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
        self.allocation = ResourceAllocation(args.resources, use_requested=True)
        self.scorer = BalancedScorer()
        self._memo_pre_score = object()
        self._scores = AllocationScores(self.allocation, self.scorer)

    def _state(self, state: CycleState, pod: PodInfo) -> tuple[int, ...]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(s, _PreScoreState):
            return s.pod_requests
        return self.allocation.pod_request_list(pod)

    # -- PreScore ---------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Status:
        memo = pod.facts.memo
        ps = memo.get(self._memo_pre_score)
        if ps is None:
            reqs = self.allocation.pod_request_list(pod)
            # Skipped so that best-effort pods do not all pile onto one node
            # (upstream issue #129138).
            ps = SKIP if self.allocation.is_best_effort(reqs) else _PreScoreState(reqs)
            memo[self._memo_pre_score] = ps
        if not isinstance(ps, _PreScoreState):
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, ps)
        return SUCCESS

    # -- Score ------------------------------------------------------------
    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        if not self.allocation.resources:
            return 0, resources_not_found()
        reqs = self._state(state, pod)
        if self.allocation.is_best_effort(reqs):
            return 0, SUCCESS
        return self._scores.node(node, reqs), SUCCESS

    def score_vector(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> IntArray | None:
        if not self.allocation.resources:
            return None  # the exact path reports the error
        reqs = self._state(state, pod)
        if self.allocation.is_best_effort(reqs):
            return np.zeros(len(nodes), dtype=np.int64)
        return self._scores.rows(nodes.table, nodes.rows, reqs)

    def score_slots(self, state: CycleState, pod: PodInfo, table: NodeTable) -> IntArray | None:
        """Every slot's score (a node's score depends on its own amounts only)."""
        if not self.allocation.resources:
            return None
        reqs = self._state(state, pod)
        if self.allocation.is_best_effort(reqs):
            return None
        return self._scores.slots(table, reqs)

    def score_extensions(self) -> ScoreExtensions | None:
        return None
