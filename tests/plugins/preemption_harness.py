"""A small world for the preemption tests: a real ``Framework`` over a snapshot,
wired to fakes shaped like the ones upstream's preemption tests use.

- ``FakeAPI``: the API server as the scheduler sees it (``ClusterReader``,
  ``ClusterWriter``, ``EventRecorder``). It keeps pods by ``namespace/name``,
  applies a status patch or a DELETE to a *copy* of the stored pod (a DELETE
  starts graceful termination: ``deletionTimestamp`` is set, the pod stays),
  logs every call in order, and fails a call on request
  (``fail[("delete", "fail-victim")] = RuntimeError("delete pod failed")``),
  as the clientset reactors of upstream's tests do.
- ``ScriptedRandom``: a ``random.Random`` whose ``randrange`` returns scripted
  values. Upstream seeds Go's ``rand`` with 4 in TestDryRunPreemption; the
  first values of ``Int31n(5)`` are then 4, 1, 3 (the offsets its comments
  give), so the tests inject exactly those.
- Filter plugins shaped like ``pkg/scheduler/testing/framework`` fakes
  (FakeFilter counting its calls, TrueFilter, FalseFilter, MatchFilter) and
  the ``test-plugin`` of default_preemption_test.go whose AddPod/RemovePod
  fail on nodes labelled ``error=true``.
- ``PreemptionHarness``: builds the table, the API, the framework (NodeResourcesFit
  at PreFilter/Filter unless told otherwise, DefaultPreemption at PostFilter)
  and hands out the plugin and its Evaluator.

Upstream's ``st.MakeNode().Capacity(...)`` always adds ``pods: 32``; ``node()``
here does the same so that "Too many pods" behaves as in the upstream tables.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim
from kubesched.api.types import Namespace, Node, Pod, PodCondition, PodDisruptionBudget, Time
from kubesched.framework.config import (
    FILTER,
    POST_FILTER,
    PRE_FILTER,
    DefaultPreemptionArgs,
    PluginArgs,
    PluginRef,
    Profile,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import Plugin
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.preemption import Candidate, Evaluator
from kubesched.framework.results import NodeToStatus, PostFilterResult, PreFilterResult
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.defaultpreemption import DefaultPreemption
from kubesched.plugins.noderesources.fit import Fit
from kubesched.runtime.framework import Framework, PluginFactory, Services
from kubesched.scheduler.metrics import Metrics
from tests.builders import build_table, make_node
from tests.fakes import FakeClock, FakeNominator
from tests.storage_fakes import FakeStorage

SCHEDULER_NAME: Final = "default-scheduler"
FIT: Final = "NodeResourcesFit"
PREEMPTION: Final = "DefaultPreemption"

# Upstream's resource sizes (default_preemption_test.go).
SMALL: Final = {"cpu": "100m", "memory": "100"}
MEDIUM: Final = {"cpu": "200m", "memory": "200"}
LARGE: Final = {"cpu": "300m", "memory": "300"}
VERY_LARGE: Final = {"cpu": "500m", "memory": "500"}

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
"""negPriority, lowPriority, midPriority, highPriority, veryHighPriority."""

GO_SEED_4_INT31N_5: Final = (4, 1, 3)
"""``rand.New(rand.NewSource(4)).Int31n(5)``, three draws (TestDryRunPreemption)."""


def node(name: str, res: Mapping[str, str | int] | None = None, **labels: str) -> Node:
    """``st.MakeNode().Name(name).Capacity(res)``: ``pods: 32`` unless ``res`` says otherwise."""
    b = make_node(name).capacity_map({"pods": 32, **(res or {})})
    for k, v in labels.items():
        b.label(k, v)
    return b.obj()


# --------------------------------------------------------------------------- ports


class ScriptedRandom(random.Random):
    """``randrange`` returns the scripted values in turn (then 0); every bound
    asked for is recorded in ``asked``."""

    def __init__(self, values: Iterable[int] = ()) -> None:
        super().__init__(0)
        self.values = list(values)
        self.asked: list[int] = []

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:
        n = start if stop is None else stop - start
        self.asked.append(n)
        v = self.values.pop(0) if self.values else 0
        assert 0 <= v < n, f"scripted value {v} out of range [0, {n})"
        return v


@dataclass(frozen=True, slots=True)
class Event:
    regarding: str
    type: str
    reason: str
    action: str
    message: str
    related: str | None


@dataclass(frozen=True, slots=True)
class Recorded:
    preemptor: str
    node: str
    victims: tuple[str, ...]
    num_pdb_violations: int


@dataclass
class FakeAPI:
    """Pods by ``namespace/name`` plus an ordered log of API calls (see module doc)."""

    pods: dict[str, Pod] = field(default_factory=dict)
    pdb_list: list[PodDisruptionBudget] = field(default_factory=list)
    clock: FakeClock = field(default_factory=FakeClock)
    calls: list[tuple[str, str]] = field(default_factory=list)
    """``(verb, pod name)`` for every bind / patch / delete, in order, failed ones too."""
    fail: dict[tuple[str, str], Exception] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    preemptions: list[Recorded] = field(default_factory=list)
    on_call: Callable[[str, Pod], None] | None = None
    """Called before a write is applied (tests use it to look inside a preemption)."""
    volumes: FakeStorage = field(default_factory=FakeStorage)

    @classmethod
    def of(cls, pods: Iterable[Pod], pdbs: Iterable[PodDisruptionBudget] = ()) -> FakeAPI:
        return cls({p.key: p for p in pods}, list(pdbs))

    # ClusterReader
    def get_pod(self, namespace: str, name: str) -> Pod | None:
        return self.pods.get(f"{namespace}/{name}")

    def pdbs(self) -> Sequence[PodDisruptionBudget]:
        return self.pdb_list

    def namespace(self, name: str) -> Namespace | None:
        return None

    def storage(self) -> FakeStorage:
        return self.volumes

    # ClusterWriter
    def _call(self, verb: str, pod: Pod) -> Pod | None:
        self.calls.append((verb, pod.name))
        if self.on_call is not None:
            self.on_call(verb, pod)
        err = self.fail.get((verb, pod.name))
        if err is not None:
            raise err
        cur = self.pods.get(pod.key)
        if cur is None or cur.uid != pod.uid:
            return None
        return cur.copy()

    def bind(self, pod: Pod, node_name: str) -> None:
        new = self._call("bind", pod)
        if new is not None:
            new.node_name = node_name
            self.pods[new.key] = new

    def patch_pod_status(
        self,
        pod: Pod,
        *,
        condition: PodCondition | None = None,
        nominated_node_name: str | None = None,
    ) -> None:
        new = self._call("patch", pod)
        if new is None:
            return
        if condition is not None:
            new.conditions = [c for c in new.conditions if c.type != condition.type]
            new.conditions.append(condition)
        if nominated_node_name is not None:
            new.nominated_node_name = nominated_node_name
        self.pods[new.key] = new

    def update_pv(self, pv: PersistentVolume) -> None:
        self.volumes.update_pv(pv)

    def update_pvc(self, pvc: PersistentVolumeClaim) -> None:
        self.volumes.update_pvc(pvc)

    def delete_pod(self, pod: Pod) -> None:
        new = self._call("delete", pod)
        if new is not None and new.deletion_timestamp is None:
            new.deletion_timestamp = self.clock.now()
            self.pods[new.key] = new

    # EventRecorder
    def event(
        self,
        regarding: Pod,
        type_: str,
        reason: str,
        action: str,
        message: str,
        related: Pod | None = None,
    ) -> None:
        self.events.append(
            Event(
                regarding.key,
                type_,
                reason,
                action,
                message,
                related.key if related is not None else None,
            )
        )

    def preemption(
        self, preemptor: Pod, node: str, victims: Sequence[Pod], num_pdb_violations: int
    ) -> None:
        self.preemptions.append(
            Recorded(preemptor.key, node, tuple(v.name for v in victims), num_pdb_violations)
        )

    # views
    def names(self, verb: str) -> list[str]:
        return [name for v, name in self.calls if v == verb]

    def terminating(self) -> set[str]:
        return {p.name for p in self.pods.values() if p.deletion_timestamp is not None}


# --------------------------------------------------------------------------- fake plugins

ERR_REASON_FAKE: Final = "Nodes failed the fake plugin"
"""Upstream tf.ErrReasonFake."""


class FakeFilter:
    """tf.FakeFilterPlugin: counts calls; fails the nodes in ``codes`` with
    "injecting failure for pod <name>" (a Success code passes)."""

    name = "FakeFilter"

    def __init__(self, codes: Mapping[str, Code] | None = None) -> None:
        self.codes = dict(codes or {})
        self.calls = 0

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        self.calls += 1
        code = self.codes.get(node.name, Code.SUCCESS)
        if code == Code.SUCCESS:
            return SUCCESS
        return Status(code, f"injecting failure for pod {pod.pod.name}")


class TrueFilter:
    name = "TrueFilter"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        return SUCCESS


class FalseFilter:
    name = "FalseFilter"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        return Status(Code.UNSCHEDULABLE, ERR_REASON_FAKE)


class MatchFilter:
    """Passes the node whose name is the pod's name."""

    name = "MatchFilter"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if node.name == pod.pod.name:
            return SUCCESS
        return Status(Code.UNSCHEDULABLE, ERR_REASON_FAKE)


class ErrorOnLabelPlugin:
    """``test-plugin`` of default_preemption_test.go: a PreFilter with extensions
    whose AddPod/RemovePod fail on nodes labelled ``error=true``.
    ``per_node=True`` puts the node name in the message (to tell errors apart)."""

    name = "test-plugin"

    def __init__(self, per_node: bool = False) -> None:
        self.per_node = per_node

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        return None, SUCCESS

    def pre_filter_extensions(self) -> ErrorOnLabelPlugin:
        return self

    def _fail(self, verb: str, pod: PodInfo, node: NodeInfo) -> Status:
        assert node.node is not None
        if node.node.labels.get("error") != "true":
            return SUCCESS
        where = f" on {node.name}" if self.per_node else ""
        return Status(Code.ERROR, f"failed to {verb} pod: {pod.pod.name}{where}")

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo) -> Status:
        return self._fail("add", pod, node)

    def remove_pod(
        self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        return self._fail("remove", pod, node)


def _instance(plugin: object) -> PluginFactory:
    def factory(args: PluginArgs | None, handle: Framework) -> Plugin:
        return plugin  # type: ignore[return-value]

    return factory


# --------------------------------------------------------------------------- harness


class PreemptionHarness:
    """One snapshot, one API, one framework with DefaultPreemption at PostFilter.

    ``bound`` pods (with a node) form the snapshot; ``others`` (preemptors,
    nominated pods) only exist in the API. ``plugins`` adds plugin instances by
    name; ``pre_filter`` / ``filters`` name the plugins of those points in
    order; ``factories`` adds plugin factories (e.g. in-tree ones) by name.
    ``policy`` builds the DefaultPreemption (a subclass for custom
    eligibility or ordering). ``exact`` forces the per-node paths.
    """

    def __init__(
        self,
        nodes: Sequence[Node],
        bound: Sequence[Pod] = (),
        others: Sequence[Pod] = (),
        *,
        pdbs: Sequence[PodDisruptionBudget] = (),
        pre_filter: Sequence[str] = (FIT,),
        filters: Sequence[str] = (FIT,),
        plugins: Mapping[str, object] | None = None,
        factories: Mapping[str, PluginFactory] | None = None,
        args: DefaultPreemptionArgs | None = None,
        policy: Callable[..., DefaultPreemption] = DefaultPreemption,
        async_preemption: bool = True,
        rng: random.Random | None = None,
        now: Time = 0,
        exact: bool = False,
    ) -> None:
        self.nodes = list(nodes)
        self.table = build_table(self.nodes, bound)
        self.clock = FakeClock(now)
        self.api = FakeAPI.of([*bound, *others], pdbs)
        self.api.clock = self.clock
        self.nominator = FakeNominator()
        self.rng = rng if rng is not None else random.Random(0)
        self.metrics = Metrics()
        self.activated: list[str] = []
        services = Services(
            table=self.table,
            nominator=self.nominator,
            clock=self.clock,
            rng=self.rng,
            reader=self.api,
            writer=self.api,
            recorder=self.api,
            metrics=self.metrics,
            activate=lambda pods: self.activated.extend(p.name for p in pods),
        )
        registry: dict[str, PluginFactory] = {
            FIT: Fit,
            PREEMPTION: functools.partial(policy, async_preemption=async_preemption),
        }
        for name, inst in (plugins or {}).items():
            registry[name] = _instance(inst)
        registry.update(factories or {})
        points = {
            PRE_FILTER: tuple(PluginRef(n) for n in pre_filter),
            FILTER: tuple(PluginRef(n) for n in filters),
            POST_FILTER: (PluginRef(PREEMPTION),),
        }
        plugin_args: dict[str, PluginArgs] = {}
        if args is not None:
            plugin_args[PREEMPTION] = args
        self.fwk = Framework(Profile(SCHEDULER_NAME, points, plugin_args), registry, services)
        self.fwk.per_node = exact
        plugin = self.fwk.post_filter_plugins[0]
        assert isinstance(plugin, DefaultPreemption)
        self.plugin = plugin

    @property
    def evaluator(self) -> Evaluator:
        return self.plugin.evaluator

    def state(self, pod: Pod) -> CycleState:
        """A CycleState filled by the PreFilter plugins (which must all succeed)."""
        state = CycleState()
        _, s, _ = self.fwk.run_pre_filter_plugins(state, PodInfo(pod))
        assert s.is_success(), s
        return state

    def infos(self, names: Iterable[str] | None = None) -> list[NodeInfo]:
        """NodeInfos sorted by node name (as upstream's tests sort them)."""
        wanted = sorted(names) if names is not None else sorted(n.name for n in self.nodes)
        out = []
        for name in wanted:
            info = self.table.infos[self.table.row_of[name]]
            assert info is not None
            out.append(info)
        return out

    def post_filter(
        self, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        return self.plugin.post_filter(self.state(pod), PodInfo(pod), statuses)

    def preempt(self, pod: Pod, statuses: NodeToStatus) -> tuple[PostFilterResult | None, Status]:
        return self.evaluator.preempt(self.state(pod), PodInfo(pod), statuses)

    def dry_run(
        self,
        pod: Pod,
        offset: int,
        num_candidates: int,
        pdbs: Sequence[PodDisruptionBudget] = (),
        names: Iterable[str] | None = None,
    ) -> list[Candidate]:
        candidates, _, _ = self.evaluator.dry_run_preemption(
            self.state(pod), PodInfo(pod), self.infos(names), pdbs, offset, num_candidates
        )
        return candidates


def all_unschedulable(names: Iterable[str]) -> NodeToStatus:
    """Every named node Unschedulable, the others UnschedulableAndUnresolvable."""
    return NodeToStatus({n: Status(Code.UNSCHEDULABLE) for n in names})


def candidate_map(candidates: Sequence[Candidate]) -> dict[str, tuple[list[str], int]]:
    """node -> (victim names sorted, numPDBViolations): upstream sorts both
    before comparing."""
    return {
        c.name: (sorted(p.pod.name for p in c.victims.pods), c.victims.num_pdb_violations)
        for c in candidates
    }


def victim_names(c: Candidate | None) -> list[str]:
    return [] if c is None else [p.pod.name for p in c.victims.pods]


def go_aggregate(messages: Sequence[str]) -> str:
    """utilerrors.NewAggregate(errs).Error(): duplicates dropped, one message as
    is, several as ``[a, b]``."""
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"
