"""Property: the incremental vector paths of NodeResourcesFit and
NodeResourcesBalancedAllocation stay exact while the cluster changes.

The Filter keeps, per resource plan, the status of every table slot
(``framework.resources.ResourceFit``) and the scorers keep every slot's score
(``RowScoreCache``); both are brought up to date from the table's change log.
Here a random sequence of cluster changes (pods bound, assumed, confirmed,
forgotten and removed; nodes added, updated and removed) runs through the
scheduler cache, and after every change ``filter_rows``, ``filter_vector``,
``score_vector`` and ``score_slots`` must give exactly the per-node answers.
Each check runs twice, so that the caches (built when a request comes back)
are both built and updated."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.types import Node, Pod, PodSpec
from kubesched.framework.config import (
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeSet
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.noderesources import BalancedAllocation, Fit
from kubesched.scheduler.cache import Cache
from tests.fakes import FakeHandle
from tests.hypothesis_profiles import scaled
from tests.plugins.noderesources.test_vector_equivalence import (
    NODE_ALLOCATABLE,
    balanced_args,
    fit_args,
    pod_specs,
)

OPS = ("bind", "assume", "confirm", "forget", "remove", "node_update", "node_remove", "node_add")


@dataclass
class Scenario:
    nodes: list[dict[str, int]]
    specs: list[PodSpec]
    ops: list[tuple[str, int, int, dict[str, int]]]
    """(op, spec or pod index, node index, allocatable for node ops)."""


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    nodes = draw(st.lists(NODE_ALLOCATABLE, min_size=1, max_size=6))
    specs = draw(st.lists(pod_specs(), min_size=1, max_size=3))
    ops = draw(
        st.lists(
            st.tuples(
                st.sampled_from(OPS),
                st.integers(0, 30),
                st.integers(0, 7),
                NODE_ALLOCATABLE,
            ),
            max_size=14,
        )
    )
    return Scenario(nodes, specs, ops)


class World:
    """A scheduler cache driven like the scheduler drives it."""

    def __init__(self, scenario: Scenario) -> None:
        self.cache = Cache()
        self.nodes: dict[str, Node] = {}
        self.bound: list[Pod] = []
        self.assumed: list[PodInfo] = []
        self.specs = scenario.specs
        self.seq = 0
        for alloc in scenario.nodes:
            self.add_node(alloc)

    def add_node(self, alloc: dict[str, int]) -> None:
        node = Node(f"n{len(self.nodes)}-{self.seq}", allocatable=alloc)
        self.seq += 1
        self.nodes[node.name] = node
        self.cache.add_node(node)

    def node_name(self, i: int) -> str | None:
        names = sorted(self.nodes)
        return names[i % len(names)] if names else None

    def new_pod(self, spec_i: int, node: str) -> Pod:
        self.seq += 1
        return Pod(f"p{self.seq}", spec=self.specs[spec_i % len(self.specs)], node_name=node)

    def apply(self, op: str, a: int, b: int, alloc: dict[str, int]) -> None:
        node = self.node_name(b)
        if op == "bind" and node is not None:
            pod = self.new_pod(a, node)
            self.cache.add_pod(pod)
            self.bound.append(pod)
        elif op == "assume" and node is not None:
            pi = PodInfo(self.new_pod(a, node))
            self.cache.assume_pod(pi, node)
            self.assumed.append(pi)
        elif op in ("confirm", "forget") and self.assumed:
            pi = self.assumed.pop(a % len(self.assumed))
            if op == "forget":
                self.cache.forget_pod(pi.pod)
            else:
                # The cluster's copy of the bound pod (a new object, same spec).
                pod = Pod(pi.pod.name, spec=pi.pod.spec, uid=pi.pod.uid, node_name=pi.pod.node_name)
                self.cache.add_pod(pod)
                self.bound.append(pod)
        elif op == "remove" and self.bound:
            pod = self.bound.pop(a % len(self.bound))
            if pod.node_name in self.nodes:
                self.cache.remove_pod(pod)
        elif op == "node_update" and node is not None:
            old = self.nodes[node]
            new = Node(node, allocatable=alloc)
            self.nodes[node] = new
            self.cache.update_node(old, new)
        elif op == "node_remove" and node is not None and len(self.nodes) > 1:
            gone = self.nodes.pop(node)
            self.cache.remove_node(gone)
            self.bound = [p for p in self.bound if p.node_name != node]
            self.assumed = [p for p in self.assumed if p.pod.node_name != node]
        elif op == "node_add":
            self.add_node(alloc)


def check_filter(table: NodeTable, plugin: Fit, pi: PodInfo) -> None:
    state = CycleState()
    plugin.pre_filter(state, pi, table)
    rows = table.order
    exact = []
    for r in rows.tolist():
        info = table.infos[r]
        assert info is not None
        exact.append(plugin.filter(state, pi, info))
    got = plugin.filter_rows(state, pi, table, rows)
    assert got is not None
    assert _statuses(got.index, got.statuses) == exact
    # A chunk in another order (the scan rotates).
    half = np.concatenate((rows[len(rows) // 2 :], rows[: len(rows) // 2]))
    got = plugin.filter_rows(state, pi, table, half)
    assert got is not None
    order = {r: i for i, r in enumerate(rows.tolist())}
    assert _statuses(got.index, got.statuses) == [exact[order[r]] for r in half.tolist()]
    whole = plugin.filter_vector(state, pi, table)
    assert whole is not None
    assert _statuses(whole.index[rows], whole.statuses) == exact


def _statuses(index: np.ndarray, statuses: Sequence[Status]) -> list[Status]:
    return [SUCCESS if i < 0 else statuses[i] for i in index.tolist()]


def check_scores(table: NodeTable, plugin: Fit | BalancedAllocation, pi: PodInfo) -> None:
    ns = NodeSet(table, table.order)
    state = CycleState()
    pre = plugin.pre_score(state, pi, ns)
    if pre.code == Code.SKIP:
        return
    exact = []
    for info in ns.infos:
        score, status = plugin.score(state, pi, info)
        assert status.is_success()
        exact.append(score)
    vector = plugin.score_vector(state, pi, ns)
    assert vector is not None
    assert vector.tolist() == exact
    slots = plugin.score_slots(state, pi, table)
    if slots is not None:
        assert slots[ns.rows].tolist() == exact


@settings(max_examples=scaled(150), deadline=None)
@given(scenario=scenarios(), fit=fit_args(), balanced=balanced_args())
def test_incremental_paths_follow_cluster_changes(
    scenario: Scenario,
    fit: NodeResourcesFitArgs,
    balanced: NodeResourcesBalancedAllocationArgs,
) -> None:
    world = World(scenario)
    fit_plugin, balanced_plugin = Fit(fit, FakeHandle()), BalancedAllocation(balanced)
    incoming = [PodInfo(Pod(f"in{i}", spec=s)) for i, s in enumerate(scenario.specs)]

    def check() -> None:
        table = world.cache.table
        for pi in incoming:
            for _ in range(2):
                check_filter(table, fit_plugin, pi)
                check_scores(table, fit_plugin, pi)
                check_scores(table, balanced_plugin, pi)

    check()
    for op in scenario.ops:
        world.apply(*op)
        check()


@settings(max_examples=scaled(100), deadline=None)
@given(scenario=scenarios(), fit=fit_args())
def test_one_row_what_if_matches_the_per_node_filter(
    scenario: Scenario, fit: NodeResourcesFitArgs
) -> None:
    """The plain-Python mask of one row (``ResourceFit.what_if_row``, the form the
    kept verdicts are updated with) on the table's requests equals the per-node
    Filter, for every live row after every cluster change."""
    world = World(scenario)
    plugin = Fit(fit, FakeHandle())
    incoming = [PodInfo(Pod(f"in{i}", spec=s)) for i, s in enumerate(scenario.specs)]

    def check() -> None:
        table = world.cache.table
        for pi in incoming:
            state = CycleState()
            plugin.pre_filter(state, pi, table)
            plan = plugin.resource_plan(state, pi)
            assert plan is not None
            for r in table.order.tolist():
                info = table.infos[r]
                assert info is not None
                got = plugin.resource_fit.what_if_row(plan, table, r, table.requested[r].tolist())
                assert got == plugin.filter(state, pi, info)

    check()
    for op in scenario.ops:
        world.apply(*op)
        check()


def test_table_free_matches_allocatable_minus_requested() -> None:
    """``NodeTable.free`` is maintained with ``allocatable`` and ``requested``."""
    world = World(Scenario([{"cpu": 1000, "memory": 2**30, "pods": 3}] * 3, [PodSpec()], ops=[]))
    for op in ("bind", "assume", "bind", "confirm", "node_update", "remove", "node_add"):
        world.apply(op, 1, 1, {"cpu": 500, "example.com/x": 2, "pods": 9})
        t = world.cache.table
        assert (t.free == t.allocatable - t.requested)[t.alive].all()
