"""Property: the vector paths of NodeResourcesFit (Filter, every scoring strategy)
and NodeResourcesBalancedAllocation give exactly the per-node statuses and
scores, over random tables (random allocatable, bound pods with random requests
including extended resources and explicit or missing zeros, removed nodes) and
random incoming pods and plugin arguments."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.types import Container, Node, Pod, PodSpec
from kubesched.framework.config import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeSet
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.noderesources import BalancedAllocation, Fit
from tests.builders import build_table, rows_named
from tests.fakes import FakeHandle
from tests.hypothesis_profiles import scaled

SCALARS = [
    "example.com/aaa",
    "example.com/bbb",
    "other.io/ccc",
    "hugepages-2Mi",
    "kubernetes.io/ddd",
]
ALL_RESOURCES = ["cpu", "memory", "ephemeral-storage", "pods", *SCALARS, "unknown"]


def _tight_or_roomy(tight: int, roomy: int) -> st.SearchStrategy[int]:
    """Amounts around what pods request (failures) or far above it (fits)."""
    return st.one_of(st.integers(0, tight), st.integers(roomy // 2, roomy))


NODE_AMOUNTS: dict[str, st.SearchStrategy[int]] = {
    "cpu": _tight_or_roomy(8000, 200_000),
    "memory": _tight_or_roomy(2**34, 2**40),
    "ephemeral-storage": _tight_or_roomy(10**11, 10**13),
    "pods": _tight_or_roomy(6, 110),
    **{n: _tight_or_roomy(8, 200) for n in SCALARS},
}
REQUEST_AMOUNTS: dict[str, st.SearchStrategy[int]] = {
    "cpu": st.integers(0, 3000),
    "memory": st.integers(0, 2**32),
    "ephemeral-storage": st.integers(0, 10**10),
    **{n: st.integers(0, 4) for n in SCALARS},
}
# Missing keys, explicit zeros and amounts all occur.
NODE_ALLOCATABLE = st.fixed_dictionaries({}, optional=NODE_AMOUNTS)
REQUESTS = st.fixed_dictionaries({}, optional=REQUEST_AMOUNTS)
CPU_MEMORY = st.fixed_dictionaries(
    {}, optional={"cpu": REQUEST_AMOUNTS["cpu"], "memory": REQUEST_AMOUNTS["memory"]}
)


@st.composite
def pod_specs(draw: st.DrawFn) -> PodSpec:
    containers = tuple(
        Container(f"c{i}", requests=r) for i, r in enumerate(draw(st.lists(REQUESTS, max_size=3)))
    )
    inits = tuple(
        Container(f"i{i}", requests=r, restart_policy=policy)
        for i, (r, policy) in enumerate(
            draw(st.lists(st.tuples(REQUESTS, st.sampled_from([None, "Always"])), max_size=2))
        )
    )
    overhead = draw(CPU_MEMORY) if draw(st.booleans()) else {}
    pod_level = draw(CPU_MEMORY) if draw(st.booleans()) else {}
    return PodSpec(
        containers=containers, init_containers=inits, overhead=overhead, resources=pod_level
    )


@st.composite
def shapes(draw: st.DrawFn) -> tuple[UtilizationShapePoint, ...]:
    utils = sorted(draw(st.lists(st.integers(0, 100), unique=True, min_size=1, max_size=4)))
    return tuple(UtilizationShapePoint(u, draw(st.integers(0, 10))) for u in utils)


@st.composite
def fit_args(draw: st.DrawFn) -> NodeResourcesFitArgs:
    names = draw(st.lists(st.sampled_from(ALL_RESOURCES), unique=True, min_size=1, max_size=5))
    resources = tuple(ResourceSpec(n, draw(st.integers(1, 100))) for n in names)
    kind = draw(st.sampled_from([LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO]))
    shape = draw(shapes()) if kind == REQUESTED_TO_CAPACITY_RATIO else ()
    ignored = tuple(draw(st.lists(st.sampled_from(SCALARS), unique=True, max_size=2)))
    groups = tuple(
        draw(
            st.lists(
                st.sampled_from(["example.com", "other.io", "kubernetes.io"]),
                unique=True,
                max_size=2,
            )
        )
    )
    return NodeResourcesFitArgs(ignored, groups, ScoringStrategy(kind, resources, shape))


@st.composite
def balanced_args(draw: st.DrawFn) -> NodeResourcesBalancedAllocationArgs:
    names = draw(st.lists(st.sampled_from(ALL_RESOURCES), unique=True, min_size=1, max_size=5))
    return NodeResourcesBalancedAllocationArgs(tuple(ResourceSpec(n, 1) for n in names))


@dataclass
class Cluster:
    nodes: list[Node]
    pods: list[Pod]
    removed: list[str]


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    n = draw(st.integers(1, 8))
    nodes = [Node(f"n{i}", allocatable=draw(NODE_ALLOCATABLE)) for i in range(n)]
    pods = [
        Pod(f"p{j}", spec=draw(pod_specs()), node_name=f"n{draw(st.integers(0, n - 1))}")
        for j in range(draw(st.integers(0, 20)))
    ]
    removed = draw(st.lists(st.sampled_from([x.name for x in nodes]), unique=True, max_size=n - 1))
    return Cluster(nodes, pods, removed)


def _table(cluster: Cluster) -> NodeTable:
    table = build_table(cluster.nodes, cluster.pods)
    for name in cluster.removed:
        table.remove_node(name)
    return table


@settings(max_examples=scaled(200), deadline=None)
@given(
    cluster=clusters(),
    spec=pod_specs(),
    fit=fit_args(),
    balanced=balanced_args(),
    data=st.data(),
)
def test_vector_paths_match_per_node_paths(
    cluster: Cluster,
    spec: PodSpec,
    fit: NodeResourcesFitArgs,
    balanced: NodeResourcesBalancedAllocationArgs,
    data: st.DataObject,
) -> None:
    table = _table(cluster)
    pi = PodInfo(Pod("incoming", spec=spec))
    check_filter(table, pi, Fit(fit, FakeHandle()))
    names = data.draw(st.permutations(sorted(table.row_of)))
    ns = NodeSet(table, rows_named(table, names))
    check_fit_score(ns, pi, Fit(fit, FakeHandle()), run_pre_score=data.draw(st.booleans()))
    check_balanced_score(ns, pi, BalancedAllocation(balanced))


def check_filter(table: NodeTable, pi: PodInfo, plugin: Fit) -> None:
    state = CycleState()
    plugin.pre_filter(state, pi, table)
    verdicts = plugin.filter_vector(state, pi, table)
    assert verdicts is not None
    for name, row in table.row_of.items():
        info = table.infos[row]
        assert info is not None
        exact = plugin.filter(state, pi, info)
        i = int(verdicts.index[row])
        vector = Status(Code.SUCCESS) if i < 0 else verdicts.statuses[i]
        assert vector == exact, name


def check_fit_score(ns: NodeSet, pi: PodInfo, plugin: Fit, run_pre_score: bool) -> None:
    state = CycleState()
    if run_pre_score:
        assert plugin.pre_score(state, pi, ns).is_success()
    vector = plugin.score_vector(state, pi, ns)
    assert vector is not None
    exact = []
    for info in ns.infos:
        score, status = plugin.score(state, pi, info)
        assert status.is_success()
        assert 0 <= score <= 100
        exact.append(score)
    assert vector.tolist() == exact


def check_balanced_score(ns: NodeSet, pi: PodInfo, plugin: BalancedAllocation) -> None:
    state = CycleState()
    pre = plugin.pre_score(state, pi, ns)
    assert pre.code in (Code.SUCCESS, Code.SKIP)
    vector = plugin.score_vector(state, pi, ns)
    assert vector is not None
    exact = []
    for info in ns.infos:
        score, status = plugin.score(state, pi, info)
        assert status.is_success()
        exact.append(score)
    assert vector.tolist() == exact
    if pre.is_success():
        assert all(50 <= s <= 100 for s in exact)
