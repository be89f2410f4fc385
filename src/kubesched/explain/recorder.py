"""``ExplanationRecorder``: keeps, for every pod, why each scheduling attempt
ended as it did (the scheduler's ``DecisionObserver``).

It is also the queue's ``QueueObserver``: every move of a pod between
activeQ, backoffQ, the unschedulable pool and gated, with the event that moved
it, is the pod's queue timeline.

Memory is bounded per pod: the first attempt and the last ``KEEP_ATTEMPTS - 1``
are kept, with the total count, and likewise ``KEEP_MOVES`` queue moves; each
failed attempt is a ``why_pending`` summary, whose size does not depend on the
number of nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from kubesched.api.types import NANOS, Pod
from kubesched.explain.pending import why_pending
from kubesched.explain.preemption import why_preempted
from kubesched.framework.events import UNSCHEDULABLE_TIMEOUT
from kubesched.framework.ports import Clock
from kubesched.framework.preemption import PreemptionOutcome
from kubesched.framework.results import FitError
from kubesched.framework.status import Code, Status
from kubesched.scheduler.queue import QueuedPodInfo
from kubesched.scheduler.queue.events import (
    BACKOFF_COMPLETE,
    FORCE_ACTIVATE_LABEL,
    POP_FROM_BACKOFF_Q,
)
from kubesched.scheduler.queue.metrics import GATED, UNSCHEDULABLE
from kubesched.scheduler.schedule_one import ScheduleResult
from kubesched.scheduler.scheduler import Scheduler

KEEP_ATTEMPTS: Final = 8
"""Attempts kept per pod: the first and the latest ones."""

TIED_SAMPLE: Final = 3
"""Names of tied nodes kept per scheduled attempt."""

KEEP_MOVES: Final = 32
"""Queue moves kept per pod: the first 4 and the latest ones."""

_FIRST_MOVES: Final = 4

_OWN_EVENTS: Final = frozenset(
    {BACKOFF_COMPLETE, POP_FROM_BACKOFF_Q, FORCE_ACTIVATE_LABEL, UNSCHEDULABLE_TIMEOUT.label()}
)
"""Moves no queueing hint decides (the pod's ``queued_by`` is then stale)."""


@dataclass
class PodExplanation:
    """Every attempt of one pod (by uid)."""

    namespace: str
    name: str
    uid: str
    since: float
    """When the recorder first heard of the pod (seconds)."""
    attempts: int = 0
    kept: list[dict[str, Any]] = field(default_factory=list)
    moves: int = 0
    queue: list[dict[str, Any]] = field(default_factory=list)

    def add(self, attempt: dict[str, Any]) -> None:
        self.attempts += 1
        attempt["attempt"] = self.attempts
        if len(self.kept) == KEEP_ATTEMPTS:
            del self.kept[1]  # keep the first attempt
        self.kept.append(attempt)

    def move(self, entry: dict[str, Any]) -> None:
        self.moves += 1
        if len(self.queue) == KEEP_MOVES:
            del self.queue[_FIRST_MOVES]  # keep the first moves
        self.queue.append(entry)

    def to_dict(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "uid": self.uid,
            "attempts": self.attempts,
            "history": list(self.kept),
            "queueMoves": self.moves,
            "queue": list(self.queue),
        }


class ExplanationRecorder:
    """A ``DecisionObserver`` that records an explanation of every attempt.

    ``node_names`` gives the snapshot's node names in order when asked (for
    naming nodes an attempt did not evaluate)."""

    def __init__(self, clock: Clock, node_names: Callable[[], Sequence[str]]) -> None:
        self.clock = clock
        self.node_names = node_names
        self.pods: dict[str, PodExplanation] = {}

    @staticmethod
    def attach(scheduler: Scheduler) -> ExplanationRecorder:
        """A recorder observing ``scheduler``'s decisions and queue moves."""
        rec = ExplanationRecorder(scheduler.clock, lambda: scheduler.cache.table.ordered_names)
        scheduler.observer = rec
        scheduler.queue.metrics.observer = rec.queued
        return rec

    def _entry(self, pod: Pod) -> PodExplanation:
        e = self.pods.get(pod.uid)
        if e is None:
            now = self.clock.now() / NANOS
            e = self.pods[pod.uid] = PodExplanation(pod.namespace, pod.name, pod.uid, now)
        return e

    def queued(self, queue: str, event: str, pinfo: QueuedPodInfo) -> None:
        """A ``QueueObserver``: the pod moved into ``queue`` on ``event``; in the
        pool (unschedulable or gated), the plugins whose events can move it."""
        entry: dict[str, Any] = {"time": self.clock.now() / NANOS, "queue": queue, "event": event}
        if pinfo.queued_by and event not in _OWN_EVENTS:
            entry["hint"] = pinfo.queued_by
        if queue in (UNSCHEDULABLE, GATED):
            entry["waitingFor"] = sorted(pinfo.unschedulable_plugins | pinfo.pending_plugins)
        self._entry(pinfo.pod).move(entry)

    def scheduled(self, pod: Pod, result: ScheduleResult) -> None:
        attempt: dict[str, Any] = {
            "time": self.clock.now() / NANOS,
            "result": "Scheduled",
            "node": result.suggested_host,
            "evaluatedNodes": result.evaluated_nodes,
            "feasibleNodes": result.feasible_nodes,
            "scores": dict(sorted(result.scores.items())),
        }
        rows = result.tied_rows
        if rows is not None and result.names is not None:
            names = result.names
            attempt["tiedNodes"] = len(rows)
            attempt["sampleTiedNodes"] = [names[r] for r in rows[:TIED_SAMPLE].tolist()]
        self._entry(pod).add(attempt)

    def unschedulable(
        self,
        pod: Pod,
        status: Status,
        fit: FitError | None,
        nominated_node: str,
        post_filter: object | None,
    ) -> None:
        attempt: dict[str, Any] = {
            "time": self.clock.now() / NANOS,
            "result": "Unschedulable" if status.is_rejected() else "Error",
            "message": status.message(),
        }
        if status.code != Code.UNSCHEDULABLE and status.is_rejected():
            attempt["code"] = status.code.upstream_name
        if status.plugin:
            attempt["plugin"] = status.plugin
        if fit is not None:
            attempt.update(why_pending(fit, self.node_names()))
        if nominated_node:
            attempt["nominatedNode"] = nominated_node
        if isinstance(post_filter, PreemptionOutcome) and post_filter.candidate_set is not None:
            attempt["preemption"] = why_preempted(post_filter, pod, self.clock.now())
        self._entry(pod).add(attempt)

    # -- reading ---------------------------------------------------------------
    def last_failure(self, uid: str) -> dict[str, Any] | None:
        """The latest kept failed attempt of the pod, if any."""
        e = self.pods.get(uid)
        if e is None:
            return None
        failed = [a for a in e.kept if a["result"] != "Scheduled"]
        return failed[-1] if failed else None

    def result(self) -> list[dict[str, Any]]:
        """Every pod's explanation, by namespace, name and first attempt."""
        items = sorted(self.pods.values(), key=lambda e: (e.namespace, e.name, e.since, e.uid))
        return [e.to_dict() for e in items]
