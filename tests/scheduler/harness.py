"""Shared wiring for the runtime, algorithm and scheduler tests.

- a recording event recorder (the other fake ports and the fake nominator
  are in ``tests/fakes.py``);
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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

import numpy as np

from kubesched.api.types import Pod
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
from kubesched.framework.results import FitError, PreFilterResult
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.framework import Framework, PluginFactory, Services
from kubesched.scheduler.cache import Cache
from kubesched.scheduler.config import default_config
from kubesched.scheduler.metrics import Metrics
from kubesched.scheduler.registry import in_tree_registry
from kubesched.scheduler.schedule_one import ScheduleOne
from tests.fakes import FakeClock, FakeNominator, FakeReader, RecordingWriter

# --------------------------------------------------------------------------- ports


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


def schedule_outcome(alg: ScheduleOne, fwk: Framework, pod: Pod) -> tuple[object, ...]:
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
    vector: tuple[ScheduleOne, Framework],
    exact: tuple[ScheduleOne, Framework],
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


def vectorised_and_per_node(
    table: NodeTable, nominator: Nominator, percentage: int
) -> tuple[tuple[ScheduleOne, Framework], tuple[ScheduleOne, Framework]]:
    """The in-tree profile twice over ``table`` and ``nominator`` (same seed): the
    vectorised paths, and the per-node paths (``per_node``), each with its own
    ScheduleOne (for ``same_outcome``)."""
    prof = in_tree_profile(percentage=percentage)
    registry = in_tree_registry()
    vec = build_framework(prof, registry, table=table, nominator=nominator, seed=7)
    exact = build_framework(prof, registry, table=table, nominator=nominator, seed=7)
    exact.per_node = True
    return (ScheduleOne(), vec), (ScheduleOne(), exact)
