"""Filtering (runtime/filtering.py): the Filter point with nominated pods.

Re-expresses upstream's framework_test.go TestFilterPluginsWithNominatedPods
with the injected fake plugin (``tests/runtime/injected.py``), plus the two
nominated-pod passes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from kubesched.api.types import Pod
from kubesched.framework.config import (
    FILTER,
    PRE_FILTER,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.framework import Framework
from tests.builders import make_node, make_pod
from tests.fakes import FakeNominator
from tests.runtime.injected import (
    NODE_NAME,
    InjectedPlugin,
    P,
    U,
    wrapped,
)
from tests.scheduler.harness import build_framework, instance_registry, profile

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
