"""ImageLocality Score (upstream image_locality TestImageLocalityPriority,
TestNormalizedImageName) on both paths.

Expected scores follow the current formula, whose threshold scales with the
number of containers: ``100 * (clamp(sum) - 23MiB) / (1000MiB * containers - 23MiB)``.
"""

from __future__ import annotations

import pytest

from kubesched.api.types import Node
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import ScoreExtensions
from kubesched.framework.snapshot import normalized_image_name
from kubesched.plugins.imagelocality import ImageLocality, calculate_priority
from tests.builders import PodBuilder, build_table, make_node, make_pod
from tests.fakes import FakeHandle
from tests.plugins.fakes import check_score

MB = 1024 * 1024


def node_403002000(name: str = "machine1") -> Node:
    return (
        make_node(name)
        .image(40 * MB, "gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1")
        .image(300 * MB, "gcr.io/300:latest", "gcr.io/300:v1")
        .image(2000 * MB, "gcr.io/2000:latest")
        .obj()
    )


def node_25010(name: str = "machine2") -> Node:
    return (
        make_node(name)
        .image(250 * MB, "gcr.io/250:latest")
        .image(10 * MB, "gcr.io/10:latest", "gcr.io/10:v1")
        .obj()
    )


def images(*names: str) -> PodBuilder:
    b = make_pod("p")
    for n in names:
        b = b.container_image(n)
    return b


@pytest.mark.parametrize(
    ("pod", "nodes", "want"),
    [
        pytest.param(
            images("gcr.io/40", "gcr.io/250"),
            [node_403002000(), node_25010()],
            # machine1: 40M/2 < 23M -> 0; machine2: 100*(125M-23M)/(2000M-23M) = 5
            {"machine1": 0, "machine2": 5},
            id="TestImageLocalityPriority/two images spread on two nodes, prefer the larger image "
            "one",
        ),
        pytest.param(
            images("gcr.io/40", "gcr.io/300"),
            [node_403002000(), node_25010()],
            # machine1: 100*((40M+300M)/2-23M)/(2000M-23M) = 7
            {"machine1": 7, "machine2": 0},
            id="TestImageLocalityPriority/two images on one node, prefer this node",
        ),
        pytest.param(
            images("gcr.io/10", "gcr.io/2000"),
            [node_403002000(), node_25010()],
            # machine1: 100*(2000M/2-23M)/(2000M-23M) = 49; machine2: 10M/2 < 23M -> 0
            {"machine1": 49, "machine2": 0},
            id="TestImageLocalityPriority/if exceed limit, use limit",
        ),
        pytest.param(
            images("gcr.io/10", "gcr.io/2000"),
            [node_403002000(), node_25010(), make_node("machine3").obj()],
            # machine1: 100*(2000M/3-23M)/(2000M-23M) = 32
            {"machine1": 32, "machine2": 0, "machine3": 0},
            id="TestImageLocalityPriority/if exceed limit, use limit (with node which has no "
            "images present)",
        ),
        pytest.param(
            images("gcr.io/2000"),
            [node_403002000("a"), node_403002000("b")],
            {"a": 100, "b": 100},
            id="an image on every node is not scaled down and reaches the per-container cap",
        ),
        pytest.param(
            images("gcr.io/300").init_req(cpu="1"),
            [node_403002000("a"), make_node("b").obj()],
            # two containers (the init container has no image): 100*(150M-23M)/(2000M-23M) = 6
            {"a": 6, "b": 0},
            id="init containers count in the container number",
        ),
        pytest.param(
            images("gcr.io/300:v1"),
            [node_403002000("a")],
            {"a": 28},
            id="a tagged image name matches that tag (100*(300M-23M)/(1000M-23M))",
        ),
        pytest.param(
            make_pod("p"), [node_403002000("a")], {"a": 0}, id="a pod without containers scores 0"
        ),
    ],
)
def test_score(pod: PodBuilder, nodes: list[Node], want: dict[str, int]) -> None:
    table = build_table(nodes)
    pl = ImageLocality(None, FakeHandle(table))
    _, got = check_score(pl, CycleState(), pod.info(), table)
    assert got == want
    assert not isinstance(pl, ScoreExtensions)


@pytest.mark.parametrize(
    ("name", "want"),
    [
        pytest.param("root", "root:latest", id="TestNormalizedImageName/add :latest postfix 1"),
        pytest.param(
            "gcr.io:5000/root",
            "gcr.io:5000/root:latest",
            id="TestNormalizedImageName/add :latest postfix 2",
        ),
        pytest.param("root:tag", "root:tag", id="TestNormalizedImageName/keep it as is 1"),
        pytest.param(
            "root@sha256:abcd", "root@sha256:abcd", id="TestNormalizedImageName/keep it as is 2"
        ),
    ],
)
def test_normalized_image_name(name: str, want: str) -> None:
    assert normalized_image_name(name) == want


def test_calculate_priority_bounds() -> None:
    assert calculate_priority(0, 1) == 0
    assert calculate_priority(23 * MB, 1) == 0
    assert calculate_priority(1000 * MB, 1) == 100
    assert calculate_priority(5000 * MB, 2) == 100
    assert calculate_priority(0, 0) == 0
