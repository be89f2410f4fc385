"""NodeResourcesFit Score: upstream fit_test.go TestFitScore (every strategy,
with and without PreScore, sidecars). Each case runs both paths."""

from __future__ import annotations

import pytest

from kubesched.api.types import Node, Pod
from kubesched.framework.config import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesFitArgs,
    ScoringStrategy,
    UtilizationShapePoint,
)
from kubesched.plugins.noderesources import Fit
from tests.fakes import FakeHandle
from tests.plugins.noderesources.helpers import cap_node, req_pod, resource_pod, score_both

SHAPE_DOWN = (UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0))
SHAPE_UP = (UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10))


def strategy(type_: str, shape: tuple[UtilizationShapePoint, ...] = ()) -> NodeResourcesFitArgs:
    return NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(type=type_, shape=shape))


def two_nodes(cpu2: str = "6000") -> list[Node]:
    return [
        cap_node("node1", {"cpu": "4000", "memory": "10000"}),
        cap_node("node2", {"cpu": cpu2, "memory": "10000"}),
    ]


EXISTING = [
    req_pod("e1", {"cpu": "2000", "memory": "4000"}, node="node1"),
    req_pod("e2", {"cpu": "1000", "memory": "2000"}, node="node2"),
]
SIDECAR_EXISTING = [
    resource_pod(
        "e1",
        {"cpu": "1000", "memory": "2000"},
        sidecars=[{"cpu": "1000", "memory": "2000"}],
        node="node1",
    ),
    req_pod("e2", {"cpu": "1000", "memory": "2000"}, node="node2"),
]
BIG = req_pod("p", {"cpu": "3000", "memory": "5000"})
SMALL = req_pod("p", {"cpu": "1000", "memory": "2000"})


@pytest.mark.parametrize(
    ("args", "pod", "nodes", "existing", "pre_score", "want"),
    [
        pytest.param(
            strategy(REQUESTED_TO_CAPACITY_RATIO, SHAPE_DOWN),
            BIG,
            two_nodes(),
            EXISTING,
            True,
            [10, 32],
            id="TestFitScore/test case for ScoringStrategy RequestedToCapacityRatio case1",
        ),
        pytest.param(
            strategy(REQUESTED_TO_CAPACITY_RATIO, SHAPE_UP),
            BIG,
            two_nodes(),
            EXISTING,
            True,
            [95, 68],
            id="TestFitScore/test case for ScoringStrategy RequestedToCapacityRatio case2",
        ),
        pytest.param(
            strategy(MOST_ALLOCATED),
            SMALL,
            two_nodes(),
            EXISTING,
            True,
            [67, 36],
            id="TestFitScore/test case for ScoringStrategy MostAllocated",
        ),
        pytest.param(
            strategy(LEAST_ALLOCATED),
            SMALL,
            two_nodes(),
            EXISTING,
            True,
            [32, 63],
            id="TestFitScore/test case for ScoringStrategy LeastAllocated",
        ),
        pytest.param(
            strategy(REQUESTED_TO_CAPACITY_RATIO, SHAPE_DOWN),
            BIG,
            two_nodes(),
            EXISTING,
            False,
            [10, 32],
            id="TestFitScore/RequestedToCapacityRatio case1 if PreScore is not called",
        ),
        pytest.param(
            strategy(MOST_ALLOCATED),
            SMALL,
            two_nodes(),
            EXISTING,
            False,
            [67, 36],
            id="TestFitScore/MostAllocated if PreScore is not called",
        ),
        pytest.param(
            strategy(LEAST_ALLOCATED),
            SMALL,
            two_nodes(),
            EXISTING,
            False,
            [32, 63],
            id="TestFitScore/LeastAllocated if PreScore is not called",
        ),
        pytest.param(
            strategy(MOST_ALLOCATED),
            SMALL,
            two_nodes("4000"),
            SIDECAR_EXISTING,
            True,
            [67, 45],
            id="TestFitScore/MostAllocated with sidecar container",
        ),
        pytest.param(
            strategy(LEAST_ALLOCATED),
            SMALL,
            two_nodes("4000"),
            SIDECAR_EXISTING,
            True,
            [32, 55],
            id="TestFitScore/LeastAllocated with sidecar container",
        ),
    ],
)
def test_fit_score(
    *,
    args: NodeResourcesFitArgs,
    pod: Pod,
    nodes: list[Node],
    existing: list[Pod],
    pre_score: bool,
    want: list[int],
) -> None:
    assert (
        score_both(Fit(args, FakeHandle()), pod, nodes, existing, run_pre_score=pre_score) == want
    )


def test_default_strategy_is_least_allocated_cpu_memory() -> None:
    plugin = Fit(None, FakeHandle())
    assert plugin.args.scoring_strategy.type == LEAST_ALLOCATED
    assert score_both(plugin, SMALL, two_nodes(), EXISTING) == [32, 63]


def test_fit_has_no_score_extensions() -> None:
    assert Fit(None, FakeHandle()).score_extensions() is None
