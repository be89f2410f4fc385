"""CycleState.clone: every value as its ``clone()`` gives it (a copy for mutable
states, the value itself for states that declare they never change), the skip
sets carried over; a value without ``clone`` fails instead of being shared."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeSet
from kubesched.framework.types import PodInfo
from kubesched.scheduler.cache import Cache
from kubesched.scheduler.registry import in_tree_registry
from tests.builders import make_node, make_pod, selector
from tests.fakes import FakeNominator
from tests.scheduler.harness import build_framework, in_tree_profile


@dataclass
class Counter:
    """A state AddPod changes: cloned as a copy."""

    seen: list[str] = field(default_factory=list)

    def clone(self) -> Counter:
        return Counter(list(self.seen))


@dataclass(frozen=True)
class Fixed:
    """A state that never changes: declares it by returning itself."""

    value: int

    def clone(self) -> Fixed:
        return self


def test_clone_copies_mutable_states_and_shares_the_others() -> None:
    state = CycleState()
    counter, fixed = Counter(["a"]), Fixed(3)
    state.write("counter", counter)
    state.write("fixed", fixed)
    state.skip_filter_plugins = frozenset({"NodePorts"})
    copy = state.clone()
    got = copy.read("counter")
    assert isinstance(got, Counter)
    got.seen.append("b")
    assert counter.seen == ["a"] and got.seen == ["a", "b"]
    assert copy.read("fixed") is fixed
    assert copy.skip_filter_plugins == frozenset({"NodePorts"})


def test_a_value_without_clone_is_refused_when_cloned() -> None:
    """Nothing is shared by accident: a value must declare how it is cloned."""
    state = CycleState()
    state.write("plain", ["not", "state", "data"])
    with pytest.raises(AttributeError):
        state.clone()


def test_every_in_tree_state_declares_its_clone() -> None:
    """The states the default profile's PreFilter and PreScore write (a pod that
    makes every one of them write: requests, a host port, node affinity, a
    toleration, pod affinity, topology spread), and the runtime's per-cycle
    what-if memo, are all StateData, so the nominated-pods pass and the
    per-node dry run can clone them."""
    cache = Cache()
    for i in range(4):
        node = make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods=110)
        cache.add_node(node.label("zone", f"z{i % 2}").label("disk", "ssd").obj())
    cache.add_pod(make_pod("web-0").label("app", "web").req(cpu="1").node("n0").obj())
    fwk = build_framework(
        in_tree_profile(), in_tree_registry(), table=cache.table, nominator=FakeNominator()
    )
    pod = PodInfo(
        make_pod("p")
        .label("app", "web")
        .req(cpu="1", memory="1Gi")
        .host_port(8080)
        .node_affinity_in("disk", "ssd")
        .toleration("dedicated", "x", "NoSchedule")
        .pod_affinity("zone", selector(app="web"), weight=5)
        .spread(1, "zone", "DoNotSchedule", selector(app="web"))
        .spread(1, "zone", "ScheduleAnyway", selector(app="web"))
        .obj()
    )
    state = CycleState()
    _, status, _ = fwk.run_pre_filter_plugins(state, pod)
    assert status.is_success()
    rows = np.array(sorted(cache.table.row_of.values()), dtype=np.int64)
    fwk.run_pre_score_plugins(state, pod, NodeSet(cache.table, rows))
    # The runtime's own per-cycle memo (the what-if steps) is kept there too.
    fwk.run_filter_what_if(state, pod, rows, cache.table.requested[rows])
    assert len(state._data) >= 7  # most plugins wrote a state, and the runtime
    copy = state.clone()
    assert copy._data.keys() == state._data.keys()
