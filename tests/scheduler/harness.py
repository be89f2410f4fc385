"""Shared wiring for the runtime, algorithm and scheduler tests.

- fake ports (clock, reader, recording writer and recorder) and a fake
  nominator holding PodInfos per node;
- ``profile(...)``: a ``Profile`` from plugin names per extension point;
- ``build_framework(...)``: a ``Framework`` over a table with those fakes;
- the in-tree default profile (``default_config`` restricted to the plugins
  kubesched implements), optionally without Score plugins;
- small fake plugins shaped like upstream's ``framework/runtime/testing``
  fakes (TrueFilter, MatchFilter, FakeFilter, FakePreFilter, EqualPrioritizer),
  with a vector form where a test needs the vectorised runner.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

import numpy as np

from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim
from kubesched.api.types import Namespace, Pod, PodCondition, PodDisruptionBudget, Time
from kubesched.framework.config import (
    FILTER,
    PRE_FILTER,
    PRE_SCORE,
    SCORE,
    PluginArgs,
    PluginRef,
    Profile,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeSet, Nominator, Plugin, Verdicts
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.nominated import nominated_load
from kubesched.framework.ports import ClusterWriter
from kubesched.framework.results import FitError, PreFilterResult
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.framework import Framework, PluginFactory, Services
from kubesched.scheduler.algorithm import Algorithm
from kubesched.scheduler.cache import Cache
from kubesched.scheduler.config import default_config
from kubesched.scheduler.metrics import Metrics
from kubesched.scheduler.registry import in_tree_registry
from tests.storage_fakes import FakeStorage

# --------------------------------------------------------------------------- ports


class FakeClock:
    def __init__(self, t: Time = 0) -> None:
        self.t = t

    def now(self) -> Time:
        return self.t


class FakeReader:
    """A ClusterReader over a dict of pods keyed ``namespace/name``."""

    def __init__(self, pods: Iterable[Pod] = (), volumes: FakeStorage | None = None) -> None:
        self.pods: dict[str, Pod] = {p.key: p for p in pods}
        self.volumes = volumes if volumes is not None else FakeStorage()

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        return self.pods.get(f"{namespace}/{name}")

    def pdbs(self) -> Sequence[PodDisruptionBudget]:
        return ()

    def namespace(self, name: str) -> Namespace | None:
        return None

    def storage(self) -> FakeStorage:
        return self.volumes


@dataclass(frozen=True, slots=True)
class PatchCall:
    pod: str
    condition: PodCondition | None
    nominated_node_name: str | None


class RecordingWriter:
    """Records every ClusterWriter call, then forwards it to ``delegate`` (if any)."""

    def __init__(self, delegate: ClusterWriter | None = None) -> None:
        self.delegate = delegate
        self.bind_error: Exception | None = None
        """If set, ``bind`` raises it (an API failure) instead of binding."""
        self.binds: list[tuple[str, str]] = []
        self.patches: list[PatchCall] = []
        self.deletes: list[str] = []
        self.volume_writes: list[tuple[str, str]] = []

    def bind(self, pod: Pod, node_name: str) -> None:
        if self.bind_error is not None:
            raise self.bind_error
        self.binds.append((pod.key, node_name))
        if self.delegate is not None:
            self.delegate.bind(pod, node_name)

    def patch_pod_status(
        self,
        pod: Pod,
        *,
        condition: PodCondition | None = None,
        nominated_node_name: str | None = None,
    ) -> None:
        self.patches.append(PatchCall(pod.key, condition, nominated_node_name))
        if self.delegate is not None:
            self.delegate.patch_pod_status(
                pod, condition=condition, nominated_node_name=nominated_node_name
            )

    def delete_pod(self, pod: Pod) -> None:
        self.deletes.append(pod.key)
        if self.delegate is not None:
            self.delegate.delete_pod(pod)

    def update_pv(self, pv: PersistentVolume) -> None:
        self.volume_writes.append(("pv", pv.name))
        if self.delegate is not None:
            self.delegate.update_pv(pv)

    def update_pvc(self, pvc: PersistentVolumeClaim) -> None:
        self.volume_writes.append(("pvc", pvc.key))
        if self.delegate is not None:
            self.delegate.update_pvc(pvc)


@dataclass(frozen=True, slots=True)
class EventCall:
    regarding: str
    type: str
    reason: str
    action: str
    message: str


class RecordingRecorder:
    def __init__(self) -> None:
        self.events: list[EventCall] = []
        self.preemptions: list[tuple[str, str, list[str]]] = []

    def event(
        self,
        regarding: Pod,
        type_: str,
        reason: str,
        action: str,
        message: str,
        related: Pod | None = None,
    ) -> None:
        self.events.append(EventCall(regarding.key, type_, reason, action, message))

    def preemption(
        self, preemptor: Pod, node: str, victims: Sequence[Pod], num_pdb_violations: int
    ) -> None:
        self.preemptions.append((preemptor.key, node, [v.key for v in victims]))


class FakeNominator:
    """Pods nominated per node, in nomination order (what the queue's nominator
    resolves to). Implements the optional ``nominated_node_names`` the vector
    runner uses to find the nodes it must re-check exactly."""

    def __init__(self) -> None:
        self.by_node: dict[str, list[PodInfo]] = {}

    def nominate(self, pod: Pod | PodInfo, node_name: str) -> None:
        pi = pod if isinstance(pod, PodInfo) else PodInfo(pod)
        self.by_node.setdefault(node_name, []).append(pi)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return list(self.by_node.get(node_name, ()))

    def nominated_node_names(self) -> list[str]:
        return [n for n, pods in self.by_node.items() if pods]

    def nominated_load(self, pod: PodInfo, table: NodeTable) -> tuple[IntArray, IntArray]:
        return nominated_load(self, pod, table)


class ProtocolOnlyNominator:
    """Only what ``framework.interfaces.Nominator`` declares."""

    def __init__(self, inner: FakeNominator) -> None:
        self._inner = inner

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return self._inner.nominated_pods_for_node(node_name)

    def nominated_node_names(self) -> list[str]:
        return self._inner.nominated_node_names()

    def nominated_load(self, pod: PodInfo, table: NodeTable) -> tuple[IntArray, IntArray]:
        return nominated_load(self, pod, table)


# --------------------------------------------------------------------------- profiles

DEFAULT_SCHEDULER: Final = "default-scheduler"

PointSpec = Mapping[str, Sequence[str | tuple[str, int]]]


def profile(
    points: PointSpec,
    *,
    scheduler_name: str = DEFAULT_SCHEDULER,
    percentage: int | None = None,
    args: Mapping[str, PluginArgs] | None = None,
) -> Profile:
    """A Profile enabling, per extension point, the named plugins (``(name, weight)``
    for Score plugins with a weight)."""
    plugins: dict[str, tuple[PluginRef, ...]] = {}
    for point, refs in points.items():
        plugins[point] = tuple(
            PluginRef(r) if isinstance(r, str) else PluginRef(r[0], r[1]) for r in refs
        )
    return Profile(scheduler_name, plugins, dict(args or {}), percentage)


def in_tree_profile(*, with_score: bool = True, percentage: int | None = None) -> Profile:
    """The default profile kubesched can run (upstream's default plugins minus the
    ones it does not implement); ``with_score=False`` drops PreScore and Score."""
    supported = in_tree_registry().keys()
    prof = default_config(supported=supported).profiles[0]
    plugins = dict(prof.plugins)
    if not with_score:
        plugins[PRE_SCORE] = ()
        plugins[SCORE] = ()
    return replace(prof, plugins=plugins, percentage_of_nodes_to_score=percentage)


def constant_factory(plugin: Plugin) -> PluginFactory:
    """A factory that always returns this instance (the test keeps a handle on it)."""

    def factory(args: PluginArgs | None, handle: Framework) -> Plugin:
        del args, handle
        return plugin

    return factory


def instance_registry(*plugins: Plugin) -> dict[str, PluginFactory]:
    return {p.name: constant_factory(p) for p in plugins}


def build_framework(
    prof: Profile,
    registry: Mapping[str, PluginFactory],
    *,
    table: NodeTable | None = None,
    nominator: Nominator | None = None,
    seed: int = 4,
    reader: FakeReader | None = None,
    writer: RecordingWriter | None = None,
    recorder: RecordingRecorder | None = None,
    activate: Callable[[Sequence[Pod]], None] | None = None,
) -> Framework:
    services = Services(
        table=table if table is not None else NodeTable(),
        nominator=nominator if nominator is not None else FakeNominator(),
        clock=FakeClock(),
        rng=random.Random(seed),
        reader=reader if reader is not None else FakeReader(),
        writer=writer if writer is not None else RecordingWriter(),
        recorder=recorder if recorder is not None else RecordingRecorder(),
        metrics=Metrics(),
        activate=activate if activate is not None else (lambda pods: None),
    )
    return Framework(prof, registry, services)


def fake_profile(
    *,
    pre_filter: Sequence[str] = (),
    filters: Sequence[str] = (),
    score: Sequence[str | tuple[str, int]] = (),
    percentage: int | None = None,
) -> Profile:
    return profile(
        {PRE_FILTER: pre_filter, FILTER: filters, PRE_SCORE: (), SCORE: score},
        percentage=percentage,
    )


# --------------------------------------------------------------------------- fake plugins

ERR_REASON_FAKE: Final = "Nodes failed the fake plugin"
"""upstream framework/runtime/testing ErrReasonFake."""


class TrueFilter:
    """Every node passes (upstream NewTrueFilterPlugin); counts calls."""

    def __init__(self, name: str = "TrueFilter") -> None:
        self.name = name
        self.calls: Counter[str] = Counter()

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        self.calls[node.name] += 1
        return SUCCESS


class VectorTrueFilter(TrueFilter):
    """TrueFilter with a vector form (exercises the vectorised runner)."""

    def filter_vector(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts:
        return Verdicts.all_pass(table.capacity)


class MatchFilter:
    """Passes only the node named like the pod (upstream NewMatchFilterPlugin)."""

    name = "MatchFilter"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if node.name == pod.pod.name:
            return SUCCESS
        return Status(Code.UNSCHEDULABLE, ERR_REASON_FAKE)


class FakeFilter:
    """Fails the listed nodes with the given code and reason
    ``injecting failure for pod <name>`` (upstream FakeFilterPlugin)."""

    def __init__(self, failed: Mapping[str, Code], name: str = "FakeFilter") -> None:
        self.name = name
        self.failed = dict(failed)
        self.calls: Counter[str] = Counter()

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        self.calls[node.name] += 1
        code = self.failed.get(node.name)
        if code is None:
            return SUCCESS
        return Status(code, f"injecting failure for pod {pod.pod.name}")


class VectorFakeFilter(FakeFilter):
    """FakeFilter with a vector form (one status per failing code)."""

    def filter_vector(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts:
        index = np.full(table.capacity, -1, dtype=np.int32)
        statuses: list[Status] = []
        for name, code in self.failed.items():
            row = table.row_of.get(name)
            if row is None:
                continue
            index[row] = len(statuses)
            statuses.append(Status(code, f"injecting failure for pod {pod.pod.name}"))
        return Verdicts(index, statuses)


class FakePreFilter:
    """Returns the given result and status (upstream FakePreFilterPlugin)."""

    def __init__(
        self,
        name: str,
        result: PreFilterResult | None = None,
        status: Status = SUCCESS,
    ) -> None:
        self.name = name
        self.result = result
        self.status = status
        self.calls = 0

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        self.calls += 1
        return self.result, self.status

    def pre_filter_extensions(self) -> None:
        return None


class FakePreFilterAndFilter(FakePreFilter):
    """A PreFilter+Filter plugin whose Filter fails every node with Error: it must
    never run when its PreFilter said Skip (upstream FakePreFilterAndFilterPlugin)."""

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        return Status(Code.ERROR, "this filter must have been skipped")


class EqualPrioritizer:
    """Scores every node 1 (upstream NewEqualPrioritizerPlugin); with a vector form."""

    def __init__(self, name: str = "EqualPrioritizerPlugin") -> None:
        self.name = name
        self.calls = 0

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        self.calls += 1
        return 1, SUCCESS

    def score_extensions(self) -> None:
        return None

    def score_vector(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> IntArray:
        return np.ones(len(nodes), dtype=np.int64)


class NodeScorePlugin:
    """Scores nodes from a fixed table (0 for unlisted nodes); per-node path only."""

    def __init__(self, scores: Mapping[str, int], name: str = "NodeScore") -> None:
        self.name = name
        self.scores = dict(scores)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        return self.scores.get(node.name, 0), SUCCESS

    def score_extensions(self) -> None:
        return None


class ExplodingScore:
    """A Score plugin that must not be called (single feasible node: no scoring)."""

    name = "ExplodingScore"

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        raise AssertionError("scored although only one node was feasible")

    def score_extensions(self) -> None:
        return None


# --------------------------------------------------------------------------- outcomes


def schedule_outcome(alg: Algorithm, fwk: Framework, pod: Pod) -> tuple[object, ...]:
    """Everything a scheduling cycle's algorithm decides for ``pod``, comparable:
    the chosen node, counts and scores, or the FitError text, per-node statuses
    in order and rejecting plugins."""
    try:
        r = alg.schedule_pod(fwk, CycleState(), PodInfo(pod))
    except FitError as fit:
        statuses = [(n, s.code, s.reasons, s.plugin) for n, s in fit.diagnosis.node_to_status]
        return ("fit", str(fit), statuses, sorted(fit.diagnosis.unschedulable_plugins))
    return ("ok", r.suggested_host, r.evaluated_nodes, r.feasible_nodes, sorted(r.scores.items()))


def same_outcome(
    vector: tuple[Algorithm, Framework],
    exact: tuple[Algorithm, Framework],
    pod: Pod,
    cache: Cache | None = None,
) -> tuple[object, ...]:
    """Schedule ``pod`` on both paths and assert they decide alike (outcome and
    rotating start index); with ``cache``, bind it where it went. Returns the outcome."""
    got = schedule_outcome(*vector, pod)
    want = schedule_outcome(*exact, pod)
    assert got == want
    assert vector[0].next_start_node_index == exact[0].next_start_node_index
    if cache is not None and got[0] == "ok":
        pod.node_name = str(got[1])
        cache.add_pod(pod)
    return got


def vector_and_exact(
    table: NodeTable, nominator: Nominator, percentage: int
) -> tuple[tuple[Algorithm, Framework], tuple[Algorithm, Framework]]:
    """The in-tree profile twice over ``table`` and ``nominator`` (same seed): the
    vector paths, and the per-node paths (``force_exact``), each with its own
    Algorithm (for ``same_outcome``)."""
    prof = in_tree_profile(percentage=percentage)
    registry = in_tree_registry()
    vec = build_framework(prof, registry, table=table, nominator=nominator, seed=7)
    exact = build_framework(prof, registry, table=table, nominator=nominator, seed=7)
    exact.force_exact = True
    return (Algorithm(), vec), (Algorithm(), exact)
