"""Framework: building plugins from a profile and running its own points.

Re-expresses upstream's pkg/scheduler/framework/runtime/framework_test.go
(TestRunPreFilterPlugins, TestPostFilterPlugins, TestInitFrameworkWithScorePlugins)
with small fake plugins whose results are injected per case
(``tests/runtime/injected.py``), plus the runner facts upstream relies on
elsewhere (PreFilterResult merging and its "simultaneously" message). The
Filter point is tested in ``test_filtering.py`` and ``test_nominated_pods.py``,
PreScore/Score in ``test_scoring.py``.
"""

from __future__ import annotations

import pytest

from kubesched.framework.config import (
    FILTER,
    POST_FILTER,
    PRE_FILTER,
    SCORE,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.results import (
    NodeToStatus,
    NominatingInfo,
    NominatingMode,
    PostFilterResult,
    PreFilterResult,
)
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.runtime.framework import Framework
from tests.runtime.injected import (
    INJECT_REASON,
    UAU,
    InjectedPlugin,
    P,
    U,
    fw_with,
    sig,
    some_pod,
)
from tests.scheduler.harness import build_framework, instance_registry, profile

# --------------------------------------------------------------------------- PreFilter


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
