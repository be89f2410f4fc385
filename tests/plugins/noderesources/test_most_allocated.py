"""MostAllocated strategy: upstream most_allocated_test.go
TestMostAllocatedScoringStrategy. Each case runs both paths."""

from __future__ import annotations

import pytest

from kubesched.api.types import Node, Pod
from kubesched.framework.config import (
    MOST_ALLOCATED,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.noderesources import Fit
from tests.fakes import FakeHandle
from tests.plugins.noderesources.helpers import cap_node, req_pod, score_both

DEFAULT = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
EXT = "abc.com/xyz"
EXTENDED_SET = (*DEFAULT, ResourceSpec(EXT, 1))
TWO_PODS_REQ = req_pod("p", {"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})


def fit(resources: tuple[ResourceSpec, ...]) -> Fit:
    return Fit(
        NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(MOST_ALLOCATED, resources)),
        FakeHandle(),
    )


def nodes(*specs: tuple[str, dict[str, str | int]]) -> list[Node]:
    return [cap_node(n, r) for n, r in specs]


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
            [0, 0],
            id="TestMostAllocatedScoringStrategy/nothing scheduled, nothing requested",
        ),
        pytest.param(
            TWO_PODS_REQ,
            nodes(
                ("node1", {"cpu": "4000", "memory": "10000"}),
                ("node2", {"cpu": "6000", "memory": "10000"}),
            ),
            [],
            DEFAULT,
            [62, 50],
            id="TestMostAllocatedScoringStrategy/nothing scheduled, resources requested, "
            "differently sized nodes",
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
            [30, 42],
            id="TestMostAllocatedScoringStrategy/no resources requested, pods scheduled "
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
            [42, 55],
            id="TestMostAllocatedScoringStrategy/resources requested, pods scheduled "
            "with resources",
        ),
        pytest.param(
            req_pod("p", {"cpu": "2000", "memory": "4000"}, {"cpu": "3000", "memory": "5000"}),
            nodes(
                ("node1", {"cpu": "5000", "memory": "10000"}),
                ("node2", {"cpu": "10000", "memory": "9000"}),
            ),
            [],
            DEFAULT,
            [95, 75],
            id="TestMostAllocatedScoringStrategy/resources requested equal node capacity",
        ),
        pytest.param(
            TWO_PODS_REQ,
            nodes(
                ("node1", {"cpu": "4000", "memory": "10000"}),
                ("node2", {"cpu": "6000", "memory": "10000"}),
            ),
            [],
            (ResourceSpec("memory", 2), ResourceSpec("cpu", 1)),
            [58, 50],
            id="TestMostAllocatedScoringStrategy/nothing scheduled, resources requested, "
            "differently sized nodes, memory weight 2",
        ),
        pytest.param(
            req_pod("p", {}),
            nodes(
                ("node1", {"cpu": "250m", "memory": "1000Mi"}),
                ("node2", {"cpu": "250m", "memory": "1000Mi"}),
            ),
            [req_pod("e1", {}, node="node1"), req_pod("e2", {}, node="node1")],
            DEFAULT,
            [80, 30],
            id="TestMostAllocatedScoringStrategy/no resources requested, pods scheduled, "
            "nonzero request for resource",
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
            id="TestMostAllocatedScoringStrategy/bypass extended resource if the pod "
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
            [50, 40],
            id="TestMostAllocatedScoringStrategy/honor extended resource if the pod request",
        ),
        pytest.param(
            req_pod("p", {"cpu": "3000", "memory": "4000"}),
            nodes(
                ("node1", {"cpu": "6000", "memory": "10000"}),
                ("node2", {"cpu": "6000", "memory": "10000", EXT: "4"}),
            ),
            [],
            (ResourceSpec(EXT, 2), ResourceSpec("cpu", 1), ResourceSpec("memory", 1)),
            [45, 45],
            id="TestMostAllocatedScoringStrategy/if the node doesn't have a resource",
        ),
    ],
)
def test_most_allocated(
    pod: Pod,
    node_list: list[Node],
    existing: list[Pod],
    resources: tuple[ResourceSpec, ...],
    want: list[int],
) -> None:
    assert score_both(fit(resources), pod, node_list, existing) == want


def test_resources_not_set_is_an_error() -> None:
    """TestMostAllocatedScoringStrategy/Resources not set, pods scheduled with error."""
    plugin = fit(())
    score, st = plugin.score(
        CycleState(), PodInfo(TWO_PODS_REQ), NodeInfo(cap_node("node1", {"cpu": "4000"}))
    )
    assert (score, st.code) == (0, Code.ERROR)


@pytest.mark.parametrize(
    "resources",
    [
        pytest.param(
            (ResourceSpec("memory", -1), ResourceSpec("cpu", 1)),
            id="TestMostAllocatedScoringStrategy/resource with negative weight",
        ),
        pytest.param(
            (ResourceSpec("memory", 1), ResourceSpec("cpu", 0)),
            id="TestMostAllocatedScoringStrategy/resource with zero weight",
        ),
        pytest.param(
            (ResourceSpec("memory", 101),),
            id="TestMostAllocatedScoringStrategy/resource weight larger than MaxNodeScore",
        ),
    ],
)
def test_invalid_weights_are_rejected(resources: tuple[ResourceSpec, ...]) -> None:
    with pytest.raises(ValueError, match="not in valid range"):
        fit(resources)
