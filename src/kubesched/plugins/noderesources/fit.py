"""NodeResourcesFit (upstream pkg/scheduler/framework/plugins/noderesources/fit.go, v1.36).

- PreFilter: stores the pod's effective request (PodRequests: containers +
  sidecars, max with init containers, pod-level requests, overhead) under
  ``PreFilterNodeResourcesFit``. Always Success; no PreFilterExtensions (the
  state does not depend on other pods).
- Filter: see :mod:`fit_check` (reasons, order, Unresolvable rule). Error when
  PreFilter did not run.
- PreScore / Score: the configured scoring strategy (LeastAllocated by
  default, MostAllocated, RequestedToCapacityRatio) over
  ``scoringStrategy.resources``; see :mod:`resource_allocation` for the
  amounts. No NormalizeScore.
- EventsToRegister: see :mod:`fit_hints`.

Both Filter and Score have a vector form over the NodeTable that gives the
same statuses and scores as the per-node form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from kubesched.framework.config import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesFitArgs,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.interfaces import NodeSet, PreFilterExtensions, ScoreExtensions, Verdicts
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.results import PreFilterResult
from kubesched.framework.status import SUCCESS, Status, error
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.noderesources import fit_hints
from kubesched.plugins.noderesources.fit_check import (
    IgnoredResources,
    PodRequest,
    fits_request,
    fits_rows,
    fits_vector,
    passes_rows,
    status_of,
    status_what_if,
    verdicts_rows,
    what_if_columns,
)
from kubesched.plugins.noderesources.least_allocated import LeastAllocatedScorer
from kubesched.plugins.noderesources.most_allocated import MostAllocatedScorer
from kubesched.plugins.noderesources.requested_to_capacity_ratio import (
    RequestedToCapacityRatioScorer,
)
from kubesched.plugins.noderesources.resource_allocation import (
    AllocationScores,
    ResourceAllocation,
    Scorer,
    resources_not_found,
)
from kubesched.plugins.noderesources.validation import validate_fit_args

NAME: Final = "NodeResourcesFit"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME


def _pre_filter_state_missing() -> Status:
    # Upstream: fmt.Errorf("error reading %q from cycleState: %w", key, ErrNotFound)
    return error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]

    def clone(self) -> _PreScoreState:
        return self


def make_scorer(args: NodeResourcesFitArgs) -> Scorer:
    s = args.scoring_strategy
    weights = [r.weight for r in s.resources]
    if s.type == LEAST_ALLOCATED:
        return LeastAllocatedScorer(weights)
    if s.type == MOST_ALLOCATED:
        return MostAllocatedScorer(weights)
    if s.type == REQUESTED_TO_CAPACITY_RATIO:
        return RequestedToCapacityRatioScorer(weights, s.shape)
    raise ValueError(f"scoring strategy {s.type} is not supported")


class Fit:
    """The NodeResourcesFit plugin (PreFilter, Filter, PreScore, Score, EnqueueExtensions)."""

    name = NAME
    spec_determined_filter = True
    """Its verdict reads the pod's requests, the args, the node's allocatable and its
    summed requests only (framework.interfaces.SpecDeterminedFilterPlugin)."""

    def __init__(self, args: object = None, handle: object = None) -> None:
        if args is None:
            args = NodeResourcesFitArgs()
        if not isinstance(args, NodeResourcesFitArgs):
            got = type(args).__name__
            raise TypeError(f"want args to be of type NodeResourcesFitArgs, got {got}")
        validate_fit_args(args)
        self.args = args
        self.handle = handle
        self.ignored = IgnoredResources(
            frozenset(args.ignored_resources), frozenset(args.ignored_resource_groups)
        )
        self.allocation = ResourceAllocation(args.scoring_strategy.resources, use_requested=False)
        self.scorer = make_scorer(args)
        # Keys of this plugin's per-spec memo entries (values depend on the args).
        self._memo_request = object()
        self._memo_pre_score = object()
        self._scores = AllocationScores(self.allocation, self.scorer)

    def filter_what_if(
        self, state: CycleState, pod: PodInfo, rows: IntArray, requested: IntArray
    ) -> Verdicts | None:
        """Filter ``rows`` as if their summed requests were ``requested`` (preemption's
        vectorised dry run takes victims off before asking)."""
        req = state.get(PRE_FILTER_STATE_KEY)
        table = getattr(self.handle, "table", None)
        if not isinstance(req, PodRequest) or not isinstance(table, NodeTable):
            return None
        return verdicts_rows(req, table, rows, requested)

    def filter_what_if_row(
        self, state: CycleState, pod: PodInfo, row: int, requested: list[int]
    ) -> Status | None:
        """``filter_what_if`` for one row, its summed requests as a list: the row's
        status (SUCCESS when it passes); None = ask ``filter_what_if``."""
        req = state.get(PRE_FILTER_STATE_KEY)
        table = getattr(self.handle, "table", None)
        if not isinstance(req, PodRequest) or not isinstance(table, NodeTable):
            return None
        return status_what_if(req, table, row, requested)

    def passes_what_if(
        self, state: CycleState, pod: PodInfo, rows: IntArray, requested: IntArray
    ) -> npt.NDArray[np.bool_] | None:
        """Whether ``filter_what_if`` would pass each row (no statuses built)."""
        req = state.get(PRE_FILTER_STATE_KEY)
        table = getattr(self.handle, "table", None)
        if not isinstance(req, PodRequest) or not isinstance(table, NodeTable):
            return None
        return passes_rows(req, table, rows, requested)

    def what_if_columns(self, state: CycleState, pod: PodInfo) -> tuple[IntArray, IntArray] | None:
        """``(cols, need)``: ``filter_what_if`` passes a row with summed requests
        ``requested`` exactly when ``allocatable[cols] - requested[cols] >= need``
        everywhere (see ``fit_check.what_if_columns``); None when that form does
        not apply. Preemption's reprieve loop works on these columns alone."""
        req = state.get(PRE_FILTER_STATE_KEY)
        table = getattr(self.handle, "table", None)
        if not isinstance(req, PodRequest) or not isinstance(table, NodeTable):
            return None
        return what_if_columns(req, table)

    # -- PreFilter ----------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        memo = pod.facts.memo
        req = memo.get(self._memo_request)
        if req is None:
            req = PodRequest.of(pod.request, self.ignored)
            memo[self._memo_request] = req
        state.write(PRE_FILTER_STATE_KEY, req)
        return None, SUCCESS

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    # -- Filter -------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        req = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(req, PodRequest):
            return _pre_filter_state_missing()
        insufficient = fits_request(req, node)
        if not insufficient:
            return SUCCESS
        return status_of(insufficient)

    def filter_vector(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts | None:
        req = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(req, PodRequest):
            return None  # the per-node path reports the error
        return fits_vector(req, table)

    def filter_rows(
        self, state: CycleState, pod: PodInfo, table: NodeTable, rows: IntArray
    ) -> Verdicts | None:
        req = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(req, PodRequest):
            return None  # the per-node path reports the error
        return fits_rows(req, table, rows)

    # -- PreScore / Score -----------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Status:
        memo = pod.facts.memo
        ps = memo.get(self._memo_pre_score)
        if ps is None:
            ps = _PreScoreState(self.allocation.pod_request_list(pod))
            memo[self._memo_pre_score] = ps
        state.write(PRE_SCORE_STATE_KEY, ps)
        return SUCCESS

    def _pod_requests(self, state: CycleState, pod: PodInfo) -> tuple[int, ...]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(s, _PreScoreState):
            return s.pod_requests
        return self.allocation.pod_request_list(pod)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        if not self.allocation.resources:
            return 0, resources_not_found()
        return self._scores.node(node, self._pod_requests(state, pod)), SUCCESS

    def score_vector(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> IntArray | None:
        if not self.allocation.resources:
            return None  # the per-node path reports the error
        return self._scores.rows(nodes.table, nodes.rows, self._pod_requests(state, pod))

    def score_slots(self, state: CycleState, pod: PodInfo, table: NodeTable) -> IntArray | None:
        """Every slot's score (a node's score depends on its own amounts only)."""
        if not self.allocation.resources:
            return None
        reqs = self._pod_requests(state, pod)
        return self._scores.slots(table, reqs)

    def score_extensions(self) -> ScoreExtensions | None:
        return None

    # -- EnqueueExtensions ----------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return fit_hints.events_to_register()
