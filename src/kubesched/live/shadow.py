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

A pod kubesched would have preempted for counts its nominated node as its
choice. Each verdict is one JSON line (``out``) with both sides: the node the
cluster chose, and kubesched's node, tied nodes, per-plugin scores of its node
or its FailedScheduling message. Counts are
``kubesched_shadow_decisions_total{verdict}`` on ``/metrics``.

Preemptions: when kubesched or the cluster preempted for the pod, the line
also has ``preemption``: kubesched's nominated node and victims, and the
cluster's nominated node (``status.nominatedNodeName`` as its scheduler set
it) and the pods on that node that received the ``DisruptionTarget``
condition with reason ``PreemptionByScheduler`` between the pod's creation
and its binding (the API does not name a victim's preemptor except in the
``Preempted`` event, so two preemptors on one node at once share the list).
Its ``verdict`` is ``agree`` (same node, same victims) or ``disagree``;
counts are ``kubesched_shadow_preemptions_total{verdict}``.
"""

from __future__ import annotations

import json
import threading
from collections import Counter, deque
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
PREEMPTION_VERDICTS = ("agree", "disagree")
EVICTIONS_KEPT = 256
"""Preemption victims remembered per node (the latest)."""


class ShadowWriter:
    """``ClusterWriter`` and ``EventRecorder`` that write nothing; the preemptions
    kubesched would make go to ``on_preemption`` (preemptor, node, victims)."""

    def __init__(self, on_preemption: Callable[[Pod, str, Sequence[Pod]], None] | None = None):
        self.on_preemption = on_preemption

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
        """Tell ``on_preemption``; nothing is written."""
        if self.on_preemption is not None:
            self.on_preemption(preemptor, node, victims)


@dataclass(frozen=True, slots=True)
class Decision:
    node: str
    """kubesched's node ("" when it found none)."""
    ties: tuple[str, ...] = ()
    scores: dict[str, int] = field(default_factory=dict)
    message: str = ""


@dataclass(frozen=True, slots=True)
class Preemption:
    node: str
    victims: tuple[str, ...]
    """namespace/name, sorted."""


class ShadowReport(Collector):
    """Verdicts (see the module docstring): a ``DecisionObserver``, a pod
    ``Watcher``, the ``ShadowWriter``'s ``on_preemption`` and a prometheus-client
    collector."""

    def __init__(self, out: TextIO, clock: Callable[[], Time]) -> None:
        self.out = out
        self.clock = clock
        self.decisions: dict[str, Decision] = {}
        self.preemptions: dict[str, Preemption] = {}
        """kubesched's latest preemption per pod uid."""
        self.nominations: dict[str, str] = {}
        """The cluster's nominated node per pod uid."""
        self.evicted: dict[str, deque[tuple[Time, str]]] = {}
        """Per node: (when, namespace/name) of the cluster's preemption victims."""
        self.counts: Counter[str] = Counter(dict.fromkeys(VERDICTS, 0))
        self.preemption_counts: Counter[str] = Counter(dict.fromkeys(PREEMPTION_VERDICTS, 0))
        self._lock = threading.Lock()

    def preempted(self, preemptor: Pod, node: str, victims: Sequence[Pod]) -> None:
        self.preemptions[preemptor.uid] = Preemption(node, tuple(sorted(v.key for v in victims)))

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
        if new.nominated_node_name and new.nominated_node_name != old.nominated_node_name:
            self.nominations[new.uid] = new.nominated_node_name
        if new.node_name and new.preemption_condition() and not old.preemption_condition():
            kept = self.evicted.setdefault(new.node_name, deque(maxlen=EVICTIONS_KEPT))
            kept.append((self.clock(), new.key))
        if not old.node_name and new.node_name:
            self._verdict(new)

    def on_pod_delete(self, pod: Pod) -> None:
        self.decisions.pop(pod.uid, None)
        self.preemptions.pop(pod.uid, None)
        self.nominations.pop(pod.uid, None)

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
        p = self.preemptions.pop(pod.uid, None)
        nominated = self.nominations.pop(pod.uid, None)
        mine = (d.node if d is not None else "") or (p.node if p is not None else "")
        if d is None and p is None:
            verdict = "undecided"
        elif mine == pod.node_name:
            verdict = "agree"
        elif d is not None and pod.node_name in d.ties:
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
        if d is not None or p is not None:
            line["kubesched"] = {
                "node": mine or None,
                "ties": list(d.ties) if d is not None else [],
                "scores": d.scores if d is not None else {},
                "message": (d.message if d is not None else "") or None,
            }
        if p is not None or nominated is not None:
            line["preemption"] = self._preemption(pod, p, nominated)
        self.out.write(json.dumps(line, ensure_ascii=False) + "\n")
        self.out.flush()

    def _preemption(
        self, pod: Pod, p: Preemption | None, nominated: str | None
    ) -> dict[str, object]:
        victims = sorted(
            {
                key
                for at, key in self.evicted.get(nominated or "", ())
                if at >= pod.creation_timestamp
            }
        )
        same = p is not None and p.node == nominated and list(p.victims) == victims
        verdict = "agree" if same else "disagree"
        with self._lock:
            self.preemption_counts[verdict] += 1
        return {
            "verdict": verdict,
            "kubesched": None if p is None else {"node": p.node, "victims": list(p.victims)},
            "cluster": None if nominated is None else {"node": nominated, "victims": victims},
        }

    # -- Collector -------------------------------------------------------------
    def collect(self) -> Iterable[Metric]:
        yield self._family(
            "kubesched_shadow_decisions",
            "Pods the cluster's scheduler bound, by kubesched's verdict on its choice.",
            self.counts,
        )
        yield self._family(
            "kubesched_shadow_preemptions",
            "Pods kubesched or the cluster's scheduler preempted for, by kubesched's verdict.",
            self.preemption_counts,
        )

    def _family(self, name: str, doc: str, counts: Counter[str]) -> Metric:
        """The counter family ``name``: a sample per verdict, read under the lock (every
        verdict in its order: the counters start with all of them at 0)."""
        family = CounterMetricFamily(name, doc, labels=["verdict"])
        with self._lock:
            for verdict, n in counts.items():
                family.add_metric([verdict], n)
        return family
