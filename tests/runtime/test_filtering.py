"""Filtering (runtime/filtering.py): the Filter point per node and the PreFilter
extensions' AddPod/RemovePod runners.

Re-expresses upstream's framework_test.go TestRunPreFilterExtensionAddPod /
RemovePod and TestFilterPlugins with the injected fake plugin
(``tests/runtime/injected.py``).
"""

from __future__ import annotations

import pytest

from kubesched.framework.config import (
    FILTER,
    PRE_FILTER,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import SUCCESS, Code, Status
from tests.builders import make_node, make_pod
from tests.runtime.injected import (
    INJECT_FILTER_REASON,
    UAU,
    InjectedPlugin,
    P,
    U,
    fw_with,
    sig,
    some_pod,
    wrapped,
)

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
