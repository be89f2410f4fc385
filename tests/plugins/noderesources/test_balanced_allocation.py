"""NodeResourcesBalancedAllocation: upstream balanced_allocation_test.go
TestNodeResourcesBalancedAllocation at v1.36 (score = 50 + (50 + balance with the
pod - balance without it) / 2; best-effort pods skipped at PreScore). Each case
runs both paths; the comments give upstream's "(without -> with)" balances."""

from __future__ import annotations

import pytest

from kubesched.api.types import Node, Pod
from kubesched.framework.config import NodeResourcesBalancedAllocationArgs, ResourceSpec
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.noderesources import BalancedAllocation
from kubesched.plugins.noderesources.balanced_allocation import balanced_score
from tests.builders import build_table
from tests.plugins.noderesources.helpers import (
    node_set,
    node_with,
    one_and_many,
    resource_pod,
    score_both,
)

GPU = "nvidia.com/gpu"
DEFAULT = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
WITH_GPU = (*DEFAULT, ResourceSpec(GPU, 1))


def make_node(name: str, milli_cpu: int, memory: int, ext: dict[str, int] | None = None) -> Node:
    """Upstream makeNode(node, milliCPU, memory, extendedResource)."""
    return node_with(name, {"cpu": f"{milli_cpu}m", "memory": memory, **(ext or {})})


def cpu_only(name: str, node: str = "") -> Pod:
    return resource_pod(
        name, {"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"}, node=node
    )


def memory_only(name: str, node: str = "") -> Pod:
    return resource_pod(
        name, {"cpu": "0", "memory": "2000"}, {"cpu": "0", "memory": "3000"}, node=node
    )


def cpu_and_memory(name: str, node: str = "") -> Pod:
    return resource_pod(
        name, {"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}, node=node
    )


def cpu_memory_gpu(name: str, node: str = "") -> Pod:
    return resource_pod(
        name,
        {"cpu": "1000m", "memory": "2000"},
        {"cpu": "2000m", "memory": "3000", GPU: "3"},
        node=node,
    )


def plugin(resources: tuple[ResourceSpec, ...] = DEFAULT) -> BalancedAllocation:
    return BalancedAllocation(NodeResourcesBalancedAllocationArgs(resources))


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "resources", "pre_score", "want"),
    [
        # node1 cpu 0 -> 75%, mem 0 -> 50%: balance 100 -> 87; node2 100 -> 100
        pytest.param(
            cpu_and_memory("p"),
            [make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)],
            [],
            DEFAULT,
            True,
            [68, 75],
            id="TestNodeResourcesBalancedAllocation/nothing scheduled, resources requested, "
            "differently sized nodes",
        ),
        # node1 85 -> 82; node2 97 -> 95
        pytest.param(
            cpu_and_memory("p"),
            [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
            [cpu_only("e1", "node1"), cpu_and_memory("e2", "node2")],
            DEFAULT,
            True,
            [73, 74],
            id="TestNodeResourcesBalancedAllocation/resources requested, pods scheduled "
            "with resources",
        ),
        # node1 85 -> 82; node2 90 -> 80
        pytest.param(
            cpu_and_memory("p"),
            [make_node("node1", 10000, 20000), make_node("node2", 10000, 50000)],
            [cpu_only("e1", "node1"), cpu_and_memory("e2", "node2")],
            DEFAULT,
            True,
            [73, 70],
            id="TestNodeResourcesBalancedAllocation/resources requested, pods scheduled "
            "with resources, differently sized nodes",
        ),
        # node1 50 -> 100; node2 100 -> 50
        pytest.param(
            memory_only("p"),
            [make_node("node1", 3000, 5000), make_node("node2", 3000, 5000)],
            [cpu_only("e1", "node1")],
            DEFAULT,
            True,
            [100, 50],
            id="TestNodeResourcesBalancedAllocation/resources requested, pods scheduled "
            "with resources, nodes to reach min/max score",
        ),
        # node1 75 -> 50; node2 100 -> 75
        pytest.param(
            cpu_only("p"),
            [make_node("node1", 6000, 10000), make_node("node2", 6000, 10000)],
            [cpu_only("e1", "node1"), cpu_and_memory("e2", "node2")],
            DEFAULT,
            True,
            [62, 62],
            id="TestNodeResourcesBalancedAllocation/requested resources at node capacity",
        ),
        # node1 69 -> 70; node2 62 -> 65
        pytest.param(
            resource_pod("p", {"memory": "0", GPU: "1"}),
            [make_node("node1", 3500, 40000, {GPU: 8}), make_node("node2", 3500, 40000, {GPU: 8})],
            [cpu_and_memory("e1", "node2"), cpu_memory_gpu("e2", "node1")],
            WITH_GPU,
            True,
            [75, 76],
            id="TestNodeResourcesBalancedAllocation/include scalar resource on a node for "
            "balanced resource allocation",
        ),
        # both 100 -> 63; the pod does not request the GPU, so it is ignored
        pytest.param(
            cpu_and_memory("p"),
            [make_node("node1", 3500, 40000, {GPU: 8}), make_node("node2", 3500, 40000)],
            [],
            WITH_GPU,
            True,
            [56, 56],
            id="TestNodeResourcesBalancedAllocation/node without the scalar resource should "
            "skip the scalar resource",
        ),
        pytest.param(
            cpu_and_memory("p"),
            [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
            [cpu_only("e1", "node1"), cpu_and_memory("e2", "node2")],
            DEFAULT,
            False,
            [73, 74],
            id="TestNodeResourcesBalancedAllocation/resources requested, pods scheduled "
            "with resources if PreScore not called",
        ),
    ],
)
def test_balanced_allocation(
    *,
    pod: Pod,
    nodes: list[Node],
    existing: list[Pod],
    resources: tuple[ResourceSpec, ...],
    pre_score: bool,
    want: list[int],
) -> None:
    assert score_both(plugin(resources), pod, nodes, existing, run_pre_score=pre_score) == want


def test_best_effort_pod_is_skipped_at_pre_score() -> None:
    """TestNodeResourcesBalancedAllocation/nothing scheduled, nothing requested,
    skip in PreScore."""
    nodes = [make_node("node1", 4000, 10000), make_node("node2", 4000, 10000)]
    table = build_table(nodes)
    state = CycleState()
    st = plugin().pre_score(state, PodInfo(resource_pod("p")), node_set(table, ["node1", "node2"]))
    assert st.code == Code.SKIP


def test_best_effort_pod_scores_zero_without_pre_score() -> None:
    nodes = [make_node("node1", 4000, 10000)]
    assert score_both(plugin(), resource_pod("p", {}), nodes, run_pre_score=False) == [0]


def test_pod_requesting_only_unconfigured_resources_counts_as_best_effort() -> None:
    table = build_table([make_node("node1", 4000, 10000, {GPU: 4})])
    st = plugin().pre_score(
        CycleState(), PodInfo(resource_pod("p", {GPU: "1"})), node_set(table, ["node1"])
    )
    assert st.code == Code.SKIP


def test_balanced_allocation_uses_requested_not_non_zero_defaults() -> None:
    """Existing pods without requests count 0 here (useRequested), unlike Fit's scorers:
    node1 (two request-less containers) scores as the empty node2. With the 100m/200Mi
    defaults node1 would score 50 + (50 + 97 - 90) / 2 = 78."""
    mib = 1024 * 1024
    nodes = [make_node("node1", 1000, 1000 * mib), make_node("node2", 1000, 1000 * mib)]
    pods = [resource_pod("e", {}, {}, node="node1")]
    pod = resource_pod("p", {"cpu": "500m", "memory": "250Mi"})
    # with the pod: 0.5 / 0.25 -> 87; without: 0 / 0 -> 100
    assert score_both(plugin(), pod, nodes, pods) == [68, 68]


def test_resources_not_found_is_an_error() -> None:
    p = plugin(())
    score, st = p.score(CycleState(), PodInfo(cpu_and_memory("p")), NodeInfo(make_node("n", 1, 1)))
    assert (score, st.code, st.message()) == (0, Code.ERROR, "resources not found")


@pytest.mark.parametrize(
    ("resources", "message"),
    [
        pytest.param((ResourceSpec("cpu", 2),), "must be 1", id="weight other than 1 is rejected"),
        pytest.param(
            (ResourceSpec("cpu", 1), ResourceSpec("cpu", 1)),
            "Duplicate",
            id="duplicate resource is rejected",
        ),
    ],
)
def test_invalid_args_are_rejected(resources: tuple[ResourceSpec, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        plugin(resources)


@pytest.mark.parametrize(
    ("used", "allocatable", "want"),
    [
        pytest.param(
            [3, 5], [4, 10], 87, id="two resources: (1 - |0.75 - 0.5| / 2) * 100 truncated"
        ),
        pytest.param([6, 0], [4, 10], 50, id="fractions above 1 are capped at 1"),
        pytest.param([3, 0], [4, 0], 100, id="one resource has no deviation"),
        pytest.param([0, 0], [0, 0], 100, id="no resource has no deviation"),
        pytest.param(
            [3000, 5000, 4],
            [3500, 40000, 8],
            70,
            id="three resources use the population standard deviation",
        ),
    ],
)
def test_balance_score(used: list[int], allocatable: list[int], want: int) -> None:
    """``want`` is the balance with ``used``; without it (nothing used) the balance
    is 100, so the score is 50 + (50 + want - 100) / 2 (``want`` >= 50)."""
    nothing = [0] * len(used)
    assert one_and_many(balanced_score, used, nothing, allocatable) == 50 + (want - 50) // 2


@pytest.mark.parametrize(
    ("requested", "allocated", "want"),
    [
        pytest.param([1, 1], [1, 1], 75, id="no change in balance scores 75"),
        pytest.param([1, 0], [0, 0], 50, id="perfectly balanced to perfectly imbalanced scores 50"),
        pytest.param(
            [1, 1], [1, 0], 100, id="perfectly imbalanced to perfectly balanced scores 100"
        ),
    ],
)
def test_balanced_scorer_range(requested: list[int], allocated: list[int], want: int) -> None:
    assert one_and_many(balanced_score, requested, allocated, [1, 1]) == want
