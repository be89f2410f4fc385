"""The preemption Evaluator: the shared logic of PostFilter preemption plugins.

Upstream: pkg/scheduler/framework/preemption (preemption.go, executor.go).
A preemption plugin supplies the policy through the ``PreemptionPolicy``
protocol (which pods may be victims, how victims are chosen on one node,
who is more important); the Evaluator runs the flow of
/work/shared/spec/upstream-behaviour.md §5:

1. re-read the preemptor; check it may preempt (R5.1);
2. potential nodes = nodes whose filter status is exactly Unschedulable (R5.2);
3. a seeded random offset and a bounded number of candidates (R5.3);
4. a dry run on copies of each node's NodeInfo and the CycleState, with two
   bounded candidate lists and the early stop (R5.4);
5. pick the best candidate (R5.8);
6. act on it: mark and delete the victims, clear lower-priority nominations
   (R5.9), return the nominated node (R5.10).

kubesched visits nodes sequentially (upstream's result with parallelism 1),
lists potential nodes in snapshot order where upstream iterates a Go map, and
breaks the final tie between equally good candidates with the seeded random
source.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from kubesched.api.types import Pod, PodCondition, PodDisruptionBudget, Time
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import Handle
from kubesched.framework.results import (
    Diagnosis,
    FitError,
    NodeToStatus,
    PostFilterResult,
)
from kubesched.framework.status import SUCCESS, Code, Status, error, unresolvable
from kubesched.framework.types import NodeInfo, PodInfo

MAX_INT32_PLUS_1: Final = 2**31
MIN_INT64: Final = -(2**63)

MSG_NO_VICTIMS: Final = "No preemption victims found for incoming pod"
MSG_NOT_HELPFUL: Final = "Preemption is not helpful for scheduling"
MSG_NO_CANDIDATE: Final = "no candidate node for preemption"
MSG_NO_NODES: Final = "no nodes available"
MSG_WAITING: Final = "waiting for the preemption for this pod to be finished"

DISRUPTION_TARGET: Final = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER: Final = "PreemptionByScheduler"


@dataclass(slots=True)
class Victims:
    pods: list[PodInfo]
    num_pdb_violations: int = 0


@dataclass(slots=True)
class Candidate:
    name: str
    victims: Victims


class CandidateList:
    """A list that keeps at most ``capacity`` items; further adds are dropped but
    counted (upstream candidateList with its atomic index)."""

    __slots__ = ("_added", "capacity", "items")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.items: list[Candidate] = []
        self._added = 0

    def add(self, c: Candidate) -> None:
        if self._added < self.capacity:
            self.items.append(c)
        self._added += 1

    def size(self) -> int:
        return min(self._added, self.capacity)


class PreemptionPolicy(Protocol):
    """What a preemption plugin decides (upstream preemption.Interface)."""

    def pod_eligible_to_preempt_others(
        self, pod: PodInfo, nominated_node_status: Status | None
    ) -> tuple[bool, str]: ...

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: PodInfo,
        node: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[PodInfo], int, Status]: ...

    def offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]: ...

    def ordered_score_funcs(
        self, victims: dict[str, Victims]
    ) -> list[Callable[[str], int]] | None: ...


@dataclass(slots=True)
class PreemptionOutcome:
    """What happened in one Preempt call, for explanations and reports."""

    candidates: list[Candidate] = field(default_factory=list)
    chosen: Candidate | None = None
    statuses: NodeToStatus | None = None


class Evaluator:
    """Runs preemption for one plugin (upstream preemption.Evaluator)."""

    def __init__(
        self,
        plugin_name: str,
        handle: Handle,
        policy: PreemptionPolicy,
        *,
        async_preemption: bool = True,
    ) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.policy = policy
        self.async_preemption = async_preemption
        self.preempting: set[str] = set()
        """Preemptor UIDs whose victims are still being deleted (async path)."""
        self.last_victims_pending: dict[str, tuple[str, str, str]] = {}
        self.last: PreemptionOutcome | None = None

    # ------------------------------------------------------------------ entry
    def preempt(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        h = self.handle
        self.last = PreemptionOutcome()
        latest = h.reader.get_pod(pod.pod.namespace, pod.pod.name)
        if latest is None:
            return None, error(f'pod "{pod.pod.name}" not found')
        if latest is not pod.pod:
            pod = PodInfo(latest)
        nnn = pod.pod.nominated_node_name
        ok, msg = self.policy.pod_eligible_to_preempt_others(
            pod, statuses.get(nnn) if nnn else None
        )
        if not ok:
            return None, Status(Code.UNSCHEDULABLE, msg)
        table = h.table
        all_names = table.ordered_names
        if not all_names:
            return None, error(MSG_NO_NODES)
        candidates, node_statuses, errs = self.find_candidates(state, pod, statuses)
        self.last.candidates = candidates
        self.last.statuses = node_statuses
        if errs and not candidates:
            return None, error(go_aggregate(errs))
        if not candidates:
            node_statuses.absent = unresolvable(MSG_NOT_HELPFUL)
            fit = FitError(pod.pod, len(all_names), Diagnosis(node_to_status=node_statuses))
            return PostFilterResult.nominated(""), Status(Code.UNSCHEDULABLE, str(fit))
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.UNSCHEDULABLE, MSG_NO_CANDIDATE)
        self.last.chosen = best
        s = self.prepare_candidate(best, pod)
        if not s.is_success():
            return None, s
        return PostFilterResult.nominated(best.name), SUCCESS

    # ------------------------------------------------------------------ candidates
    def find_candidates(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[list[Candidate], NodeToStatus, list[str]]:
        table = self.handle.table
        potential = statuses.nodes_for_status_code(table.ordered_names, Code.UNSCHEDULABLE)
        if not potential:
            return [], NodeToStatus(), []
        pdbs = list(self.handle.pdbs())
        offset, num = self.policy.offset_and_num_candidates(len(potential))
        infos: list[NodeInfo] = []
        for name in potential:
            info = table.infos[table.row_of[name]]
            assert info is not None
            infos.append(info)
        return self.dry_run_preemption(state, pod, infos, pdbs, offset, num)

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: PodInfo,
        potential: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], NodeToStatus, list[str]]:
        """Visit nodes from ``offset`` (wrapping) on copies; stop once there is a
        non-violating candidate and ``num_candidates`` candidates in all.

        A policy with ``select_victims_on_nodes`` evaluates batches of nodes at
        once (each node's answer is independent of the others, so batching only
        changes how much work runs past the stop point, never the result)."""
        non_violating = CandidateList(num_candidates)
        violating = CandidateList(num_candidates)
        node_statuses = NodeToStatus()
        errs: list[str] = []
        n = len(potential)
        batch = getattr(self.policy, "select_victims_on_nodes", None)
        i = 0
        while i < n:
            size = max(num_candidates - non_violating.size() - violating.size(), 1)
            if batch is not None:
                chunk = [potential[(offset + k) % n] for k in range(i, min(n, i + size))]
                results = batch(state, pod, chunk, pdbs)
                if results is None:
                    batch = None
                    continue
            else:
                node = potential[(offset + i) % n].clone()
                chunk = [node]
                results = [self.policy.select_victims_on_node(state.clone(), pod, node, pdbs)]
            stop = False
            for node, (victims, num_violations, status) in zip(chunk, results, strict=True):
                i += 1
                if status.is_success() and victims:
                    c = Candidate(node.name, Victims(victims, num_violations))
                    (non_violating if num_violations == 0 else violating).add(c)
                    nv, v = non_violating.size(), violating.size()
                    if nv > 0 and nv + v >= num_candidates:
                        stop = True
                        break
                    continue
                if status.is_success():
                    status = error(f'expected at least one victim pod on node "{node.name}"')
                if status.code == Code.ERROR:
                    errs.append(status.message())
                node_statuses.set(node.name, status)
            if stop:
                break
        return non_violating.items + violating.items, node_statuses, errs

    # ------------------------------------------------------------------ choice
    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        victims: dict[str, Victims] = {}
        for c in candidates:
            victims[c.name] = c.victims
        funcs = self.policy.ordered_score_funcs(victims)
        name = pick_one_node_for_preemption(
            victims, funcs, self.handle.clock.now(), self.handle.rng.randrange
        )
        for c in candidates:
            if c.name == name:
                return c
        return candidates[0]

    # ------------------------------------------------------------------ acting
    def prepare_candidate(self, c: Candidate, preemptor: PodInfo) -> Status:
        """Mark and delete the victims, clear lower-priority nominations.

        Sync path (``SchedulerAsyncPreemption`` off): every victim not already
        terminating is preempted, then lower-priority nominations on the node
        are cleared. Async path (default since v1.33): victims already
        terminating are dropped first and, if none remain, nothing happens at
        all (nominations stay); otherwise nominations are cleared, then the
        victims are preempted. kubesched's cluster calls complete at once, so
        the async goroutine's work is done here, before the cycle ends; its
        results reach the scheduler as watch events after the cycle either way.
        """
        h = self.handle
        pods = c.victims.pods
        h.recorder.preemption(
            preemptor.pod, c.name, [p.pod for p in pods], c.victims.num_pdb_violations
        )
        if not self.async_preemption:
            h.metrics.preemption_victims(len(pods))
            first_error: Exception | None = None
            for v in pods:
                if v.pod.deletion_timestamp is None:
                    err = self.preempt_pod(c, preemptor, v)
                    first_error = first_error or err
            if first_error is not None:
                return error(str(first_error))
            self._clear_lower_priority_nominations(preemptor, c.name)
            return SUCCESS
        remaining = [v for v in pods if v.pod.deletion_timestamp is None]
        if not remaining:
            return SUCCESS
        h.metrics.preemption_victims(len(pods))
        uid = preemptor.pod.uid
        self.preempting.add(uid)
        failed = False
        try:
            failed = not self._clear_lower_priority_nominations(preemptor, c.name)
            victim_failed = False
            for v in remaining[:-1]:
                victim_failed |= self.preempt_pod(c, preemptor, v) is not None
            if victim_failed:
                failed = True
            else:
                last = remaining[-1]
                self.last_victims_pending[uid] = (last.pod.namespace, last.pod.name, last.pod.uid)
                failed |= self.preempt_pod(c, preemptor, last) is not None
        finally:
            self.preempting.discard(uid)
            self.last_victims_pending.pop(uid, None)
        if failed:
            h.activate([preemptor.pod])
        return SUCCESS

    def preempt_pod(self, c: Candidate, preemptor: PodInfo, victim: PodInfo) -> Exception | None:
        """DisruptionTarget condition, DELETE, and the ``Preempted`` event (R5.9.3).
        Returns the API error, if any (a victim already gone is success)."""
        h = self.handle
        pod = victim.pod
        current = h.reader.get_pod(pod.namespace, pod.name)
        if current is None or current.uid != pod.uid:
            return None  # the victim is gone: success, no event
        cond = PodCondition(
            DISRUPTION_TARGET,
            "True",
            REASON_PREEMPTION_BY_SCHEDULER,
            f"{preemptor.pod.spec.scheduler_name}: preempting to accommodate a higher priority pod",
            h.clock.now(),
        )
        try:
            if not _has_condition(current, cond):
                h.writer.patch_pod_status(current, condition=cond)
            h.writer.delete_pod(current)
        except Exception as err:  # an API error: reported, the rest goes on
            return err
        h.recorder.event(
            pod,
            "Normal",
            "Preempted",
            "Preempting",
            f"Preempted by pod {preemptor.pod.uid} on node {c.name}",
            related=preemptor.pod,
        )
        return None

    def _clear_lower_priority_nominations(self, preemptor: PodInfo, node_name: str) -> bool:
        """Clear ``nominatedNodeName`` of lower-priority pods nominated to the node;
        False if an API call failed (not fatal)."""
        h = self.handle
        prio = preemptor.pod.priority
        ok = True
        for pi in h.nominator.nominated_pods_for_node(node_name):
            if pi.pod.priority >= prio:
                continue
            current = h.reader.get_pod(pi.pod.namespace, pi.pod.name)
            if current is None or not current.nominated_node_name:
                continue
            try:
                h.writer.patch_pod_status(current, nominated_node_name="")
            except Exception:
                ok = False
        return ok

    def is_pod_running_preemption(self, uid: str) -> bool:
        """True while the async preemption of this preemptor is in flight (R5.9.5)."""
        if uid not in self.preempting:
            return False
        last = self.last_victims_pending.get(uid)
        if last is None:
            return True
        ns, name, vuid = last
        victim = self.handle.reader.get_pod(ns, name)
        return victim is not None and victim.uid == vuid and victim.deletion_timestamp is None


def go_aggregate(messages: Sequence[str]) -> str:
    """Go's ``utilerrors.NewAggregate(errs).Error()``: duplicates dropped, one message
    as is, several as ``[a, b]``."""
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def _has_condition(pod: Pod, cond: PodCondition) -> bool:
    """The pod already carries this condition (UpdatePodCondition would change nothing)."""
    cur = pod.condition(cond.type)
    return (
        cur is not None
        and cur.status == cond.status
        and cur.reason == cond.reason
        and cur.message == cond.message
    )


# --------------------------------------------------------------------------- picking


def pod_start_time(pod: PodInfo, now: Time) -> Time:
    """``status.startTime``, or now when unset (upstream GetPodStartTime)."""
    t = pod.pod.start_time
    return now if t is None else t


def earliest_start_time(victims: Victims, now: Time) -> Time | None:
    """Earliest start time among the victims of the highest priority
    (upstream GetEarliestPodStartTime)."""
    pods = victims.pods
    if not pods:
        return None
    earliest = pod_start_time(pods[0], now)
    max_prio = pods[0].pod.priority
    for p in pods:
        prio = p.pod.priority
        if prio == max_prio:
            t = pod_start_time(p, now)
            earliest = min(earliest, t)
        elif prio > max_prio:
            max_prio = prio
            earliest = pod_start_time(p, now)
    return earliest


def default_score_funcs(victims: dict[str, Victims], now: Time) -> list[Callable[[str], int]]:
    """The five criteria of pickOneNodeForPreemption, as score functions (higher wins)."""

    def min_pdb_violations(node: str) -> int:
        return -victims[node].num_pdb_violations

    def min_highest_priority(node: str) -> int:
        return -victims[node].pods[0].pod.priority

    def min_sum_priorities(node: str) -> int:
        return -sum(p.pod.priority + MAX_INT32_PLUS_1 for p in victims[node].pods)

    def min_num_pods(node: str) -> int:
        return -len(victims[node].pods)

    def latest_start_time(node: str) -> int:
        t = earliest_start_time(victims[node], now)
        return MIN_INT64 if t is None else t

    return [
        min_pdb_violations,
        min_highest_priority,
        min_sum_priorities,
        min_num_pods,
        latest_start_time,
    ]


def pick_one_node_for_preemption(
    victims: dict[str, Victims],
    score_funcs: list[Callable[[str], int]] | None,
    now: Time,
    randrange: Callable[[int], int],
) -> str:
    """Narrow the candidates criterion by criterion; a final tie is broken by
    ``randrange`` (upstream returns the first of a Go map's random order)."""
    if not victims:
        return ""
    candidates = list(victims)
    funcs = score_funcs if score_funcs is not None else default_score_funcs(victims, now)
    for f in funcs:
        best = MIN_INT64
        selected: list[str] = []
        for node in candidates:
            score = f(node)
            if score > best:
                best = score
                selected = []
            if score == best:
                selected.append(node)
        if len(selected) == 1:
            return selected[0]
        candidates = selected
    if len(candidates) == 1:
        return candidates[0]
    return candidates[randrange(len(candidates))]
