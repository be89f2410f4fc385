"""WeightedMeanScorer: the per-node and vector forms agree for both strategies."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.plugins.noderesources.least_allocated import LeastAllocatedScorer
from kubesched.plugins.noderesources.most_allocated import MostAllocatedScorer
from kubesched.plugins.noderesources.weighted_mean import WeightedMeanScorer
from tests.hypothesis_profiles import scaled

amount = st.integers(min_value=0, max_value=10**12)
resource = st.tuples(amount, amount, st.integers(min_value=1, max_value=100))


@pytest.mark.parametrize("cls", [LeastAllocatedScorer, MostAllocatedScorer])
@settings(max_examples=scaled(200), deadline=None)
@given(nodes=st.lists(st.lists(resource, min_size=2, max_size=2), min_size=1, max_size=8))
def test_vector_equals_per_node(
    cls: type[WeightedMeanScorer], nodes: list[list[tuple[int, int, int]]]
) -> None:
    weights = [r[2] for r in nodes[0]]
    scorer = cls(weights)
    req = [np.array([n[k][0] for n in nodes], dtype=np.int64) for k in range(2)]
    alloc = [np.array([n[k][1] for n in nodes], dtype=np.int64) for k in range(2)]
    got = scorer.score_vector(req, req, alloc).tolist()
    want = [scorer.score([r[0] for r in n], [r[0] for r in n], [r[1] for r in n]) for n in nodes]
    assert got == want


@pytest.mark.parametrize(
    ("cls", "requested", "allocatable", "want"),
    [
        pytest.param(
            LeastAllocatedScorer,
            [1000, 0],
            [4000, 0],
            75,
            id="LeastAllocated skips a resource with no allocatable",
        ),
        pytest.param(
            MostAllocatedScorer,
            [1000, 0],
            [4000, 0],
            25,
            id="MostAllocated skips a resource with no allocatable",
        ),
        pytest.param(LeastAllocatedScorer, [0, 0], [0, 0], 0, id="no resource takes part scores 0"),
        pytest.param(
            MostAllocatedScorer,
            [5000, 2],
            [4000, 4],
            75,
            id="MostAllocated caps requested at allocatable",
        ),
    ],
)
def test_weighted_mean(
    cls: type[WeightedMeanScorer], requested: list[int], allocatable: list[int], want: int
) -> None:
    assert cls([1, 1]).score(requested, requested, allocatable) == want
