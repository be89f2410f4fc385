"""NodeResourcesFit (upstream pkg/scheduler/framework/plugins/noderesources/fit.go, v1.36).

- PreFilter: the pod's effective request as a ``ResourcePlan`` (:mod:`fit_plan`)
  under ``PreFilterNodeResourcesFit``; always Success, no PreFilterExtensions.
- Filter: the plan under the plugin's ``ResourceFit`` (``framework.resources``);
  Error when PreFilter did not run.
- PreScore / Score: the scoring strategy (LeastAllocated by default,
  MostAllocated, RequestedToCapacityRatio) over :mod:`resource_allocation`'s
  amounts; no NormalizeScore.
- EventsToRegister: :mod:`fit_hints`.
"""

from __future__ import annotations

from typing import Final

from kubesched.framework.config import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesFitArgs,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.interfaces import (
    Handle,
    NodeSet,
    PreFilterExtensions,
    ScoreExtensions,
    Verdicts,
)
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.resources import ResourceFit, ResourcePlan
from kubesched.framework.results import PreFilterResult
from kubesched.framework.status import SUCCESS, Status, error
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.noderesources import fit_hints
from kubesched.plugins.noderesources.fit_plan import IgnoredResources, fit_plan
from kubesched.plugins.noderesources.least_allocated import least_requested_score
from kubesched.plugins.noderesources.most_allocated import most_requested_score
from kubesched.plugins.noderesources.requested_to_capacity_ratio import (
    RequestedToCapacityRatioScorer,
)
from kubesched.plugins.noderesources.resource_allocation import (
    AllocationScores,
    ResourceAllocation,
    Scorer,
)
from kubesched.plugins.noderesources.validation import validate_fit_args
from kubesched.plugins.noderesources.weighted_mean import WeightedMeanScorer

NAME: Final = "NodeResourcesFit"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME


def _pre_filter_state_missing() -> Status:
    # Upstream: fmt.Errorf("error reading %q from cycleState: %w", key, ErrNotFound)
    return error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')


def make_scorer(args: NodeResourcesFitArgs) -> Scorer:
    s = args.scoring_strategy
    weights = [r.weight for r in s.resources]
    if s.type == LEAST_ALLOCATED:
        return WeightedMeanScorer(weights, least_requested_score)
    if s.type == MOST_ALLOCATED:
        return WeightedMeanScorer(weights, most_requested_score)
    if s.type == REQUESTED_TO_CAPACITY_RATIO:
        return RequestedToCapacityRatioScorer(weights, s.shape)
    raise ValueError(f"scoring strategy {s.type} is not supported")


class Fit:
    """The NodeResourcesFit plugin (PreFilter, Filter, PreScore, Score, EnqueueExtensions)."""

    name = NAME
    spec_determined_filter = True
    """Its verdict reads the pod's requests, the args, the node's allocatable and its
    summed requests only (framework.interfaces.SpecDeterminedFilterPlugin)."""

    def __init__(self, args: object, handle: Handle) -> None:
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
        allocation = ResourceAllocation(args.scoring_strategy.resources, use_requested=False)
        self._scores = AllocationScores(allocation, make_scorer(args), PRE_SCORE_STATE_KEY)
        self._memo_plan = object()
        """This plugin's key of its plan in a spec's memo (plans depend on the args)."""
        self._fit = ResourceFit()

    # -- ResourceFilterPlugin -------------------------------------------------
    @property
    def resource_fit(self) -> ResourceFit:
        """The evaluator of this plugin's plans (its memos live as long as the plugin)."""
        return self._fit

    def resource_plan(self, state: CycleState, pod: PodInfo) -> ResourcePlan | None:
        plan = state.get(PRE_FILTER_STATE_KEY)
        return plan if isinstance(plan, ResourcePlan) else None

    # -- PreFilter ----------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        memo = pod.facts.memo
        plan = memo.get(self._memo_plan)
        if plan is None:
            plan = fit_plan(pod.request, self.ignored)
            memo[self._memo_plan] = plan
        state.write(PRE_FILTER_STATE_KEY, plan)
        return None, SUCCESS

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    # -- Filter: every form is a call into the evaluator ----------------------
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        plan = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(plan, ResourcePlan):
            return _pre_filter_state_missing()
        return ResourceFit.node(plan, node)

    def filter_vector(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts | None:
        plan = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(plan, ResourcePlan):
            return None  # the per-node path reports the error
        return self._fit.rows(plan, table, None)

    def filter_rows(
        self, state: CycleState, pod: PodInfo, table: NodeTable, rows: IntArray
    ) -> Verdicts | None:
        plan = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(plan, ResourcePlan):
            return None  # the per-node path reports the error
        return self._fit.rows(plan, table, rows)

    def filter_what_if(
        self, state: CycleState, pod: PodInfo, rows: IntArray, requested: IntArray
    ) -> Verdicts | None:
        plan = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(plan, ResourcePlan):
            return None
        return self._fit.what_if(plan, self.handle.table, rows, requested)

    def filter_what_if_row(
        self, state: CycleState, pod: PodInfo, row: int, requested: list[int]
    ) -> Status | None:
        plan = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(plan, ResourcePlan):
            return None
        return self._fit.what_if_row(plan, self.handle.table, row, requested)

    # -- PreScore / Score -----------------------------------------------------
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

    # -- EnqueueExtensions ----------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return fit_hints.events_to_register()
