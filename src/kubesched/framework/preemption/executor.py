"""Acting on the chosen candidate (upstream pkg/scheduler/framework/preemption/executor.go).

``Executor.prepare_candidate`` marks and deletes the victims and clears
lower-priority nominations on the node (R5.9), synchronously or — with
``SchedulerAsyncPreemption`` — remembering the preemptors whose victims are
still going (``is_pod_running_preemption``, read by DefaultPreemption's
PreEnqueue). The Evaluator is an Executor, as upstream's embeds one.
"""

from __future__ import annotations

from kubesched.api.types import (
    DISRUPTION_TARGET,
    REASON_PREEMPTION_BY_SCHEDULER,
    Pod,
    PodCondition,
)
from kubesched.framework.interfaces import Handle
from kubesched.framework.ports import NotFound
from kubesched.framework.preemption.candidates import Candidate
from kubesched.framework.status import SUCCESS, Status, error
from kubesched.framework.types import PodInfo


class Executor:
    """Preempts the victims of a candidate (upstream preemption.Executor)."""

    def __init__(self, handle: Handle, *, async_preemption: bool = True) -> None:
        self.handle = handle
        self.async_preemption = async_preemption
        self.preempting: set[str] = set()
        """Preemptor UIDs whose victims are still being deleted (async path)."""
        self.last_victims_pending: dict[str, tuple[str, str, str]] = {}

    def prepare_candidate(self, c: Candidate, preemptor: PodInfo) -> Status:
        """Sync (``SchedulerAsyncPreemption`` off): preempt every victim not already
        terminating, then clear lower-priority nominations on the node. Async
        (default): drop terminating victims; none left: nothing happens; else
        clear nominations, then preempt, in upstream's goroutine
        (``handle.run_async``: the simulator runs it at once, live mode on another
        thread, the preemptor staying in ``preempting`` until it is done). Its
        results arrive as watch events either way."""
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
        lower = self._lower_priority_nominated(preemptor, c.name)

        def work() -> Status:  # upstream's goroutine
            failed = not self._clear_nominations(lower)
            victim_failed = False
            for v in remaining[:-1]:
                victim_failed |= self.preempt_pod(c, preemptor, v) is not None
            if victim_failed:
                failed = True
            else:
                last = remaining[-1]
                self.last_victims_pending[uid] = (last.pod.namespace, last.pod.name, last.pod.uid)
                failed |= self.preempt_pod(c, preemptor, last) is not None
            return error("preemption failed") if failed else SUCCESS

        def done(s: Status) -> None:
            self.preempting.discard(uid)
            self.last_victims_pending.pop(uid, None)
            if not s.is_success():
                h.activate([preemptor.pod])

        h.run_async(work, done)
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
        except NotFound:
            return None  # gone meanwhile (a live cluster): success, no event
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
        return self._clear_nominations(self._lower_priority_nominated(preemptor, node_name))

    def _lower_priority_nominated(self, preemptor: PodInfo, node_name: str) -> list[Pod]:
        """The pods of lower priority than the preemptor nominated to the node
        (read on the scheduling thread: the nominator is its state)."""
        prio = preemptor.pod.priority
        return [
            pi.pod
            for pi in self.handle.nominator.nominated_pods_for_node(node_name)
            if pi.pod.priority < prio
        ]

    def _clear_nominations(self, pods: list[Pod]) -> bool:
        """Clear the pods' ``nominatedNodeName`` (those the cluster still has
        nominated); False if an API call failed."""
        h = self.handle
        ok = True
        for pod in pods:
            current = h.reader.get_pod(pod.namespace, pod.name)
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


def _has_condition(pod: Pod, cond: PodCondition) -> bool:
    """The pod already carries this condition (UpdatePodCondition would change nothing)."""
    cur = pod.condition(cond.type)
    return (
        cur is not None
        and cur.status == cond.status
        and cur.reason == cond.reason
        and cur.message == cond.message
    )
