"""The PodTopologySpread plugin (upstream podtopologyspread, v1.36): PreFilter with
AddPod/RemovePod extensions, Filter, PreScore, Score and NormalizeScore, with
vector forms of Filter and Score, and queueing hints.

Statuses:
- PreFilter: Skip when the pod has no DoNotSchedule constraint (own or
  default); Error ``get constraints from pod: obtaining pod's hard topology
  spread constraints: <err>`` when a selector does not parse; else Success
  with ``"PreFilterPodTopologySpread"`` written.
- Filter: UnschedulableAndUnresolvable ``node(s) didn't match pod topology
  spread constraints (missing required label)``, Unschedulable ``node(s) didn't
  match pod topology spread constraints``.
- Filter, AddPod, RemovePod, Score, NormalizeScore: Error without their state.
- PreScore: Skip when the snapshot has no node or the pod has no
  ScheduleAnyway constraint; Error ``calculating preScoreState: ...``.

Args: ``PodTopologySpreadArgs``. ``defaultingType: System`` (the default) uses
``SYSTEM_DEFAULT_CONSTRAINTS`` (hostname maxSkew 3, zone maxSkew 5, both
ScheduleAnyway) and relaxes PreScore's "every topology key present" rule
for them; ``List`` uses ``defaultConstraints`` as given.
States are built over the table (``vector.py``) unless ``Handle.per_node``.
"""

from __future__ import annotations

from kubesched.api.types import Pod
from kubesched.framework.config import SYSTEM_DEFAULTING, PluginArgs, PodTopologySpreadArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ClusterEventWithHint, EventObject, QueueingHint
from kubesched.framework.interfaces import Handle, NodeSet, Verdicts
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.results import NodeScore, PreFilterResult
from kubesched.framework.status import SKIP, SUCCESS, Status, error
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.podtopologyspread import filtering, hints, scoring, vector
from kubesched.plugins.podtopologyspread.common import (
    NAME,
    SYSTEM_DEFAULT_CONSTRAINTS,
    ConstraintError,
    ConstraintSource,
)
from kubesched.plugins.podtopologyspread.filtering import PRE_FILTER_STATE_KEY, PreFilterState
from kubesched.plugins.podtopologyspread.podcounts import PodCountIndex
from kubesched.plugins.podtopologyspread.scoring import PRE_SCORE_STATE_KEY, PreScoreState

_NO_PRE_FILTER_STATE = f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
_NO_PRE_SCORE_STATE = f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found'


class PodTopologySpread:
    """PreFilter (with extensions), Filter, PreScore, Score; see the module docstring."""

    name = NAME

    def __init__(self, args: PodTopologySpreadArgs | PluginArgs | None, handle: Handle) -> None:
        if args is None:
            args = PodTopologySpreadArgs()
        if not isinstance(args, PodTopologySpreadArgs):
            raise TypeError(
                f"want args to be of type PodTopologySpreadArgs, got {type(args).__name__}"
            )
        self._handle = handle
        self.system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING
        self.default_constraints = (
            SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else args.default_constraints
        )
        self._source: ConstraintSource | None = None
        self._index = PodCountIndex()
        self._masks = vector.InclusionMasks()

    @property
    def source(self) -> ConstraintSource:
        if self._source is None:
            self._source = ConstraintSource(self.default_constraints, self._handle.reader)
        return self._source

    # ------------------------------------------------------------------ events
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(hints.POD_EVENT, self.is_schedulable_after_pod_change),
            ClusterEventWithHint(hints.NODE_EVENT, self.is_schedulable_after_node_change),
        ]

    def is_schedulable_after_pod_change(
        self, pod: Pod, old: EventObject, new: EventObject
    ) -> QueueingHint:
        return hints.pod_change_hint(pod, old, new, self.source.hard)

    def is_schedulable_after_node_change(
        self, pod: Pod, old: EventObject, new: EventObject
    ) -> QueueingHint:
        return hints.node_change_hint(pod, old, new, self.source.hard)

    # ------------------------------------------------------------------ PreFilter
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        try:
            constraints = self.source.hard(pod.pod)
        except ConstraintError as err:
            return None, error(f"get constraints from pod: {err}")
        if not constraints:
            return None, SKIP
        if self._handle.per_node:
            s = filtering.build_pre_filter_state(pod.pod, constraints, nodes.ordered_infos())
        else:
            s = vector.build_pre_filter_state(pod, constraints, nodes, self._index, self._masks)
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, SUCCESS

    def pre_filter_extensions(self) -> PodTopologySpread:
        return self

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo) -> Status:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return error(_NO_PRE_FILTER_STATE)
        filtering.update_with_pod(s, to_add.pod, pod.pod, node.node, 1)
        return SUCCESS

    def remove_pod(
        self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return error(_NO_PRE_FILTER_STATE)
        filtering.update_with_pod(s, to_remove.pod, pod.pod, node.node, -1)
        return SUCCESS

    # ------------------------------------------------------------------ Filter
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return error(_NO_PRE_FILTER_STATE)
        return filtering.filter_node(s, pod.pod, node)

    def filter_vector(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return None
        return vector.filter_vector(s, pod.pod, table)

    # ------------------------------------------------------------------ Score
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Status:
        table = nodes.table
        if len(table) == 0:
            return SKIP
        p = pod.pod
        try:
            constraints = self.source.soft(p)
        except ConstraintError as err:
            return error(f"calculating preScoreState: {err}")
        if not constraints:
            return SKIP
        # Only the system defaults may score nodes that lack some topology key.
        require_all = bool(p.spec.topology_spread_constraints) or not self.system_defaulted
        if self._handle.per_node:
            s = scoring.build_pre_score_state(
                p, constraints, nodes.infos, table.ordered_infos(), require_all
            )
        else:
            s = vector.build_pre_score_state(
                pod, constraints, nodes, require_all, self._index, self._masks
            )
        state.write(PRE_SCORE_STATE_KEY, s)
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return 0, error(_NO_PRE_SCORE_STATE)
        return scoring.score_node(s, pod.pod, node), SUCCESS

    def score_extensions(self) -> PodTopologySpread:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return error(_NO_PRE_SCORE_STATE)
        scoring.normalize_scores(s, scores)
        return SUCCESS

    def score_vector(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> IntArray | None:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return None
        return vector.score_vector(s, pod.pod, nodes, self._index)
