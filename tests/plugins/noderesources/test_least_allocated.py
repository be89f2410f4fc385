"""LeastAllocated strategy: upstream least_allocated_test.go
TestLeastAllocatedScoringStrategy. Each case runs both paths."""

from __future__ import annotations

import re

import pytest

from kubesched.api.types import Node, Pod
from kubesched.framework.config import (
    LEAST_ALLOCATED,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.noderesources import Fit
from kubesched.plugins.noderesources.least_allocated import least_requested_score
from kubesched.plugins.noderesources.weighted_mean import WeightedMeanScorer
from tests.fakes import FakeHandle
from tests.plugins.noderesources.helpers import cap_node, one_and_many, req_pod, score_both

DEFAULT = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
EXT = "abc.com/xyz"
EXTENDED_SET = (*DEFAULT, ResourceSpec(EXT, 1))


def fit(resources: tuple[ResourceSpec, ...]) -> Fit:
    return Fit(
        NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(LEAST_ALLOCATED, resources)),
        FakeHandle(),
    )


def nodes(*specs: tuple[str, dict[str, str | int]]) -> list[Node]:
    return [cap_node(n, r) for n, r in specs]


TWO_PODS_REQ = req_pod("p", {"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})


@pytest.mark.parametrize(
    ("pod", "node_list", "existing", "resources", "want"),
    [
        pytest.param(
            req_pod("p"),
            nodes(
                ("node1", {"cpu": "4000", "memory": "10000"}),
                ("node2", {"cpu": "4000", "memory": "10000"}),
            ),
            [],
            DEFAULT,
            [100, 100],
            id="TestLeastAllocatedScoringStrategy/nothing scheduled, nothing requested",
        ),
        pytest.param(
            TWO_PODS_REQ,
            nodes(
                ("node1", {"cpu": "4000", "memory": "10000"}),
                ("node2", {"cpu": "6000", "memory": "10000"}),
            ),
            [],
            DEFAULT,
            [37, 50],
            id="TestLeastAllocatedScoringStrategy/nothing scheduled, resources requested, "
            "differently sized nodes",
        ),
        pytest.param(
            req_pod("p"),
            nodes(
                ("node1", {"cpu": "4000", "memory": "10000"}),
                ("node2", {"cpu": "4000", "memory": "10000"}),
            ),
            [
                req_pod("e1", node="node1"),
                req_pod("e2", node="node1"),
                req_pod("e3", node="node2"),
                req_pod("e4", node="node2"),
            ],
            DEFAULT,
            [100, 100],
            id="TestLeastAllocatedScoringStrategy/no resources requested, pods scheduled",
        ),
        pytest.param(
            req_pod("p"),
            nodes(
                ("node1", {"cpu": "10000", "memory": "20000"}),
                ("node2", {"cpu": "10000", "memory": "20000"}),
            ),
            [
                req_pod("e1", {"cpu": "3000", "memory": "0"}, node="node1"),
                req_pod("e2", {"cpu": "3000", "memory": "0"}, node="node1"),
                req_pod("e3", {"cpu": "3000", "memory": "0"}, node="node2"),
                req_pod("e4", {"cpu": "3000", "memory": "5000"}, node="node2"),
            ],
            DEFAULT,
            [70, 57],
            id="TestLeastAllocatedScoringStrategy/no resources requested, pods scheduled "
            "with resources",
        ),
        pytest.param(
            TWO_PODS_REQ,
            nodes(
                ("node1", {"cpu": "10000", "memory": "20000"}),
                ("node2", {"cpu": "10000", "memory": "20000"}),
            ),
            [
                req_pod("e1", {"cpu": "3000", "memory": "0"}, node="node1"),
                req_pod("e2", {"cpu": "3000", "memory": "5000"}, node="node2"),
            ],
            DEFAULT,
            [57, 45],
            id="TestLeastAllocatedScoringStrategy/resources requested, pods scheduled "
            "with resources",
        ),
        pytest.param(
            TWO_PODS_REQ,
            nodes(
                ("node1", {"cpu": "10000", "memory": "20000"}),
                ("node2", {"cpu": "10000", "memory": "50000"}),
            ),
            [
                req_pod("e1", {"cpu": "3000", "memory": "0"}, node="node1"),
                req_pod("e2", {"cpu": "3000", "memory": "5000"}, node="node2"),
            ],
            DEFAULT,
            [57, 60],
            id="TestLeastAllocatedScoringStrategy/resources requested, pods scheduled "
            "with resources, differently sized nodes",
        ),
        pytest.param(
            req_pod("p", {"cpu": "3000", "memory": "0"}),
            nodes(
                ("node1", {"cpu": "4000", "memory": "10000"}),
                ("node2", {"cpu": "4000", "memory": "10000"}),
            ),
            [
                req_pod("e1", {"cpu": "3000", "memory": "0"}, node="node1"),
                req_pod("e2", {"cpu": "3000", "memory": "5000"}, node="node2"),
            ],
            DEFAULT,
            [50, 25],
            id="TestLeastAllocatedScoringStrategy/requested resources exceed node capacity",
        ),
        pytest.param(
            req_pod("p"),
            nodes(("node1", {}), ("node2", {})),
            [
                req_pod("e1", {"cpu": "3000", "memory": "0"}, node="node1"),
                req_pod("e2", {"cpu": "3000", "memory": "5000"}, node="node2"),
            ],
            DEFAULT,
            [0, 0],
            id="TestLeastAllocatedScoringStrategy/zero node resources, pods scheduled "
            "with resources",
        ),
        pytest.param(
            TWO_PODS_REQ,
            nodes(
                ("node1", {"cpu": "4000", "memory": "10000"}),
                ("node2", {"cpu": "6000", "memory": "10000"}),
            ),
            [],
            (ResourceSpec("memory", 2), ResourceSpec("cpu", 1)),
            [41, 50],
            id="TestLeastAllocatedScoringStrategy/nothing scheduled, resources requested "
            "with different weight on CPU and memory, differently sized nodes",
        ),
        pytest.param(
            TWO_PODS_REQ,
            nodes(
                ("node1", {"cpu": "6000", "memory": "10000"}),
                ("node2", {"cpu": "6000", "memory": "10000", EXT: "4"}),
            ),
            [],
            EXTENDED_SET,
            [50, 50],
            id="TestLeastAllocatedScoringStrategy/bypass extended resource if the pod "
            "does not request",
        ),
        pytest.param(
            req_pod("p", {"cpu": "3000", "memory": "5000", EXT: "2"}),
            nodes(
                ("node1", {"cpu": "6000", "memory": "10000", EXT: "4"}),
                ("node2", {"cpu": "6000", "memory": "10000", EXT: "10"}),
            ),
            [],
            EXTENDED_SET,
            [50, 60],
            id="TestLeastAllocatedScoringStrategy/honor extended resource if the pod requests",
        ),
        pytest.param(
            req_pod("p", {"cpu": "3000", "memory": "4000"}),
            nodes(
                ("node1", {"cpu": "6000", "memory": "10000"}),
                ("node2", {"cpu": "6000", "memory": "10000", EXT: "4"}),
            ),
            [],
            (ResourceSpec(EXT, 2), ResourceSpec("cpu", 1), ResourceSpec("memory", 1)),
            [55, 55],
            id="TestLeastAllocatedScoringStrategy/if the node doesn't have a resource",
        ),
    ],
)
def test_least_allocated(
    pod: Pod,
    node_list: list[Node],
    existing: list[Pod],
    resources: tuple[ResourceSpec, ...],
    want: list[int],
) -> None:
    assert score_both(fit(resources), pod, node_list, existing) == want


def test_resources_not_set_is_an_error() -> None:
    """TestLeastAllocatedScoringStrategy/Resources not set, pods scheduled with error."""
    plugin = fit(())
    node = NodeInfo(cap_node("node1", {"cpu": "4000", "memory": "10000"}))
    state = CycleState()
    pi = PodInfo(TWO_PODS_REQ)
    score, st = plugin.score(state, pi, node)
    assert (score, st.code, st.message()) == (0, Code.ERROR, "resources not found")


@pytest.mark.parametrize(
    ("resources", "field"),
    [
        pytest.param(
            (ResourceSpec("memory", -1), ResourceSpec("cpu", 1)),
            "resources[0].weight",
            id="TestLeastAllocatedScoringStrategy/resource with negative weight",
        ),
        pytest.param(
            (ResourceSpec("memory", 1), ResourceSpec("cpu", 0)),
            "resources[1].weight",
            id="TestLeastAllocatedScoringStrategy/resource with zero weight",
        ),
        pytest.param(
            (ResourceSpec("memory", 1), ResourceSpec("cpu", 101)),
            "resources[1].weight",
            id="TestLeastAllocatedScoringStrategy/resource weight larger than MaxNodeScore",
        ),
    ],
)
def test_invalid_weights_are_rejected(resources: tuple[ResourceSpec, ...], field: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"scoringStrategy.{field}")):
        fit(resources)


@pytest.mark.parametrize(
    ("requested", "capacity", "want"),
    [
        pytest.param(0, 0, 0, id="no capacity scores 0"),
        pytest.param(5, 4, 0, id="requested above capacity scores 0"),
        pytest.param(1, 3, 66, id="integer division truncates"),
        pytest.param(0, 7, 100, id="empty node scores MaxNodeScore"),
    ],
)
def test_least_requested_score(requested: int, capacity: int, want: int) -> None:
    scorer = WeightedMeanScorer([1], least_requested_score)
    assert one_and_many(scorer, [requested], [requested], [capacity]) == want
