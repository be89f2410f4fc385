"""RequestedToCapacityRatio strategy: upstream requested_to_capacity_ratio_test.go
(TestRequestedToCapacityRatioScoringStrategy, TestBrokenLinearFunction,
TestResourceBinPackingSingleExtended, TestResourceBinPackingMultipleExtended).
Score cases run both paths."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.api.goformat import MANY, go_round, go_round_vec
from kubesched.api.types import Node, Pod
from kubesched.framework.config import (
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from kubesched.plugins.noderesources import Fit
from kubesched.plugins.noderesources.requested_to_capacity_ratio import (
    FunctionShapePoint,
    broken_linear,
)
from tests.fakes import FakeHandle
from tests.plugins.noderesources.helpers import (
    cap_node,
    node_with,
    one_and_many,
    req_pod,
    score_both,
)

DEFAULT = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
SHAPE = (UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0))
BIN_SHAPE = (UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 1))


def fit(resources: tuple[ResourceSpec, ...], shape: tuple[UtilizationShapePoint, ...]) -> Fit:
    return Fit(
        NodeResourcesFitArgs(
            scoring_strategy=ScoringStrategy(REQUESTED_TO_CAPACITY_RATIO, resources, shape)
        ),
        FakeHandle(),
    )


def make_node(name: str, milli_cpu: int, memory: int, ext: dict[str, int]) -> Node:
    """Upstream makeNode(node, milliCPU, memory, extendedResource)."""
    return node_with(name, {"cpu": f"{milli_cpu}m", "memory": memory, **ext})


@pytest.mark.parametrize(
    ("pod", "node_list", "existing", "want"),
    [
        pytest.param(
            req_pod("p"),
            [
                cap_node("node1", {"cpu": "4000", "memory": "10000"}),
                cap_node("node2", {"cpu": "4000", "memory": "10000"}),
            ],
            [req_pod("e1", node="node1"), req_pod("e2", node="node1")],
            [100, 100],
            id="TestRequestedToCapacityRatioScoringStrategy/nothing scheduled, nothing "
            "requested (default - least requested nodes have priority)",
        ),
        pytest.param(
            req_pod("p", {"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"}),
            [
                cap_node("node1", {"cpu": "4000", "memory": "10000"}),
                cap_node("node2", {"cpu": "6000", "memory": "10000"}),
            ],
            [req_pod("e1", node="node1"), req_pod("e2", node="node1")],
            [38, 50],
            id="TestRequestedToCapacityRatioScoringStrategy/nothing scheduled, resources "
            "requested, differently sized nodes (default - least requested nodes have "
            "priority)",
        ),
        pytest.param(
            req_pod("p"),
            [
                cap_node("node1", {"cpu": "4000", "memory": "10000"}),
                cap_node("node2", {"cpu": "6000", "memory": "10000"}),
            ],
            [
                req_pod("e1", {"cpu": "3000", "memory": "5000"}, node="node1"),
                req_pod("e2", {"cpu": "3000", "memory": "5000"}, node="node2"),
            ],
            [38, 50],
            id="TestRequestedToCapacityRatioScoringStrategy/no resources requested, pods "
            "scheduled with resources (default - least requested nodes have priority)",
        ),
    ],
)
def test_requested_to_capacity_ratio(
    pod: Pod, node_list: list[Node], existing: list[Pod], want: list[int]
) -> None:
    assert score_both(fit(DEFAULT, SHAPE), pod, node_list, existing) == want


BROKEN_LINEAR = [
    (
        [(10, 1), (90, 9)],
        [
            (-10, 1),
            (0, 1),
            (9, 1),
            (10, 1),
            (15, 1),
            (19, 1),
            (20, 2),
            (89, 8),
            (90, 9),
            (99, 9),
            (100, 9),
            (110, 9),
        ],
    ),
    (
        [(0, 2), (40, 10), (100, 0)],
        [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)],
    ),
    (
        [(0, 2), (40, 2), (100, 2)],
        [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)],
    ),
]


@pytest.mark.parametrize(
    ("points", "assertions"),
    [
        pytest.param(p, a, id=f"TestBrokenLinearFunction/case_{i}")
        for i, (p, a) in enumerate(BROKEN_LINEAR)
    ],
)
def test_broken_linear_function(
    points: list[tuple[int, int]], assertions: list[tuple[int, int]]
) -> None:
    shape = [FunctionShapePoint(u, s) for u, s in points]
    got = [one_and_many(lambda xp, p: broken_linear(xp, shape, p), p) for p, _ in assertions]
    assert got == [want for _, want in assertions]
    vec = broken_linear(MANY, shape, np.array([p for p, _ in assertions], dtype=np.int64))
    assert vec.tolist() == got


def test_broken_linear_function_truncates_toward_zero_on_a_falling_segment() -> None:
    """Go's ``/`` truncates: 100 + (-100 * 33) / 100 = 100 - 33 (floor would give 66)."""
    shape = [FunctionShapePoint(0, 100), FunctionShapePoint(100, 0)]
    assert one_and_many(lambda xp, p: broken_linear(xp, shape, p), 33) == 67
    shape2 = [FunctionShapePoint(0, 100), FunctionShapePoint(30, 0)]
    # 100 + (-100 * 7) / 30 = 100 - 23 (floor would be -24 -> 76)
    assert one_and_many(lambda xp, p: broken_linear(xp, shape2, p), 7) == 77


@pytest.mark.parametrize(
    ("x", "want"),
    [
        pytest.param(2.5, 3, id="half rounds away from zero"),
        pytest.param(3.875, 4, id="above half rounds up"),
        pytest.param(2.4999, 2, id="below half rounds down"),
        pytest.param(-2.5, -3, id="negative half rounds away from zero"),
        pytest.param(0.49999999999999994, 0, id="largest float below one half rounds to zero"),
    ],
)
def test_go_round(x: float, want: int) -> None:
    assert go_round(x) == want
    assert go_round_vec(np.array([x])).tolist() == [want]


FOO = "intel.com/foo"
BAR = "intel.com/bar"
MIB = 1024 * 1024


def single_nodes() -> list[Node]:
    return [
        make_node("node1", 4000, 10000 * MIB, {FOO: 8}),
        make_node("node2", 4000, 10000 * MIB, {FOO: 4}),
    ]


@pytest.mark.parametrize(
    ("pod", "existing", "want"),
    [
        pytest.param(
            req_pod("p"),
            [],
            [0, 0],
            id="TestResourceBinPackingSingleExtended/nothing scheduled, nothing requested",
        ),
        pytest.param(
            req_pod("p", {FOO: "2"}),
            [req_pod("e")],
            [2, 5],
            id="TestResourceBinPackingSingleExtended/resources requested, pods scheduled "
            "with less resources",
        ),
        pytest.param(
            req_pod("p", {FOO: "2"}),
            [req_pod("e", {FOO: "2"}, node="node2")],
            [2, 10],
            id="TestResourceBinPackingSingleExtended/resources requested, pods scheduled "
            "with resources, on node with existing pod running",
        ),
        pytest.param(
            req_pod("p", {FOO: "4"}),
            [req_pod("e")],
            [5, 10],
            id="TestResourceBinPackingSingleExtended/resources requested, pods scheduled "
            "with more resources",
        ),
    ],
)
def test_resource_bin_packing_single_extended(
    pod: Pod, existing: list[Pod], want: list[int]
) -> None:
    plugin = fit((ResourceSpec(FOO, 1),), BIN_SHAPE)
    assert score_both(plugin, pod, single_nodes(), existing) == want


def multiple_nodes() -> list[Node]:
    return [
        make_node("node1", 4000, 10000 * MIB, {FOO: 8, BAR: 4}),
        make_node("node2", 4000, 10000 * MIB, {FOO: 4, BAR: 8}),
    ]


@pytest.mark.parametrize(
    ("pod", "existing", "want"),
    [
        pytest.param(
            req_pod("p"),
            [],
            [0, 0],
            id="TestResourceBinPackingMultipleExtended/nothing scheduled, nothing requested",
        ),
        pytest.param(
            req_pod("p", {FOO: "2", BAR: "2"}),
            [req_pod("e")],
            [4, 3],
            id="TestResourceBinPackingMultipleExtended/resources requested, pods scheduled "
            "with less resources",
        ),
        pytest.param(
            req_pod("p", {FOO: "2", BAR: "2"}),
            [req_pod("e", {FOO: "4", BAR: "2"}, node="node2")],
            [4, 7],
            id="TestResourceBinPackingMultipleExtended/resources requested, pods scheduled "
            "with resources, on node with existing pod running",
        ),
        pytest.param(
            req_pod("p", {FOO: "4", BAR: "2"}),
            [req_pod("e")],
            [5, 5],
            id="TestResourceBinPackingMultipleExtended/resources requested, pods scheduled "
            "with more resources",
        ),
    ],
)
def test_resource_bin_packing_multiple_extended(
    pod: Pod, existing: list[Pod], want: list[int]
) -> None:
    plugin = fit((ResourceSpec(FOO, 3), ResourceSpec(BAR, 5)), BIN_SHAPE)
    assert score_both(plugin, pod, multiple_nodes(), existing) == want


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        pytest.param((), "at least one point must be specified", id="empty shape is rejected"),
        pytest.param(
            (UtilizationShapePoint(50, 1), UtilizationShapePoint(50, 2)),
            "values must be sorted in increasing order",
            id="unsorted shape is rejected",
        ),
        pytest.param(
            (UtilizationShapePoint(0, 11),),
            "not in valid range [0, 10]",
            id="shape score above MaxCustomPriorityScore is rejected",
        ),
        pytest.param(
            (UtilizationShapePoint(101, 1),),
            "not in valid range [0, 100]",
            id="utilization above 100 is rejected",
        ),
    ],
)
def test_invalid_shape_is_rejected(shape: tuple[UtilizationShapePoint, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        fit(DEFAULT, shape)
