"""TaintToleration: nodes with untolerated NoSchedule/NoExecute taints are
infeasible; untolerated PreferNoSchedule taints lower the score (upstream
tainttoleration/taint_toleration.go, v1.36).

- Filter: an untolerated NoSchedule / NoExecute taint is
  UnschedulableAndUnresolvable ``"node(s) had untolerated taint(s)"`` (v1.35+).
- PreScore keeps the tolerations with an empty or PreferNoSchedule effect.
- Score: untolerated PreferNoSchedule taints; NormalizeScore
  ``DefaultNormalizeScore(100, reverse=True)``.

Vectorised forms are derived from ``Reads(taints=True)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubesched.api.taints import (
    count_intolerable_prefer_no_schedule,
    do_not_schedule_taint,
    find_matching_untolerated_taint,
    prefer_no_schedule_tolerations,
)
from kubesched.api.types import Node, Pod, Toleration
from kubesched.framework.config import PluginArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventObject,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import Handle, NodeSet
from kubesched.framework.reads import Reads
from kubesched.framework.results import NodeScore
from kubesched.framework.scoring import default_normalize_score
from kubesched.framework.status import SUCCESS, Status, error, unresolvable
from kubesched.framework.types import NodeInfo, PodInfo

NAME: Final = "TaintToleration"
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME
ERR_REASON_UNTOLERATED: Final = "node(s) had untolerated taint(s)"
"""Filter reason (v1.35+); code UnschedulableAndUnresolvable."""

_UNTOLERATED: Final = unresolvable(ERR_REASON_UNTOLERATED)
_MEMO_PRE_SCORE: Final = object()
"""Key of the PreScore state in ``SpecFacts.memo`` (it depends on the spec only)."""
_MEMO_FILTER_READS: Final = object()
"""Key of Filter's ``Reads`` in ``SpecFacts.memo`` (it depends on the spec only)."""


@dataclass(frozen=True, slots=True)
class PreScoreState:
    """Tolerations with effect "" or PreferNoSchedule (immutable: clone is itself),
    and what Score reads with them."""

    tolerations_prefer_no_schedule: tuple[Toleration, ...]
    reads: Reads

    def clone(self) -> PreScoreState:
        return self


class TaintToleration:
    """Filter, PreScore and Score plugin; takes no args."""

    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args
        self._handle = handle

    # ------------------------------------------------------------------ events
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Node Add|UpdateNodeTaint and Pod UpdatePodToleration (queueing hints on)."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATION),
                is_schedulable_after_pod_toleration_change,
            ),
        ]

    # ------------------------------------------------------------------ Filter
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Success or UnschedulableAndUnresolvable ``ERR_REASON_UNTOLERATED``."""
        n = node.node
        assert n is not None
        taint = find_matching_untolerated_taint(
            n.taints, pod.pod.spec.tolerations, do_not_schedule_taint
        )
        return SUCCESS if taint is None else _UNTOLERATED

    def filter_reads(self, state: CycleState, pod: PodInfo) -> Reads:
        """The node's taints; the pod's tolerations."""
        memo = pod.facts.memo
        reads = memo.get(_MEMO_FILTER_READS)
        if not isinstance(reads, Reads):
            reads = Reads(taints=True, fragment=pod.pod.spec.tolerations)
            memo[_MEMO_FILTER_READS] = reads
        return reads

    # ------------------------------------------------------------------ Score
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Status:
        """Always Success: writes ``PRE_SCORE_STATE_KEY``."""
        memo = pod.facts.memo
        ps = memo.get(_MEMO_PRE_SCORE)
        if not isinstance(ps, PreScoreState):
            tol = prefer_no_schedule_tolerations(pod.pod.spec.tolerations)
            ps = PreScoreState(tol, Reads(taints=True, fragment=tol))
            memo[_MEMO_PRE_SCORE] = ps
        state.write(PRE_SCORE_STATE_KEY, ps)
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        """Raw score: intolerable PreferNoSchedule taints; Error without PreScore state."""
        s = _pre_score_state(state)
        if isinstance(s, Status):
            return 0, s
        n = node.node
        assert n is not None
        return count_intolerable_prefer_no_schedule(
            n.taints, s.tolerations_prefer_no_schedule
        ), SUCCESS

    def score_extensions(self) -> TaintToleration:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status:
        default_normalize_score(scores, reverse=True)
        return SUCCESS

    def score_reads(self, state: CycleState, pod: PodInfo) -> Reads | None:
        """The node's taints; the pod's PreferNoSchedule tolerations (None without
        PreScore state: the per-node path reports the error)."""
        s = _pre_score_state(state)
        return None if isinstance(s, Status) else s.reads


def _pre_score_state(state: CycleState) -> PreScoreState | Status:
    value = state.get(PRE_SCORE_STATE_KEY)
    if isinstance(value, PreScoreState):
        return value
    if value is None:
        return error(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
    return error(f"{value!r} convert to tainttoleration.preScoreState error")


def is_schedulable_after_node_change(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
    """QUEUE when the node (new, or changed) no longer has a NoSchedule/NoExecute taint
    the pod does not tolerate, while before it had one (or did not exist)."""
    if not isinstance(new, Node):
        return QueueingHint.QUEUE
    tol = pod.spec.tolerations
    was_untolerated = True
    if isinstance(old, Node):
        was_untolerated = (
            find_matching_untolerated_taint(old.taints, tol, do_not_schedule_taint) is not None
        )
    is_untolerated = (
        find_matching_untolerated_taint(new.taints, tol, do_not_schedule_taint) is not None
    )
    if was_untolerated and not is_untolerated:
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def is_schedulable_after_pod_toleration_change(
    pod: Pod, old: EventObject, new: EventObject
) -> QueueingHint:
    """QUEUE when the updated pod is the rejected pod itself (a toleration was added)."""
    if not isinstance(new, Pod):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE if new.uid == pod.uid else QueueingHint.SKIP
