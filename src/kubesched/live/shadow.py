"""Shadow mode (``kubesched run --shadow``): decide every pod of a cluster as
kubesched would, write nothing, and compare with what the cluster's own
scheduler did.

``ShadowWriter`` stands in for the API calls: binding, status patches,
deletions and events only happen in kubesched's memory (the scheduler assumes
the pod on its node; the real binding then moves it wherever the cluster's
scheduler put it). ``ShadowReport`` is told each decision (the scheduler's
``DecisionObserver``) and watches the pods; when a pod kubesched decided is
bound by the cluster's scheduler, it records one verdict:

- ``agree``: the same node;
- ``tie``: another node kubesched scored exactly as high (upstream breaks ties
  at random, so either pick is upstream's behaviour);
- ``disagree``: any other node, or kubesched found no node for the pod;
- ``undecided``: bound before kubesched's cycle reached it.

Each verdict is one JSON line (``out``) with both sides: the node the cluster
chose, and kubesched's node, tied nodes, per-plugin scores of its node or its
FailedScheduling message. Counts are ``kubesched_shadow_decisions_total{verdict}``
on ``/metrics``.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim
from kubesched.api.types import Node, Pod, PodCondition, Time
from kubesched.framework.results import FitError
from kubesched.framework.status import Status
from kubesched.scheduler.schedule_one import ScheduleResult

VERDICTS = ("agree", "tie", "disagree", "undecided")


class ShadowWriter:
    """``ClusterWriter`` and ``EventRecorder`` that write nothing."""

    def bind(self, pod: Pod, node_name: str) -> None:
        """Nothing: the cluster's own scheduler binds."""

    def patch_pod_status(
        self,
        pod: Pod,
        *,
        condition: PodCondition | None = None,
        nominated_node_name: str | None = None,
    ) -> None:
        """Nothing."""

    def delete_pod(self, pod: Pod) -> None:
        """Nothing: a shadow never preempts."""

    def update_pv(self, pv: PersistentVolume) -> None:
        """Nothing."""

    def update_pvc(self, pvc: PersistentVolumeClaim) -> None:
        """Nothing."""

    def event(
        self,
        regarding: Pod,
        type_: str,
        reason: str,
        action: str,
        message: str,
        related: Pod | None = None,
    ) -> None:
        """Nothing."""

    def preemption(
        self, preemptor: Pod, node: str, victims: Sequence[Pod], num_pdb_violations: int
    ) -> None:
        """Nothing."""


@dataclass(frozen=True, slots=True)
class Decision:
    node: str
    """kubesched's node ("" when it found none)."""
    ties: tuple[str, ...] = ()
    scores: dict[str, int] = field(default_factory=dict)
    message: str = ""


class ShadowReport(Collector):
    """Verdicts (see the module docstring): a ``DecisionObserver``, a pod
    ``Watcher`` and a prometheus-client collector."""

    def __init__(self, out: TextIO, clock: Callable[[], Time]) -> None:
        self.out = out
        self.clock = clock
        self.decisions: dict[str, Decision] = {}
        self.counts: Counter[str] = Counter(dict.fromkeys(VERDICTS, 0))
        self._lock = threading.Lock()

    # -- DecisionObserver -------------------------------------------------------
    def scheduled(self, pod: Pod, result: ScheduleResult) -> None:
        self.decisions[pod.uid] = Decision(result.suggested_host, result.ties, result.scores)

    def unschedulable(
        self,
        pod: Pod,
        status: Status,
        fit: FitError | None,
        nominated_node: str,
        post_filter: object | None,
    ) -> None:
        self.decisions[pod.uid] = Decision("", message=status.message())

    # -- Watcher ---------------------------------------------------------------
    def on_pod_update(self, old: Pod, new: Pod) -> None:
        if not old.node_name and new.node_name:
            self._verdict(new)

    def on_pod_delete(self, pod: Pod) -> None:
        self.decisions.pop(pod.uid, None)

    def on_pod_add(self, pod: Pod) -> None:
        """Nothing: a pod created bound was never scheduled."""

    def on_node_add(self, node: Node) -> None:
        """Nothing."""

    def on_node_update(self, old: Node, new: Node) -> None:
        """Nothing."""

    def on_node_delete(self, node: Node) -> None:
        """Nothing."""

    def _verdict(self, pod: Pod) -> None:
        d = self.decisions.pop(pod.uid, None)
        if d is None:
            verdict = "undecided"
        elif d.node == pod.node_name:
            verdict = "agree"
        elif pod.node_name in d.ties:
            verdict = "tie"
        else:
            verdict = "disagree"
        with self._lock:
            self.counts[verdict] += 1
        line: dict[str, object] = {
            "time": self.clock() / 1e9,
            "pod": pod.key,
            "uid": pod.uid,
            "verdict": verdict,
            "cluster": {"node": pod.node_name},
        }
        if d is not None:
            line["kubesched"] = {
                "node": d.node or None,
                "ties": list(d.ties),
                "scores": d.scores,
                "message": d.message or None,
            }
        self.out.write(json.dumps(line, ensure_ascii=False) + "\n")
        self.out.flush()

    # -- Collector -------------------------------------------------------------
    def collect(self) -> Iterable[Metric]:
        family = CounterMetricFamily(
            "kubesched_shadow_decisions",
            "Pods the cluster's scheduler bound, by kubesched's verdict on its choice.",
            labels=["verdict"],
        )
        with self._lock:
            counts = dict(self.counts)
        for verdict in VERDICTS:
            family.add_metric([verdict], counts[verdict])
        yield family
