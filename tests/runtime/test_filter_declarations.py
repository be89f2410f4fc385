"""The runtime reads what a filter declares, never its name (runtime/filtering.py).

``StaticFilterPlugin``, ``SpecDeterminedFilterPlugin`` and the what-if forms
(``WhatIfFilterPlugin``, ``WhatIfRowFilterPlugin``)
are resolved once per framework (``FilterForms``); the what-if runners and
``what_if_supported`` / ``what_if_spec_determined`` follow them for any plugin,
in-tree or not. The in-tree declarations are pinned: they are the filters the
runtime named before the declarations existed, so no decision moved.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from kubesched.framework.config import FILTER
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    FilterPlugin,
    StaticFilterPlugin,
    Verdicts,
    WhatIfFilterPlugin,
    is_spec_determined_filter,
)
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.reads import DerivedFilterPlugin
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.derived_forms import FilterForms
from kubesched.runtime.framework import Framework
from kubesched.scheduler.registry import in_tree_registry
from tests.builders import build_table, make_node, make_pod
from tests.scheduler.harness import build_framework, in_tree_profile, instance_registry, profile

ODD = Status(Code.UNSCHEDULABLE, "odd row")
SMALL = Status(Code.UNSCHEDULABLE, "too little room")


class OddRows:
    """A static filter (not named as any in-tree plugin): rejects odd rows."""

    static_filter = True

    def __init__(self, name: str, *, spec_determined: bool) -> None:
        self.name = name
        if spec_determined:
            self.spec_determined_filter = True
        self.calls: Counter[str] = Counter()

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        return SUCCESS

    def filter_vector(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts:
        self.calls["filter_vector"] += 1
        return Verdicts(
            np.where(np.arange(table.capacity) % 2 == 1, 0, -1).astype(np.int32), (ODD,)
        )


class Room:
    """A what-if filter: a row passes when its summed requests' first column is
    below 10. ``one_row`` adds the optional one-row what-if form."""

    def __init__(self, name: str, *, one_row: bool = False) -> None:
        self.name = name
        self.spec_determined_filter = True
        self.calls: Counter[str] = Counter()
        if one_row:
            self.filter_what_if_row = self._one_row

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        return SUCCESS

    def filter_what_if(
        self, state: CycleState, pod: PodInfo, rows: IntArray, requested: IntArray
    ) -> Verdicts:
        self.calls["filter_what_if"] += 1
        return Verdicts(np.where(requested[:, 0] >= 10, 0, -1).astype(np.int32), (SMALL,))

    def _one_row(self, state: CycleState, pod: PodInfo, row: int, requested: list[int]) -> Status:
        self.calls["filter_what_if_row"] += 1
        return SUCCESS if requested[0] < 10 else SMALL


class PerNodeOnly:
    """A filter with neither a vectorised nor a what-if form."""

    name = "PerNodeOnly"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        return SUCCESS


def framework(*plugins: FilterPlugin) -> Framework:
    table = build_table([make_node(f"n{i}").capacity(cpu="4", pods=110).obj() for i in range(4)])
    names = [p.name for p in plugins]
    return build_framework(profile({FILTER: names}), instance_registry(*plugins), table=table)


def cycle(fwk: Framework) -> tuple[CycleState, PodInfo]:
    state = CycleState()
    pod = make_pod("p").info()
    _, s, _ = fwk.run_pre_filter_plugins(state, pod)
    assert s.is_success()
    return state, pod


def test_in_tree_declarations_are_the_filters_the_runtime_used_to_name() -> None:
    fwk = build_framework(in_tree_profile(), in_tree_registry())
    derived = {p.name for p in fwk.filter_plugins if isinstance(p, DerivedFilterPlugin)}
    static = {p.name for p in fwk.filter_plugins if isinstance(p, StaticFilterPlugin)}
    spec = {p.name for p in fwk.filter_plugins if is_spec_determined_filter(p)}
    assert derived == {
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
    }
    assert static == {"DynamicResources"}
    assert spec == {"NodeResourcesFit"}
    for p in fwk.filter_plugins:
        forms = FilterForms.of(p)
        assert (forms.static_vector is not None) == (p.name in static | derived)
        assert forms.spec_determined == (p.name in spec | derived)


def test_derived_filters_are_static_for_a_pod_as_their_reads_say() -> None:
    """Static and spec-determined: the filters the runtime used to name, for a pod
    without host ports; a pod with host ports makes NodePorts' reads depend on
    the nodes' pods, which rules the what-if path out (as it always did)."""
    fwk = build_framework(in_tree_profile(), in_tree_registry())
    state = CycleState()
    pod = make_pod("p").node_selector(zone="a").info()
    _, s, _ = fwk.run_pre_filter_plugins(state, pod)
    assert s.is_success()
    assert fwk.static_filters(state, pod) == {
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
    }
    assert fwk.what_if_supported(state, pod)
    assert fwk.what_if_spec_determined(state, pod)

    state = CycleState()
    pod = make_pod("ports").host_port(8080).info()
    _, s, _ = fwk.run_pre_filter_plugins(state, pod)
    assert s.is_success()
    assert "NodePorts" not in state.skip_filter_plugins
    assert "NodePorts" not in fwk.static_filters(state, pod)
    assert not fwk.what_if_supported(state, pod)
    assert not fwk.what_if_spec_determined(state, pod)


@pytest.mark.parametrize(
    ("static_declares", "want"), [(True, True), (False, False)], ids=["declared", "undeclared"]
)
def test_spec_determined_follows_the_declarations(static_declares: bool, want: bool) -> None:
    fwk = framework(OddRows("Odd", spec_determined=static_declares), Room("Room"))
    state, pod = cycle(fwk)
    assert fwk.what_if_supported(state, pod)
    assert fwk.what_if_spec_determined(state, pod) is want


def test_a_filter_without_a_what_if_form_rules_the_what_if_path_out() -> None:
    fwk = framework(OddRows("Odd", spec_determined=True), PerNodeOnly())
    state, pod = cycle(fwk)
    assert not fwk.what_if_supported(state, pod)
    assert not fwk.what_if_spec_determined(state, pod)
    rows = np.arange(4, dtype=np.int64)
    assert fwk.run_filter_what_if(state, pod, rows, np.zeros((4, 1), dtype=np.int64)) is None
    assert fwk.filter_rows(state, pod, rows, {}) is None


@pytest.mark.parametrize("forms", [False, True], ids=["filter_what_if only", "every form"])
def test_the_what_if_runners_use_the_declared_forms(forms: bool) -> None:
    odd = OddRows("Odd", spec_determined=True)
    room = Room("Room", one_row=forms)
    fwk = framework(odd, room)
    assert (FilterForms.of(room).row is not None) is forms
    assert isinstance(room, WhatIfFilterPlugin)
    state, pod = cycle(fwk)
    rows = np.arange(4, dtype=np.int64)
    requested = np.array([[0], [0], [20], [5]], dtype=np.int64)

    answer = fwk.run_filter_what_if(state, pod, rows, requested)
    assert answer is not None
    index, statuses = answer
    assert [statuses[i].reasons[0] if i >= 0 else "" for i in index.tolist()] == [
        "",
        "odd row",
        "too little room",
        "odd row",
    ]
    assert [s.plugin for s in statuses] == ["Odd", "Room"]
    one = fwk.run_filter_what_if_row(state, pod, 2, requested[2])
    assert one is not None
    assert (one.reasons, one.plugin) == (("too little room",), "Room")

    # The static filter's verdicts are read once for the cycle.
    assert odd.calls["filter_vector"] == 1
    if forms:
        assert room.calls == {"filter_what_if": 1, "filter_what_if_row": 1}
    else:
        assert room.calls == {"filter_what_if": 2}


def test_pods_of_one_spec_with_other_node_names_get_their_own_what_if_answer() -> None:
    """The what-if steps kept across the pods of one spec also key on
    ``spec.nodeName``: NodeName reads it and it is not part of the spec (found by
    the generic paths test)."""
    table = build_table([make_node(n).capacity(cpu="4", pods=110).obj() for n in ("n0", "n1")])
    fwk = build_framework(in_tree_profile(), in_tree_registry(), table=table)
    first = make_pod("a").info()
    rows = np.array([r for r, n in enumerate(table.names) if n], dtype=np.int64)
    answers = []
    for name, node in (("a", "n0"), ("b", "n1")):
        twin = first.pod.copy()
        twin.name, twin.uid, twin.node_name = name, name, node
        info = PodInfo(twin)
        assert info.pod.spec is first.pod.spec
        state = CycleState()
        _, s, _ = fwk.run_pre_filter_plugins(state, info)
        assert s.is_success()
        assert fwk.what_if_spec_determined(state, info)
        answer = fwk.run_filter_what_if(state, info, rows, table.requested[rows])
        assert answer is not None
        index, statuses = answer
        answers.append(
            {
                table.names[r]: statuses[i].plugin if i >= 0 else ""
                for r, i in zip(rows.tolist(), index.tolist(), strict=True)
            }
        )
    assert answers[0]["n0"] == "" and answers[0]["n1"] == "NodeName"
    assert answers[1]["n1"] == "" and answers[1]["n0"] == "NodeName"
