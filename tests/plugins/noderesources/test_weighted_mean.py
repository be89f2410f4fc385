"""WeightedMeanScorer: the weighted mean of LeastAllocated and MostAllocated, for
one node (``ONE``) and as a vector (``MANY``)."""

from __future__ import annotations

import pytest

from kubesched.plugins.noderesources.least_allocated import least_requested_score
from kubesched.plugins.noderesources.most_allocated import most_requested_score
from kubesched.plugins.noderesources.weighted_mean import ResourceScore, WeightedMeanScorer
from tests.plugins.noderesources.helpers import one_and_many


@pytest.mark.parametrize(
    ("resource_score", "requested", "allocatable", "want"),
    [
        pytest.param(
            least_requested_score,
            [1000, 0],
            [4000, 0],
            75,
            id="LeastAllocated skips a resource with no allocatable",
        ),
        pytest.param(
            most_requested_score,
            [1000, 0],
            [4000, 0],
            25,
            id="MostAllocated skips a resource with no allocatable",
        ),
        pytest.param(
            least_requested_score, [0, 0], [0, 0], 0, id="no resource takes part scores 0"
        ),
        pytest.param(
            most_requested_score,
            [5000, 2],
            [4000, 4],
            75,
            id="MostAllocated caps requested at allocatable",
        ),
        pytest.param(
            least_requested_score,
            [1, 5],
            [3, 4],
            33,
            id="LeastAllocated: a resource over its allocatable scores 0, (66 + 0) / 2",
        ),
    ],
)
def test_weighted_mean(
    resource_score: ResourceScore, requested: list[int], allocatable: list[int], want: int
) -> None:
    scorer = WeightedMeanScorer([1, 1], resource_score)
    assert one_and_many(scorer, requested, requested, allocatable) == want
