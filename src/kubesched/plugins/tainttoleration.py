"""TaintToleration: nodes with untolerated NoSchedule/NoExecute taints are
infeasible; untolerated PreferNoSchedule taints lower the score (upstream
tainttoleration/taint_toleration.go, v1.36).

- Filter: the first taint with effect NoSchedule or NoExecute that no
  toleration tolerates rejects the node, UnschedulableAndUnresolvable
  ``"node(s) had untolerated taint(s)"``. (Since v1.35, and v1.34.2 by
  cherry-pick, the reason no longer names the taint; earlier releases said
  ``"node(s) had untolerated taint {key: value}"``.)
- PreScore: stores the tolerations with an empty or PreferNoSchedule effect;
  never skips.
- Score: the number of PreferNoSchedule taints none of those tolerations
  tolerates; NormalizeScore: ``DefaultNormalizeScore(100, reverse=True)``, so
  the node with the most intolerable taints gets 0 and nodes with none get 100.

Vector paths evaluate each distinct taint set of the table once per pod spec
(cached) and index the per-node taint-set ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from kubesched.api.taints import (
    count_intolerable_prefer_no_schedule,
    do_not_schedule_taint,
    find_matching_untolerated_taint,
    prefer_no_schedule_tolerations,
)
from kubesched.api.types import Node, Pod, PodSpec, Toleration
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
from kubesched.framework.interfaces import Handle, NodeSet, Verdicts
from kubesched.framework.nodematch import SpecCache
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.results import MAX_NODE_SCORE, NodeScore
from kubesched.framework.scoring import default_normalize_score
from kubesched.framework.status import SUCCESS, Status, error, unresolvable
from kubesched.framework.types import NodeInfo, PodInfo

NAME: Final = "TaintToleration"
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME
ERR_REASON_UNTOLERATED: Final = "node(s) had untolerated taint(s)"
"""Filter reason (v1.35+); code UnschedulableAndUnresolvable."""
ERR_REASON_NOT_MATCH: Final = "node(s) had taints that the pod didn't tolerate"
"""Upstream's exported ErrReasonNotMatch (used by the kubelet, not by Filter)."""

_UNTOLERATED: Final = unresolvable(ERR_REASON_UNTOLERATED)
_MEMO_PRE_SCORE: Final = object()
"""Key of the PreScore state in ``SpecFacts.memo`` (it depends on the spec only)."""


@dataclass(frozen=True, slots=True)
class PreScoreState:
    """Tolerations with effect "" or PreferNoSchedule (immutable: clone is itself)."""

    tolerations_prefer_no_schedule: tuple[Toleration, ...]

    def clone(self) -> PreScoreState:
        return self


class TaintToleration:
    """Filter, PreScore and Score plugin; takes no args."""

    name = NAME
    static_filter = True
    """The answer depends on the node and the pod spec only, never on the node's pods."""
    spec_determined_filter = True
    """Nor on anything else (framework.interfaces.SpecDeterminedFilterPlugin)."""

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args
        self._handle = handle
        # spec -> the (read-only) verdicts over all rows
        self._filter_cache: SpecCache[Verdicts] = SpecCache()
        # spec -> (intolerable PreferNoSchedule count per taint-set id, any > 0)
        self._score_cache: SpecCache[tuple[IntArray, bool]] = SpecCache()

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

    def filter_vector(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts:
        spec = pod.pod.spec
        v = self._filter_cache.get(spec, table)
        if v is None:
            tol = spec.tolerations
            # One answer per distinct taint set, spread to the rows by taint-set id.
            by_set = np.array(
                [
                    find_matching_untolerated_taint(ts, tol, do_not_schedule_taint) is not None
                    for ts in table.taint_sets
                ],
                dtype=np.bool_,
            )
            if by_set.any():
                v = Verdicts.from_mask(by_set[table.taint_set], _UNTOLERATED)
            else:
                v = Verdicts.all_pass(table.capacity)
            v.index.setflags(write=False)
            self._filter_cache.put(spec, table, v)
        return v

    # ------------------------------------------------------------------ Score
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Status:
        """Always Success: writes ``PRE_SCORE_STATE_KEY``."""
        memo = pod.facts.memo
        ps = memo.get(_MEMO_PRE_SCORE)
        if not isinstance(ps, PreScoreState):
            ps = PreScoreState(prefer_no_schedule_tolerations(pod.pod.spec.tolerations))
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

    def score_slots(self, state: CycleState, pod: PodInfo, table: NodeTable) -> IntArray | None:
        """All 100 when no node has a PreferNoSchedule taint the pod does not
        tolerate (normalisation then cannot depend on the scored nodes); else None."""
        s = _pre_score_state(state)
        if isinstance(s, Status):
            return None
        _, any_intolerable = self._score_counts(pod.pod.spec, table, s)
        if any_intolerable:
            return None
        return _full_scores(table.capacity)

    def _score_counts(
        self, spec: PodSpec, table: NodeTable, s: PreScoreState
    ) -> tuple[IntArray, bool]:
        cached = self._score_cache.get(spec, table)
        if cached is None:
            tol = s.tolerations_prefer_no_schedule
            counts = np.array(
                [count_intolerable_prefer_no_schedule(ts, tol) for ts in table.taint_sets],
                dtype=np.int64,
            )
            cached = self._score_cache.put(spec, table, (counts, bool(counts.any())))
        return cached

    def score_vector(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> IntArray | None:
        s = _pre_score_state(state)
        if isinstance(s, Status):
            return None  # the exact path reports the error
        table = nodes.table
        by_set, any_intolerable = self._score_counts(pod.pod.spec, table, s)
        if not any_intolerable:
            # No node has a PreferNoSchedule taint the pod does not tolerate.
            return np.full(len(nodes.rows), MAX_NODE_SCORE, dtype=np.int64)
        ids = table.taint_set[nodes.rows]
        # Normalise per distinct taint set, not per node: counts are >= 0, so Go's
        # truncating division is numpy's floor division here.
        max_count = 0
        if by_set.any() and len(ids):
            present = np.bincount(ids, minlength=len(by_set)) > 0
            max_count = int(by_set[present].max())
        if max_count == 0:
            return np.full(len(ids), MAX_NODE_SCORE, dtype=np.int64)
        normalized = MAX_NODE_SCORE - (MAX_NODE_SCORE * by_set) // max_count
        return normalized[ids]


_FULL: list[IntArray] = [np.full(0, MAX_NODE_SCORE, dtype=np.int64)]


def _full_scores(n: int) -> IntArray:
    """A shared read-only array of ``n`` times MAX_NODE_SCORE (the same object for
    the same ``n``, as ``score_slots`` requires)."""
    full = _FULL[0]
    if len(full) != n:
        full = np.full(n, MAX_NODE_SCORE, dtype=np.int64)
        full.setflags(write=False)
        _FULL[0] = full
    return full


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
