"""Framework: building plugins from a profile and running each extension point.

Re-expresses upstream's pkg/scheduler/framework/runtime/framework_test.go
(TestRunPreFilterPlugins, TestRunPreFilterExtensionAddPod/RemovePod,
TestFilterPlugins, TestPostFilterPlugins, TestFilterPluginsWithNominatedPods,
TestRunPreScorePlugins, TestRunScorePlugins, TestInitFrameworkWithScorePlugins)
with small fake plugins whose results are injected per case, plus the
runner facts upstream relies on elsewhere (PreFilterResult merging and its
"simultaneously" message, the two nominated-pod passes).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pytest

from kubesched.api.types import Pod
from kubesched.framework.config import (
    FILTER,
    POST_FILTER,
    PRE_FILTER,
    PRE_SCORE,
    SCORE,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeSet
from kubesched.framework.nodetable import IntArray
from kubesched.framework.results import (
    NodeScore,
    NodeToStatus,
    NominatingInfo,
    NominatingMode,
    PostFilterResult,
    PreFilterResult,
)
from kubesched.framework.snapshot import build_table
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.framework import Framework, ScoreError
from tests.builders import make_node, make_pod
from tests.fakes import FakeNominator
from tests.scheduler.harness import build_framework, instance_registry, profile

INJECT_REASON = "injected status"
INJECT_FILTER_REASON = "injected filter status"
NODE_NAME = "testNode"


# --------------------------------------------------------------------------- the fake plugin


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
        state.write(f"added/{self.name}", to_add.pod.name)
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


# --------------------------------------------------------------------------- PreFilter

P = InjectedPlugin
U = Code.UNSCHEDULABLE
UAU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


@pytest.mark.parametrize(
    ("plugins", "want_code", "want_skipped", "want_ran"),
    [
        pytest.param(
            [P("success1"), P("success2")],
            Code.SUCCESS,
            set(),
            {"success1", "success2"},
            id="TestRunPreFilterPlugins/all PreFilter returned success",
        ),
        pytest.param(
            [P("success"), P("error", pre_filter_code=Code.ERROR)],
            Code.ERROR,
            None,
            {"success", "error"},
            id="TestRunPreFilterPlugins/one success then one non-success",
        ),
        pytest.param(
            [P("skip", pre_filter_code=Code.SKIP), P("error", pre_filter_code=Code.ERROR)],
            Code.ERROR,
            None,
            {"skip", "error"},
            id="TestRunPreFilterPlugins/one skip then one non-success",
        ),
        pytest.param(
            [P(f"skip{i}", pre_filter_code=Code.SKIP) for i in (1, 2, 3)],
            Code.SUCCESS,
            {"skip1", "skip2", "skip3"},
            {"skip1", "skip2", "skip3"},
            id="TestRunPreFilterPlugins/all PreFilter plugins returned skip",
        ),
        pytest.param(
            [
                P("skip1", pre_filter_code=Code.SKIP),
                P("success1"),
                P("skip2", pre_filter_code=Code.SKIP),
                P("success2"),
            ],
            Code.SUCCESS,
            {"skip1", "skip2"},
            {"skip1", "success1", "skip2", "success2"},
            id="TestRunPreFilterPlugins/some PreFilter plugins returned skip",
        ),
        pytest.param(
            [P("unschedulable", pre_filter_code=U), P("skip", pre_filter_code=Code.SKIP)],
            U,
            {"skip"},
            {"unschedulable", "skip"},
            id="TestRunPreFilterPlugins/Unschedulable keeps running the other plugins",
        ),
        pytest.param(
            [P("unresolvable", pre_filter_code=UAU), P("skip", pre_filter_code=Code.SKIP)],
            UAU,
            None,
            {"unresolvable"},
            id="TestRunPreFilterPlugins/UnschedulableAndUnresolvable stops at once",
        ),
        pytest.param(
            [
                P("reject-all-nodes", pre_filter_result=PreFilterResult(frozenset())),
                P("skip", pre_filter_code=Code.SKIP),
            ],
            UAU,
            None,
            {"reject-all-nodes"},
            id="TestRunPreFilterPlugins/all nodes filtered out by the PreFilterResult",
        ),
        pytest.param(
            [P("unschedulable", pre_filter_code=U), P("unresolvable", pre_filter_code=UAU)],
            UAU,
            None,
            {"unschedulable", "unresolvable"},
            id="an UnschedulableAndUnresolvable after an Unschedulable wins",
        ),
        pytest.param(
            [P("unschedulable", pre_filter_code=U), P("error", pre_filter_code=Code.ERROR)],
            Code.ERROR,
            None,
            {"unschedulable", "error"},
            id="an Error after an Unschedulable wins",
        ),
    ],
)
def test_run_pre_filter_plugins(
    plugins: list[InjectedPlugin],
    want_code: Code,
    want_skipped: set[str] | None,
    want_ran: set[str],
) -> None:
    fwk = fw_with(PRE_FILTER, plugins)
    state = CycleState()
    _, status, _ = fwk.run_pre_filter_plugins(state, some_pod())
    assert status.code == want_code
    if want_skipped is not None:
        assert state.skip_filter_plugins == frozenset(want_skipped)
    assert {p.name for p in plugins if p.calls["pre_filter"]} == want_ran
    assert all(p.calls["pre_filter"] <= 1 for p in plugins)


def test_pre_filter_rejection_is_stamped_with_the_plugin() -> None:
    plugins = [P("a"), P("unschedulable", pre_filter_code=U)]
    _, status, _ = fw_with(PRE_FILTER, plugins).run_pre_filter_plugins(CycleState(), some_pod())
    assert sig(status) == (U, (INJECT_REASON,), "unschedulable")


def test_pre_filter_returns_the_last_unschedulable_status() -> None:
    """upstream keeps overwriting returnStatus: the last Unschedulable is returned."""
    plugins = [P("first", pre_filter_code=U), P("second", pre_filter_code=U)]
    _, status, _ = fw_with(PRE_FILTER, plugins).run_pre_filter_plugins(CycleState(), some_pod())
    assert status.plugin == "second"


def test_pre_filter_error_is_wrapped() -> None:
    plugins = [P("FakePreFilter", pre_filter_code=Code.ERROR)]
    _, status, _ = fw_with(PRE_FILTER, plugins).run_pre_filter_plugins(CycleState(), some_pod())
    assert sig(status) == (
        Code.ERROR,
        (f'running PreFilter plugin "FakePreFilter": {INJECT_REASON}',),
        "FakePreFilter",
    )


def nodes_result(*names: str) -> PreFilterResult:
    return PreFilterResult(frozenset(names))


@pytest.mark.parametrize(
    ("results", "want_result", "want_status", "want_narrowing"),
    [
        pytest.param(
            {"A": None, "B": None},
            None,
            SUCCESS,
            set(),
            id="no plugin narrows: all nodes",
        ),
        pytest.param(
            {"A": None, "B": nodes_result("n1", "n2")},
            nodes_result("n1", "n2"),
            SUCCESS,
            {"B"},
            id="one plugin narrows to its nodes",
        ),
        pytest.param(
            {"A": nodes_result("n1", "n2"), "B": nodes_result("n2", "n3")},
            nodes_result("n2"),
            SUCCESS,
            {"A", "B"},
            id="two results are intersected",
        ),
        pytest.param(
            {
                "FakePreFilter1": None,
                "FakePreFilter2": nodes_result("node2"),
                "FakePreFilter3": nodes_result("node1", "node2"),
            },
            nodes_result("node2"),
            SUCCESS,
            {"FakePreFilter2", "FakePreFilter3"},
            id="TestSchedulerSchedulePod/test prefilter plugin returning node",
        ),
        pytest.param(
            {
                "FakePreFilter1": None,
                "FakePreFilter2": nodes_result("node2"),
                "FakePreFilter3": nodes_result("node1"),
            },
            nodes_result(),
            Status(
                UAU,
                "node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] simultaneously",
            ),
            {"FakePreFilter2", "FakePreFilter3"},
            id="TestSchedulerSchedulePod/test prefilter plugin returning non-intersecting nodes",
        ),
        pytest.param(
            {"FakePreFilter1": None, "FakePreFilter2": nodes_result()},
            nodes_result(),
            Status(UAU, "node(s) didn't satisfy plugin FakePreFilter2"),
            {"FakePreFilter2"},
            id="TestSchedulerSchedulePod/test prefilter plugin returning empty node set",
        ),
        pytest.param(
            {"A": nodes_result("n1", "n2"), "B": nodes_result("n2", "n3"), "C": nodes_result("n3")},
            nodes_result(),
            Status(UAU, "node(s) didn't satisfy plugin(s) [A B C] simultaneously"),
            {"A", "B", "C"},
            id="the message names every narrowing plugin seen so far",
        ),
        pytest.param(
            {"FakePreFilter3": nodes_result("node1"), "FakePreFilter2": nodes_result("node2")},
            nodes_result(),
            Status(
                UAU,
                "node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] simultaneously",
            ),
            {"FakePreFilter2", "FakePreFilter3"},
            id="the simultaneously message lists the plugins sorted, not in profile order",
        ),
    ],
)
def test_pre_filter_result_merging(
    results: dict[str, PreFilterResult | None],
    want_result: PreFilterResult | None,
    want_status: Status,
    want_narrowing: set[str],
) -> None:
    plugins = [P(name, pre_filter_result=r) for name, r in results.items()]
    result, status, narrowing = fw_with(PRE_FILTER, plugins).run_pre_filter_plugins(
        CycleState(), some_pod()
    )
    assert result == want_result
    assert (status.code, status.reasons) == (want_status.code, want_status.reasons)
    assert set(narrowing) == want_narrowing


def test_pre_filter_stops_after_the_merged_result_is_empty() -> None:
    after = P("after")
    plugins = [
        P("A", pre_filter_result=nodes_result("n1")),
        P("B", pre_filter_result=nodes_result()),
        after,
    ]
    fw_with(PRE_FILTER, plugins).run_pre_filter_plugins(CycleState(), some_pod())
    assert after.calls["pre_filter"] == 0


def test_pre_filter_skip_ignores_the_result() -> None:
    """A Skip status ignores the PreFilterResult that came with it."""
    plugins = [P("skipper", pre_filter_code=Code.SKIP, pre_filter_result=nodes_result())]
    result, status, narrowing = fw_with(PRE_FILTER, plugins).run_pre_filter_plugins(
        CycleState(), some_pod()
    )
    assert (result, status.code, list(narrowing)) == (None, Code.SUCCESS, [])


# --------------------------------------------------------------------------- AddPod / RemovePod


@pytest.mark.parametrize("op", ["add", "remove"])
@pytest.mark.parametrize(
    ("plugins", "skipped", "want"),
    [
        pytest.param(
            [P("success1"), P("success2")],
            set(),
            SUCCESS,
            id="no plugins are skipped and all returned success",
        ),
        pytest.param(
            [P("success1"), P("error1", add_pod_code=Code.ERROR, remove_pod_code=Code.ERROR)],
            set(),
            Status(Code.ERROR, 'running {Op} on PreFilter plugin "error1": injected status'),
            id="one returned error",
        ),
        pytest.param(
            [P("success1"), P("skipped", add_pod_code=Code.ERROR, remove_pod_code=Code.ERROR)],
            {"skipped"},
            SUCCESS,
            id="one is skipped",
        ),
        pytest.param(
            [P("unsched", add_pod_code=U, remove_pod_code=U), P("never")],
            set(),
            Status(Code.ERROR, 'running {Op} on PreFilter plugin "unsched": injected status'),
            id="any non-success is an Error and stops",
        ),
    ],
)
def test_run_pre_filter_extensions(
    op: str, plugins: list[InjectedPlugin], skipped: set[str], want: Status
) -> None:
    """TestRunPreFilterExtensionAddPod / TestRunPreFilterExtensionRemovePod."""
    fwk = fw_with(PRE_FILTER, plugins)
    state = CycleState()
    state.skip_filter_plugins = frozenset(skipped)
    node = make_node("n1").info()
    other = make_pod("other").info()
    if op == "add":
        got = fwk.run_pre_filter_extension_add_pod(state, some_pod(), other, node)
    else:
        got = fwk.run_pre_filter_extension_remove_pod(state, some_pod(), other, node)
    op_name = "AddPod" if op == "add" else "RemovePod"
    assert got.code == want.code
    assert got.reasons == tuple(r.format(Op=op_name) for r in want.reasons)
    key = "add_pod" if op == "add" else "remove_pod"
    for p in plugins:
        if p.name in skipped or p.name == "never":
            assert p.calls[key] == 0


# --------------------------------------------------------------------------- Filter


def wrapped(plugin: str) -> Status:
    return Status(
        Code.ERROR, f'running "{plugin}" filter plugin: {INJECT_FILTER_REASON}', plugin=plugin
    )


def rejected(code: Code, plugin: str) -> Status:
    return Status(code, INJECT_FILTER_REASON, plugin=plugin)


@pytest.mark.parametrize(
    ("codes", "skipped", "want"),
    [
        pytest.param([Code.SUCCESS], set(), SUCCESS, id="TestFilterPlugins/SuccessFilter"),
        pytest.param(
            [Code.ERROR], set(), wrapped("TestPlugin1"), id="TestFilterPlugins/ErrorFilter"
        ),
        pytest.param(
            [U], set(), rejected(U, "TestPlugin1"), id="TestFilterPlugins/UnschedulableFilter"
        ),
        pytest.param(
            [UAU],
            set(),
            rejected(UAU, "TestPlugin1"),
            id="TestFilterPlugins/UnschedulableAndUnresolvableFilter",
        ),
        pytest.param(
            [Code.ERROR, Code.ERROR],
            set(),
            wrapped("TestPlugin1"),
            id="TestFilterPlugins/ErrorAndErrorFilters",
        ),
        pytest.param(
            [U, U],
            set(),
            rejected(U, "TestPlugin1"),
            id="TestFilterPlugins/UnschedulableAndUnschedulableFilters",
        ),
        pytest.param(
            [UAU, U],
            set(),
            rejected(UAU, "TestPlugin1"),
            id="TestFilterPlugins/UnschedulableAndUnschedulableAndUnresolvableFilters",
        ),
        pytest.param(
            [Code.SUCCESS, Code.SUCCESS],
            set(),
            SUCCESS,
            id="TestFilterPlugins/SuccessAndSuccessFilters",
        ),
        pytest.param(
            [Code.SUCCESS, Code.ERROR],
            {"TestPlugin2"},
            SUCCESS,
            id="TestFilterPlugins/SuccessAndSkipFilters",
        ),
        pytest.param(
            [Code.ERROR, Code.SUCCESS],
            set(),
            wrapped("TestPlugin1"),
            id="TestFilterPlugins/ErrorAndSuccessFilters",
        ),
        pytest.param(
            [Code.SUCCESS, Code.ERROR],
            set(),
            wrapped("TestPlugin2"),
            id="TestFilterPlugins/SuccessAndErrorFilters",
        ),
        pytest.param(
            [Code.SUCCESS, U],
            set(),
            rejected(U, "TestPlugin2"),
            id="TestFilterPlugins/SuccessAndUnschedulableFilters",
        ),
        pytest.param(
            [Code.PENDING],
            set(),
            rejected(Code.PENDING, "TestPlugin1"),
            id="Pending is a rejection, not wrapped as an Error",
        ),
        pytest.param(
            [Code.SKIP],
            set(),
            Status(
                Code.ERROR,
                f'running "TestPlugin1" filter plugin: {INJECT_FILTER_REASON}',
                plugin="TestPlugin1",
            ),
            id="Skip from Filter is not a legal code and becomes an Error",
        ),
    ],
)
def test_run_filter_plugins(codes: list[Code], skipped: set[str], want: Status) -> None:
    plugins = [P(f"TestPlugin{i + 1}", filter_code=c) for i, c in enumerate(codes)]
    state = CycleState()
    state.skip_filter_plugins = frozenset(skipped)
    got = fw_with(FILTER, plugins).run_filter_plugins(state, some_pod(), make_node("n").info())
    assert sig(got) == sig(want)
    for p in plugins:
        if p.name in skipped:
            assert p.calls["filter"] == 0


def test_filter_stops_at_the_first_rejection() -> None:
    plugins = [P("first", filter_code=U), P("second")]
    fw_with(FILTER, plugins).run_filter_plugins(CycleState(), some_pod(), make_node("n").info())
    assert plugins[1].calls["filter"] == 0


# --------------------------------------------------------------------------- PostFilter

N1 = PostFilterResult.nominated("n1")
N2 = PostFilterResult.nominated("n2")
NOOP = PostFilterResult(NominatingInfo("ignored", NominatingMode.NOOP))


@pytest.mark.parametrize(
    ("plugins", "want", "want_result"),
    [
        pytest.param(
            [P("TestPlugin", post_filter_code=Code.SUCCESS, post_filter_result=N1)],
            Status(Code.SUCCESS, INJECT_REASON),
            N1,
            id="TestPostFilterPlugins/a single plugin makes a Pod schedulable",
        ),
        pytest.param(
            [P("TestPlugin1", post_filter_code=U), P("TestPlugin2", post_filter_code=Code.SUCCESS)],
            Status(Code.SUCCESS, INJECT_REASON),
            None,
            id="TestPostFilterPlugins/plugin1 Unschedulable, plugin2 makes the Pod schedulable",
        ),
        pytest.param(
            [P("TestPlugin1", post_filter_code=Code.SUCCESS), P("TestPlugin2", post_filter_code=U)],
            Status(Code.SUCCESS, INJECT_REASON),
            None,
            id="TestPostFilterPlugins/plugin1 makes the Pod schedulable, plugin2 is not run",
        ),
        pytest.param(
            [
                P("TestPlugin1", post_filter_code=Code.ERROR, post_filter_result=N1),
                P("TestPlugin2", post_filter_code=Code.SUCCESS),
            ],
            Status(Code.ERROR, INJECT_REASON, plugin="TestPlugin1"),
            None,
            id="TestPostFilterPlugins/plugin1 errors: Error at once, no result",
        ),
        pytest.param(
            [P("TestPlugin1", post_filter_code=U), P("TestPlugin2", post_filter_code=UAU)],
            Status(UAU, INJECT_REASON, plugin="TestPlugin2"),
            None,
            id="TestPostFilterPlugins/plugin2 makes the Pod unresolvable",
        ),
        pytest.param(
            [P("TestPlugin1", post_filter_code=U), P("TestPlugin2", post_filter_code=U)],
            Status(U, INJECT_REASON, INJECT_REASON, plugin="TestPlugin1"),
            None,
            id="TestPostFilterPlugins/both plugins failed: reasons appended, first rejector",
        ),
        pytest.param(
            [
                P("A", post_filter_code=U, post_filter_result=N1),
                P("B", post_filter_code=U, post_filter_result=None),
            ],
            Status(U, INJECT_REASON, INJECT_REASON, plugin="A"),
            N1,
            id="Unschedulable keeps the last non-noop result when a later plugin has none",
        ),
        pytest.param(
            [
                P("A", post_filter_code=U, post_filter_result=N1),
                P("B", post_filter_code=U, post_filter_result=NOOP),
            ],
            Status(U, INJECT_REASON, INJECT_REASON, plugin="A"),
            N1,
            id="a noop result does not replace a nomination",
        ),
        pytest.param(
            [
                P("A", post_filter_code=U, post_filter_result=N1),
                P("B", post_filter_code=U, post_filter_result=N2),
            ],
            Status(U, INJECT_REASON, INJECT_REASON, plugin="A"),
            N2,
            id="the last non-noop result wins",
        ),
        pytest.param(
            [
                P("A", post_filter_code=U, post_filter_reasons=("a1", "a2")),
                P("B", post_filter_code=U, post_filter_reasons=("b",)),
            ],
            Status(U, "a1", "a2", "b", plugin="A"),
            None,
            id="every reason of every rejecting plugin is kept in order",
        ),
        pytest.param(
            [
                P("A", post_filter_code=U, post_filter_result=N1),
                P("B", post_filter_code=UAU, post_filter_result=None),
            ],
            Status(UAU, INJECT_REASON, plugin="B"),
            None,
            id="UnschedulableAndUnresolvable returns its own result, dropping earlier ones",
        ),
        pytest.param(
            [],
            Status(U),
            None,
            id="no PostFilter plugins: Unschedulable without reasons",
        ),
    ],
)
def test_run_post_filter_plugins(
    plugins: list[InjectedPlugin], want: Status, want_result: PostFilterResult | None
) -> None:
    result, status = fw_with(POST_FILTER, plugins).run_post_filter_plugins(
        CycleState(), some_pod(), NodeToStatus()
    )
    assert (status.code, status.reasons) == (want.code, want.reasons)
    if want.plugin:
        assert status.plugin == want.plugin
    assert result == want_result
    if len(plugins) == 2 and plugins[0].post_filter_code in (Code.SUCCESS, Code.ERROR, UAU):
        assert plugins[1].calls["post_filter"] == 0


# --------------------------------------------------------------------------- nominated pods

LOW = make_pod("low").uid("low").priority(0).obj()
HIGH = make_pod("high").uid("high").priority(1000).obj()
EXISTING = make_pod("existing").uid("existing").node(NODE_NAME).obj()


def nominated_fw(
    pre_filter: InjectedPlugin | None,
    filt: InjectedPlugin | None,
    nominated: Sequence[tuple[str, int]] = (),
) -> Framework:
    points: dict[str, list[str]] = {PRE_FILTER: [], FILTER: []}
    plugins: list[InjectedPlugin] = []
    if pre_filter is not None:
        points[PRE_FILTER].append(pre_filter.name)
        plugins.append(pre_filter)
    if filt is not None:
        points[FILTER].append(filt.name)
        plugins.append(filt)
    nominator = FakeNominator()
    for name, prio in nominated:
        nominator.nominate(make_pod(name).uid(name).priority(prio).obj(), NODE_NAME)
    return build_framework(profile(points), instance_registry(*plugins), nominator=nominator)


def node_info() -> NodeInfo:
    return make_node(NODE_NAME).capacity(cpu="4", pods=10).info(EXISTING)


@pytest.mark.parametrize(
    ("pre_filter", "filt", "pod", "nominated", "want"),
    [
        pytest.param(
            None,
            None,
            LOW,
            [],
            SUCCESS,
            id="TestFilterPluginsWithNominatedPods/node has no nominated pod",
        ),
        pytest.param(
            P("TestPlugin1"),
            P("TestPlugin2"),
            LOW,
            [("high", 1000)],
            SUCCESS,
            id="TestFilterPluginsWithNominatedPods/high-priority nominated pod, filters succeed",
        ),
        pytest.param(
            P("TestPlugin1", add_pod_code=Code.ERROR),
            None,
            LOW,
            [("high", 1000)],
            Status(Code.ERROR, 'running AddPod on PreFilter plugin "TestPlugin1": injected status'),
            id="TestFilterPluginsWithNominatedPods/high-priority nominated pod, pre filters fail",
        ),
        pytest.param(
            P("TestPlugin1"),
            P("TestPlugin2", filter_code=Code.ERROR),
            LOW,
            [("high", 1000)],
            wrapped("TestPlugin2"),
            id="TestFilterPluginsWithNominatedPods/high-priority nominated pod, filters fail",
        ),
        pytest.param(
            P("TestPlugin1", add_pod_code=U),
            P("TestPlugin2"),
            HIGH,
            [("low", 0)],
            SUCCESS,
            id="TestFilterPluginsWithNominatedPods/low-priority nominated pod is not added",
        ),
    ],
)
def test_filter_plugins_with_nominated_pods(
    pre_filter: InjectedPlugin | None,
    filt: InjectedPlugin | None,
    pod: Pod,
    nominated: list[tuple[str, int]],
    want: Status,
) -> None:
    fwk = nominated_fw(pre_filter, filt, nominated)
    got = fwk.run_filter_plugins_with_nominated_pods(CycleState(), PodInfo(pod), node_info())
    assert (got.code, got.reasons) == (want.code, want.reasons)
    if want.plugin:
        assert got.plugin == want.plugin


WITH_NOM = frozenset({"existing", "nom"})
WITHOUT = frozenset({"existing"})


def has_nominated(node: NodeInfo) -> bool:
    return any(p.pod.name == "nom" for p in node.pods)


@pytest.mark.parametrize(
    ("pod_prio", "nominated", "rule", "want_code", "want_passes"),
    [
        pytest.param(10, [], None, Code.SUCCESS, [WITHOUT], id="no nominated pods: one pass"),
        pytest.param(
            10,
            [("nom", 5)],
            None,
            Code.SUCCESS,
            [WITHOUT],
            id="lower priority: not added, one pass",
        ),
        pytest.param(
            10,
            [("nom", 10)],
            None,
            Code.SUCCESS,
            [WITH_NOM, WITHOUT],
            id="equal priority counts (>=): two passes",
        ),
        pytest.param(
            10,
            [("nom", 11)],
            None,
            Code.SUCCESS,
            [WITH_NOM, WITHOUT],
            id="higher priority: pass 1 with it, pass 2 without it",
        ),
        pytest.param(
            10,
            [("nom", 11)],
            has_nominated,
            U,
            [WITH_NOM],
            id="pass 1 fails: no pass 2, pass-1 status returned",
        ),
        pytest.param(
            10,
            [("nom", 11)],
            lambda n: not has_nominated(n),
            U,
            [WITH_NOM, WITHOUT],
            id="pass 2 fails (affinity-like): its status is returned",
        ),
        pytest.param(
            10,
            [("self", 10)],
            None,
            Code.SUCCESS,
            [WITHOUT],
            id="the pod itself nominated here is not added",
        ),
        pytest.param(
            10,
            [("lower", 1), ("nom", 99), ("lower2", 9)],
            None,
            Code.SUCCESS,
            [WITH_NOM, WITHOUT],
            id="only the >= priority ones of several are added",
        ),
    ],
)
def test_nominated_pods_two_passes(
    pod_prio: int,
    nominated: list[tuple[str, int]],
    rule: Callable[[NodeInfo], bool] | None,
    want_code: Code,
    want_passes: list[frozenset[str]],
) -> None:
    pre = P("Pre")
    filt = P("Filt", filter_code=U, filter_rule=rule or (lambda n: False))
    fwk = nominated_fw(pre, filt, nominated)
    pod = make_pod("self").uid("self").priority(pod_prio).info()
    info = node_info()
    state = CycleState()
    got = fwk.run_filter_plugins_with_nominated_pods(state, pod, info)
    assert got.code == want_code
    assert filt.filter_saw == want_passes
    # Pass 1 works on copies: the caller's NodeInfo and CycleState are untouched,
    # and AddPod saw the node with the nominated pod already added.
    assert {p.pod.name for p in info.pods} == {"existing"}
    assert state.get("added/Pre") is None
    if len(want_passes) == 2 or (want_passes and "nom" in want_passes[0]):
        assert pre.add_pod_saw == [WITH_NOM]


def test_nominated_pods_skip_the_add_pod_of_skipped_pre_filter_plugins() -> None:
    pre = P("Pre", pre_filter_code=Code.SKIP, add_pod_code=Code.ERROR)
    filt = P("Filt")
    fwk = nominated_fw(pre, filt, [("nom", 100)])
    state = CycleState()
    pod = make_pod("self").uid("self").priority(1).info()
    fwk.run_pre_filter_plugins(state, pod)
    got = fwk.run_filter_plugins_with_nominated_pods(state, pod, node_info())
    assert got.is_success()
    assert pre.calls["add_pod"] == 0


# --------------------------------------------------------------------------- PreScore / Score


@pytest.mark.parametrize(
    ("codes", "want_skipped", "want_error"),
    [
        pytest.param(
            {"success1": Code.SUCCESS, "success2": Code.SUCCESS},
            set(),
            None,
            id="TestRunPreScorePlugins/all PreScorePlugins returned success",
        ),
        pytest.param(
            {"success": Code.SUCCESS, "error": Code.ERROR},
            None,
            'running PreScore plugin "error": injected status',
            id="TestRunPreScorePlugins/one success, one non-success",
        ),
        pytest.param(
            {"skip": Code.SKIP, "error": Code.ERROR},
            None,
            'running PreScore plugin "error": injected status',
            id="TestRunPreScorePlugins/one skip, one non-success",
        ),
        pytest.param(
            {"skip1": Code.SKIP, "skip2": Code.SKIP, "skip3": Code.SKIP},
            {"skip1", "skip2", "skip3"},
            None,
            id="TestRunPreScorePlugins/all PreScore plugins returned skip",
        ),
        pytest.param(
            {
                "skip1": Code.SKIP,
                "success1": Code.SUCCESS,
                "skip2": Code.SKIP,
                "success2": Code.SUCCESS,
            },
            {"skip1", "skip2"},
            None,
            id="TestRunPreScorePlugins/some PreScore plugins returned skip",
        ),
    ],
)
def test_run_pre_score_plugins(
    codes: dict[str, Code], want_skipped: set[str] | None, want_error: str | None
) -> None:
    plugins = [P(name, pre_score_code=code) for name, code in codes.items()]
    fwk = fw_with(PRE_SCORE, plugins)
    state = CycleState()
    nodes = two_nodes()
    if want_error is not None:
        with pytest.raises(ScoreError) as exc:
            fwk.run_pre_score_plugins(state, some_pod(), nodes)
        assert str(exc.value) == want_error
    else:
        fwk.run_pre_score_plugins(state, some_pod(), nodes)
    if want_skipped is not None:
        assert state.skip_score_plugins == frozenset(want_skipped)


def two_nodes() -> NodeSet:
    table = build_table([make_node("node1").obj(), make_node("node2").obj()])
    return NodeSet(table, np.array([table.row_of["node1"], table.row_of["node2"]], dtype=np.int64))


S1 = "score-plugin-1"
SN1 = "score-with-normalize-plugin-1"
SN2 = "score-with-normalize-plugin-2"
DEFAULT_WEIGHTS = {S1: 1, SN1: 1, SN2: 2}


def run_scores(
    plugins: Sequence[InjectedPlugin],
    skipped: frozenset[str] | set[str] = frozenset(),
) -> tuple[list[int], dict[str, list[int]]]:
    prof = profile({SCORE: [(p.name, DEFAULT_WEIGHTS.get(p.name, 1)) for p in plugins]})
    fwk = build_framework(prof, instance_registry(*plugins))
    state = CycleState()
    state.skip_score_plugins = frozenset(skipped)
    total, per = fwk.run_score_plugins(state, some_pod(), two_nodes())
    return total.tolist(), {k: v.tolist() for k, v in per.items()}


@pytest.mark.parametrize(
    ("plugins", "skipped", "want_total", "want_per_plugin"),
    [
        pytest.param([], set(), [0, 0], {}, id="TestRunScorePlugins/no Score plugins"),
        pytest.param(
            [P(S1, score_value=1)],
            set(),
            [1, 1],
            {S1: [1, 1]},
            id="TestRunScorePlugins/single Score plugin",
        ),
        pytest.param(
            [P(SN1, score_value=10, normalize_to=5)],
            set(),
            [5, 5],
            {SN1: [5, 5]},
            id="TestRunScorePlugins/single ScoreWithNormalize plugin",
        ),
        pytest.param(
            [
                P(S1, score_value=1),
                P(SN1, score_value=3, normalize_to=4),
                P(SN2, score_value=4, normalize_to=5),
            ],
            set(),
            [15, 15],
            {S1: [1, 1], SN1: [4, 4], SN2: [10, 10]},
            id="TestRunScorePlugins/3 Score plugins, 2 NormalizeScore plugins (weight 2)",
        ),
        pytest.param(
            [P(S1, score_value=1), P(SN1, score_code=Code.ERROR)],
            {SN1},
            [1, 1],
            {S1: [1, 1]},
            id="TestRunScorePlugins/one success plugin, one skip plugin",
        ),
        pytest.param(
            [P(S1, score_code=Code.ERROR)],
            {S1},
            [0, 0],
            {},
            id="TestRunScorePlugins/all plugins are skipped in prescore",
        ),
        pytest.param(
            [P(S1, score_value=1)],
            {S1, "score-plugin-unknown"},
            [0, 0],
            {},
            id="TestRunScorePlugins/skipped prescore plugins outnumber score plugins",
        ),
    ],
)
def test_run_score_plugins(
    plugins: list[InjectedPlugin],
    skipped: set[str],
    want_total: list[int],
    want_per_plugin: dict[str, list[int]],
) -> None:
    total, per = run_scores(plugins, skipped)
    assert total == want_total
    assert per == want_per_plugin
    for p in plugins:
        if p.name in skipped:
            assert p.calls["score"] == 0


def test_score_weight_zero_means_one() -> None:
    """upstream NewFramework: a Score plugin configured without weight gets weight 1."""
    plugin = P("w0", score_value=7)
    fwk = build_framework(profile({SCORE: [("w0", 0)]}), instance_registry(plugin))
    total, _ = fwk.run_score_plugins(CycleState(), some_pod(), two_nodes())
    assert total.tolist() == [7, 7]


SCORE_FAILURES = [
    pytest.param(
        [P(S1), P(SN1, score_code=Code.ERROR, normalize_to=1)],
        f'running Score plugins: plugin "{SN1}" failed with: injected status',
        id="TestRunScorePlugins/score fails",
    ),
    pytest.param(
        [P(S1), P(SN1, normalize_to=1, normalize_code=Code.ERROR)],
        f'running Normalize on Score plugins: plugin "{SN1}" failed with: injected status',
        id="TestRunScorePlugins/normalize fails",
    ),
    pytest.param(
        [P(S1, score_value=101)],
        "applying score defaultWeights on Score plugins: "
        f'plugin "{S1}" returns an invalid score 101, it should in the range of [0, 100] '
        "after normalizing",
        id="TestRunScorePlugins/Score plugin return score greater than MaxNodeScore",
    ),
    pytest.param(
        [P(S1, score_value=-1)],
        "applying score defaultWeights on Score plugins: "
        f'plugin "{S1}" returns an invalid score -1, it should in the range of [0, 100] '
        "after normalizing",
        id="TestRunScorePlugins/Score plugin return score less than MinNodeScore",
    ),
    pytest.param(
        [P(SN1, normalize_to=101)],
        "applying score defaultWeights on Score plugins: "
        f'plugin "{SN1}" returns an invalid score 101, it should in the range of [0, 100] '
        "after normalizing",
        id="TestRunScorePlugins/ScoreWithNormalize plugin return score greater than MaxNodeScore",
    ),
    pytest.param(
        [P(SN1, normalize_to=-1)],
        "applying score defaultWeights on Score plugins: "
        f'plugin "{SN1}" returns an invalid score -1, it should in the range of [0, 100] '
        "after normalizing",
        id="TestRunScorePlugins/ScoreWithNormalize plugin return score less than MinNodeScore",
    ),
]


@pytest.mark.parametrize(("plugins", "upstream_message"), SCORE_FAILURES)
def test_score_failure_messages_match_upstream(
    plugins: list[InjectedPlugin], upstream_message: str
) -> None:
    with pytest.raises(ScoreError) as exc:
        run_scores(plugins)
    assert str(exc.value) == upstream_message


class VectorScored:
    """Per-node score 1, vector score 2: shows which path ran."""

    name = "VectorScored"

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        return 1, SUCCESS

    def score_extensions(self) -> None:
        return None

    def score_vector(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> IntArray:
        return np.full(len(nodes), 2, dtype=np.int64)


@pytest.mark.parametrize(("per_node", "want"), [(False, [2, 2]), (True, [1, 1])])
def test_per_node_selects_the_per_node_score_path(per_node: bool, want: list[int]) -> None:
    plugin = VectorScored()
    fwk = build_framework(profile({SCORE: ["VectorScored"]}), instance_registry(plugin))
    fwk.per_node = per_node
    total, _ = fwk.run_score_plugins(CycleState(), some_pod(), two_nodes())
    assert total.tolist() == want


# --------------------------------------------------------------------------- construction


def test_enabled_plugin_missing_from_the_registry_fails() -> None:
    """TestInitFrameworkWithScorePlugins/enabled Score plugin doesn't exist in registry."""
    with pytest.raises(KeyError):
        build_framework(profile({SCORE: ["notExist"]}), {})


class NotAScorePlugin:
    name = "plugin-not-implementing-score"


def test_enabled_plugin_not_implementing_the_point_fails() -> None:
    """TestInitFrameworkWithScorePlugins/enabled Score plugin doesn't extend the ScorePlugin
    interface."""
    with pytest.raises(Exception, match="does not extend"):
        build_framework(
            profile({SCORE: ["plugin-not-implementing-score"]}),
            instance_registry(NotAScorePlugin()),
        )


def test_a_plugin_enabled_at_several_points_is_built_once() -> None:
    plugin = P("multi")
    built: list[str] = []

    def factory(args: object, handle: Framework) -> InjectedPlugin:
        built.append("multi")
        return plugin

    fwk = build_framework(
        profile({PRE_FILTER: ["multi"], FILTER: ["multi"], SCORE: [("multi", 3)]}),
        {"multi": factory},
    )
    assert built == ["multi"]
    assert fwk.pre_filter_plugins == [plugin]
    assert fwk.filter_plugins == [plugin]
    assert fwk.score_weights == {"multi": 3}
