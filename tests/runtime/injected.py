"""The injected fake plugin of the runtime tests (upstream framework_test.go's
TestPlugin + injectedResult) and the small helpers around it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeSet
from kubesched.framework.results import (
    NodeScore,
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
)
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.framework import Framework
from tests.builders import make_pod
from tests.scheduler.harness import build_framework, instance_registry, profile

INJECT_REASON = "injected status"
INJECT_FILTER_REASON = "injected filter status"
NODE_NAME = "testNode"


# --------------------------------------------------------------------------- the fake plugin


@dataclass(frozen=True)
class Added:
    """The state AddPod writes: the name of the pod added (never changes)."""

    pod_name: str

    def clone(self) -> Added:
        return self


@dataclass(eq=False)
class InjectedPlugin:
    """Implements PreFilter (+ extensions), Filter, PostFilter, PreScore and Score;
    every result is injected (upstream TestPlugin + injectedResult). ``calls``
    counts invocations per extension point."""

    name: str
    pre_filter_code: Code = Code.SUCCESS
    pre_filter_result: PreFilterResult | None = None
    add_pod_code: Code = Code.SUCCESS
    remove_pod_code: Code = Code.SUCCESS
    filter_code: Code = Code.SUCCESS
    filter_rule: Callable[[NodeInfo], bool] | None = None
    """If set, Filter fails (with ``filter_code``) exactly when it returns True."""
    post_filter_code: Code = Code.SUCCESS
    post_filter_reasons: tuple[str, ...] = (INJECT_REASON,)
    post_filter_result: PostFilterResult | None = None
    pre_score_code: Code = Code.SUCCESS
    score_value: int = 0
    score_code: Code = Code.SUCCESS
    normalize_to: int | None = None
    """None: no ScoreExtensions; otherwise NormalizeScore sets every score to it."""
    normalize_code: Code = Code.SUCCESS
    calls: Counter[str] = field(default_factory=Counter)
    filter_saw: list[frozenset[str]] = field(default_factory=list)
    add_pod_saw: list[frozenset[str]] = field(default_factory=list)

    # PreFilter ---------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: object
    ) -> tuple[PreFilterResult | None, Status]:
        self.calls["pre_filter"] += 1
        return self.pre_filter_result, Status(self.pre_filter_code, INJECT_REASON)

    def pre_filter_extensions(self) -> InjectedPlugin:
        return self

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo) -> Status:
        self.calls["add_pod"] += 1
        self.add_pod_saw.append(frozenset(p.pod.name for p in node.pods))
        state.write(f"added/{self.name}", Added(to_add.pod.name))
        return Status(self.add_pod_code, INJECT_REASON)

    def remove_pod(
        self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        self.calls["remove_pod"] += 1
        return Status(self.remove_pod_code, INJECT_REASON)

    # Filter ------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        self.calls["filter"] += 1
        self.filter_saw.append(frozenset(p.pod.name for p in node.pods))
        if self.filter_rule is not None and not self.filter_rule(node):
            return SUCCESS
        return Status(self.filter_code, INJECT_FILTER_REASON)

    # PostFilter --------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        self.calls["post_filter"] += 1
        return self.post_filter_result, Status(self.post_filter_code, *self.post_filter_reasons)

    # PreScore / Score --------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Status:
        self.calls["pre_score"] += 1
        return Status(self.pre_score_code, INJECT_REASON)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        self.calls["score"] += 1
        return self.score_value, Status(self.score_code, INJECT_REASON)

    def score_extensions(self) -> InjectedPlugin | None:
        return self if self.normalize_to is not None else None

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status:
        self.calls["normalize"] += 1
        assert self.normalize_to is not None
        for s in scores:
            s.score = self.normalize_to
        return Status(self.normalize_code, INJECT_REASON)


def fw_with(point: str, plugins: Sequence[InjectedPlugin]) -> Framework:
    """A framework enabling these plugins, in order, at one extension point."""
    return build_framework(profile({point: [p.name for p in plugins]}), instance_registry(*plugins))


def some_pod() -> PodInfo:
    return make_pod("p").info()


def sig(s: Status) -> tuple[Code, tuple[str, ...], str]:
    return s.code, s.reasons, s.plugin


P = InjectedPlugin
U = Code.UNSCHEDULABLE
UAU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def wrapped(plugin: str) -> Status:
    """A Filter non-rejection as the runner wraps it (an Error naming the plugin)."""
    return Status(
        Code.ERROR, f'running "{plugin}" filter plugin: {INJECT_FILTER_REASON}', plugin=plugin
    )
