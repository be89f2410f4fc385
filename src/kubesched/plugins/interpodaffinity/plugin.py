"""The InterPodAffinity plugin (upstream v1.36): PreFilter (with AddPod / RemovePod),
Filter, PreScore, Score (+ NormalizeScore), their vector forms and the queueing
hints. It keeps a lazily refreshed ``PodIndex`` of the table's pods, unused under
``Handle.per_node``.
"""

from __future__ import annotations

from kubesched.framework.config import InterPodAffinityArgs, PluginArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.interfaces import Handle, NodeSet, Verdicts
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.results import NodeScore, PreFilterResult
from kubesched.framework.status import SUCCESS, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.interpodaffinity import hints
from kubesched.plugins.interpodaffinity.filtering import (
    NAME,
    NO_STATE,
    PRE_FILTER_STATE_KEY,
    compute_pre_filter,
    filter_node,
    read_state,
    update_state,
)
from kubesched.plugins.interpodaffinity.index import PodIndex
from kubesched.plugins.interpodaffinity.scoring import (
    NO_STATE as NO_SCORE_STATE,
)
from kubesched.plugins.interpodaffinity.scoring import (
    PRE_SCORE_STATE_KEY,
    PreScoreState,
    compute_pre_score,
    normalize,
    normalize_vector,
    score_node,
)
from kubesched.plugins.interpodaffinity.terms import NamespaceResolver
from kubesched.plugins.interpodaffinity.vector import filter_verdicts, raw_scores

MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100


class InterPodAffinity:
    """Args ``InterPodAffinityArgs`` (None: defaults); TypeError for other args,
    ValueError for ``hardPodAffinityWeight`` outside [0, 100]."""

    name = NAME

    def __init__(self, args: InterPodAffinityArgs | PluginArgs | None, handle: Handle) -> None:
        if args is None:
            args = InterPodAffinityArgs()
        if not isinstance(args, InterPodAffinityArgs):
            raise TypeError(
                f"want args to be of type InterPodAffinityArgs, got {type(args).__name__}"
            )
        w = args.hard_pod_affinity_weight
        if not MIN_HARD_POD_AFFINITY_WEIGHT <= w <= MAX_HARD_POD_AFFINITY_WEIGHT:
            raise ValueError(
                f"hardPodAffinityWeight: Invalid value: {w}: not in valid range "
                f"[{MIN_HARD_POD_AFFINITY_WEIGHT}, {MAX_HARD_POD_AFFINITY_WEIGHT}]"
            )
        self.args = args
        self._handle = handle
        self._index = PodIndex()

    def _pod_index(self) -> PodIndex | None:
        """The index for the vectorised states, or None under ``Handle.per_node``
        (PreFilter / PreScore then walk the nodes' pods as upstream)."""
        return None if self._handle.per_node else self._index

    def _resolver(self) -> NamespaceResolver:
        return NamespaceResolver(self._handle.reader.namespace)

    # ------------------------------------------------------------------ events
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return hints.events_to_register()

    # ------------------------------------------------------------------ PreFilter
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        """Success (state written), Skip, or UnschedulableAndUnresolvable when the
        pod's terms do not parse."""
        s, status = compute_pre_filter(self._pod_index(), nodes, pod.pod, self._resolver())
        if s is None:
            assert status is not None
            return None, status
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, SUCCESS

    def pre_filter_extensions(self) -> InterPodAffinity:
        return self

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo) -> Status:
        """Count ``to_add`` on ``node`` (Success, or Error without PreFilter state)."""
        return update_state(state, to_add, node.node, 1) or SUCCESS

    def remove_pod(
        self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        """Uncount ``to_remove`` on ``node`` (Success, or Error without PreFilter state)."""
        return update_state(state, to_remove, node.node, -1) or SUCCESS

    # ------------------------------------------------------------------ Filter
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Success, UnschedulableAndUnresolvable (affinity), Unschedulable
        (anti-affinity, either side), or Error without PreFilter state."""
        s = read_state(state)
        if s is None:
            return NO_STATE
        assert node.node is not None
        return filter_node(s, node.node) or SUCCESS

    def filter_vector(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts | None:
        s = read_state(state)
        if s is None:
            return None  # the exact path reports the error
        return filter_verdicts(s, table)

    # ------------------------------------------------------------------ Score
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Status:
        """Success (state written), Skip, or Error (the pod's terms do not parse)."""
        s, status = compute_pre_score(
            self._pod_index(), nodes.table, pod.pod, self.args, self._resolver()
        )
        if s is None:
            assert status is not None
            return status
        state.write(PRE_SCORE_STATE_KEY, s)
        return SUCCESS

    def _score_state(self, state: CycleState) -> PreScoreState | None:
        s = state.get(PRE_SCORE_STATE_KEY)
        return s if isinstance(s, PreScoreState) else None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        """The summed weights of the node's topology values (may be negative)."""
        s = self._score_state(state)
        if s is None:
            return 0, NO_SCORE_STATE
        assert node.node is not None
        return score_node(s, node.node), SUCCESS

    def score_extensions(self) -> InterPodAffinity:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status:
        s = self._score_state(state)
        if s is None:
            return NO_SCORE_STATE
        normalize(s, scores)
        return SUCCESS

    def score_vector(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> IntArray | None:
        s = self._score_state(state)
        if s is None:
            return None
        raw = raw_scores(s, nodes.table)[nodes.rows]
        return normalize_vector(raw)
