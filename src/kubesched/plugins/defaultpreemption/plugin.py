"""DefaultPreemption: the PostFilter plugin that preempts lower-priority pods.

Upstream defaultpreemption/default_preemption.go; the flow is
``framework.preemption.Evaluator``, this plugin is the default policy (R5.1,
R5.3, R5.5, R5.6):

- ``preemptionPolicy: Never`` never preempts; a pod whose nominated node still
  holds a victim terminating by preemption waits (unless that node became
  UnschedulableAndUnresolvable);
- victims: strictly lower priority, most important first (``victim_order``);
- on one node: remove every potential victim, check the fit (with nominated
  pods), reprieve PDB-violating ones first, each group most important first;
- ``min_candidate_nodes_percentage`` / ``_absolute`` bound the candidates, the
  offset comes from the seeded random source.

``PreEnqueue`` holds a preemptor while its asynchronous preemption is in flight
(live mode).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, final

from kubesched.api.selectors import label_selector_matches, label_selector_parse_error
from kubesched.api.types import PREEMPT_NEVER, Pod, PodDisruptionBudget
from kubesched.framework.config import DefaultPreemptionArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventObject,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import Handle
from kubesched.framework.preemption import (
    MSG_NO_VICTIMS,
    MSG_WAITING,
    Evaluator,
    VictimOrder,
    Victims,
)
from kubesched.framework.results import NodeToStatus, PostFilterResult
from kubesched.framework.status import SUCCESS, Code, Status, error, unresolvable
from kubesched.framework.types import NodeInfo, PodInfo

NAME: Final = "DefaultPreemption"

MSG_POLICY_NEVER: Final = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING: Final = "not eligible due to a terminating pod on the nominated node."


def pod_terminating_by_preemption(pod: Pod) -> bool:
    """Being deleted, and the first DisruptionTarget condition says the scheduler
    preempted it (R5.1.3)."""
    c = pod.preemption_condition()
    return pod.deletion_timestamp is not None and c is not None and c.status == "True"


class DefaultPreemption:
    name = NAME

    def __init__(
        self,
        args: DefaultPreemptionArgs | None,
        handle: Handle,
        *,
        async_preemption: bool = True,
    ) -> None:
        self.args = args if args is not None else DefaultPreemptionArgs()
        self.handle = handle
        self.evaluator = Evaluator(NAME, handle, self, async_preemption=async_preemption)

    # ------------------------------------------------------------------ PostFilter
    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        """Preempt; every non-empty message gets the ``preemption: `` prefix."""
        try:
            result, status = self.evaluator.preempt(state, pod, statuses)
        finally:
            self.handle.metrics.preemption_attempt()
        msg = status.message()
        if msg:
            return result, Status(status.code, "preemption: " + msg)
        return result, status

    # ------------------------------------------------------------------ PreEnqueue
    def pre_enqueue(self, pod: Pod) -> Status:
        if self.evaluator.is_pod_running_preemption(pod.uid):
            return unresolvable(MSG_WAITING)
        return SUCCESS

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """AssignedPod/Delete with a hint that always skips: other plugins do the
        requeueing; this only lets the PreEnqueue gate be re-evaluated."""

        def skip(pod: Pod, old: EventObject, new: EventObject) -> QueueingHint:
            return QueueingHint.SKIP

        return [
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE), skip)
        ]

    # ------------------------------------------------------------------ policy
    def pod_eligible_to_preempt_others(
        self, pod: PodInfo, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        p = pod.pod
        if p.preemption_policy == PREEMPT_NEVER:
            return False, MSG_POLICY_NEVER
        nnn = p.nominated_node_name
        if nnn:
            if (
                nominated_node_status is not None
                and nominated_node_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            ):
                return True, ""
            table = self.handle.table
            row = table.row_of.get(nnn)
            info = table.infos[row] if row is not None else None
            if info is not None:
                order = self.victim_order()
                for q in info.pods:
                    if order.allows(info, q, pod) and pod_terminating_by_preemption(q.pod):
                        return False, MSG_TERMINATING
        return True, ""

    def victim_order(self) -> VictimOrder:
        """Who may be a victim and in which order (upstream ``IsEligiblePod`` /
        ``MoreImportantPod``, as data both dry-run paths follow): the defaults."""
        return DEFAULT_VICTIM_ORDER

    def offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return self.handle.rng.randrange(num_nodes), self.calculate_num_candidates(num_nodes)

    def calculate_num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        n = max(n, self.args.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    @final
    def ordered_score_funcs(self, victims: dict[str, Victims]) -> list[Callable[[str], int]] | None:
        """The order's ``ordered_score_funcs`` (None: the default criteria)."""
        funcs = self.victim_order().ordered_score_funcs
        return None if funcs is None else funcs(victims)

    @final
    def select_victims_on_node(
        self,
        state: CycleState,
        pod: PodInfo,
        node: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[PodInfo], int, Status]:
        """Victims on this node copy (R5.6); ``node`` and ``state`` are mutated.
        Final: the batched dry run reproduces exactly this (``victim_order``)."""
        h = self.handle
        order = self.victim_order()

        def remove(victim: PodInfo) -> Status:
            node.remove_pod(victim.pod)
            return h.run_pre_filter_extension_remove_pod(state, pod, victim, node)

        def add(victim: PodInfo) -> Status:
            node.add_pod(victim)
            return h.run_pre_filter_extension_add_pod(state, pod, victim, node)

        potential = [q for q in node.pods if order.allows(node, q, pod)]
        for q in potential:
            s = remove(q)
            if not s.is_success():
                return [], 0, error(s.message())
        if not potential:
            return [], 0, unresolvable(MSG_NO_VICTIMS)
        s = h.run_filter_plugins_with_nominated_pods(state, pod, node)
        if not s.is_success():
            return [], 0, s
        key = order.sort_key(h.clock.now())
        potential.sort(key=key)
        violating, non_violating = order.pdb_split(potential, pdbs)
        victims: list[PodInfo] = []
        num_violating = 0

        def reprieve(q: PodInfo) -> bool | Status:
            s = add(q)
            if not s.is_success():
                return error(s.message())
            fits = h.run_filter_plugins_with_nominated_pods(state, pod, node).is_success()
            if not fits:
                s = remove(q)
                if not s.is_success():
                    return error(s.message())
                victims.append(q)
            return fits

        for q in violating:
            r = reprieve(q)
            if isinstance(r, Status):
                return [], 0, r
            if not r:
                num_violating += 1
        for q in non_violating:
            r = reprieve(q)
            if isinstance(r, Status):
                return [], 0, r
        if violating and non_violating:
            victims.sort(key=key)
        return victims, num_violating, SUCCESS


def filter_pods_with_pdb_violation(
    pods: Sequence[PodInfo], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Split pods (in order) into (violating, non-violating) with budgets shared
    along the list (R5.6.5): each matching PDB not listing the pod in
    ``disruptedPods`` is decremented; below zero the pod is violating."""
    allowed = [pdb.status.disruptions_allowed for pdb in pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for pi in pods:
        pod = pi.pod
        violated = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if pdb.namespace != pod.namespace:
                    continue
                sel = pdb.selector
                if sel is None or sel.is_empty() or label_selector_parse_error(sel) is not None:
                    continue
                if not label_selector_matches(sel, pod.labels):
                    continue
                if pod.name in pdb.status.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pi)
    return violating, non_violating


DEFAULT_VICTIM_ORDER: Final = VictimOrder(pdb_split=filter_pods_with_pdb_violation)
"""Upstream's defaults: every pod of lower priority, by priority then start time,
the five default criteria."""
