"""framework.preemption.candidates: pickOneNodeForPreemption and its stats-based forms.

Cases re-express upstream's TestSelectBestCandidate / TestPickOneNodeForPreemption
and TestGetEarliestPodStartTime; the stats-based picks are checked against the
reference on random victim lists, including the random source's state after.
"""

from __future__ import annotations

import random
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.preemption import candidates as candidates_module
from kubesched.framework.preemption.candidates import (
    pick_by_stats,
    pick_index_by_stats,
    pick_one_node_for_preemption,
)
from kubesched.framework.preemption.victims import Victims, earliest_start_time, victim_stats
from kubesched.framework.types import PodInfo
from tests.framework.preemption.test_evaluator import pod
from tests.hypothesis_profiles import scaled
from tests.plugins.preemption_harness import HIGH, LOW, MID


def V(*prios_and_starts: tuple[int, int | None], violations: int = 0) -> Victims:
    return Victims(
        [
            PodInfo(pod(f"v{i}", prio, start=start))
            for i, (prio, start) in enumerate(prios_and_starts)
        ],
        violations,
    )


INT32_MIN = -(2**31)


@pytest.mark.parametrize(
    ("victims", "expected"),
    [
        pytest.param(
            {"a": V((LOW, 0), violations=1), "b": V((HIGH - 1, 0), (HIGH - 1, 0), violations=0)},
            "b",
            id="R5.8.2 1 fewest PDB violations first",
        ),
        pytest.param(
            {"a": V((MID, 0)), "b": V((LOW, 0), (LOW, 0), (LOW, 0))},
            "b",
            id="R5.8.2 2 lowest highest-priority victim",
        ),
        pytest.param(
            {"a": V((MID, 0), (MID, 0)), "b": V((MID, 0), (LOW, 0))},
            "b",
            id="R5.8.2 3 lowest sum of priorities",
        ),
        pytest.param(
            {"a": V((MID, 0), (-1000, 0), (-1000, 0)), "b": V((MID, 0), (LOW, 0))},
            "b",
            id="R5.8.2 3 each victim adds 2^31 so negative priorities do not buy more victims",
        ),
        pytest.param(
            # Sums tie exactly: 1e9 + 2^31 == 1e9 + INT32_MIN + 2 * 2^31.
            {"a": V((10**9, 0)), "b": V((10**9, 0), (INT32_MIN, 0))},
            "a",
            id="R5.8.2 4 fewest victims when highest priority and sum tie",
        ),
        pytest.param(
            {"a": V((MID, 5), (MID, 9)), "b": V((MID, 7), (MID, 8))},
            "b",
            id="R5.8.2 5 the latest earliest start time wins",
        ),
        pytest.param(
            {"a": V((MID, 9), (LOW, 1)), "b": V((MID, 7), (LOW, 8))},
            "a",
            id="R5.8.2 5 only victims at the highest priority count for the start time",
        ),
        pytest.param(
            {"a": V((MID, None)), "b": V((MID, 50))},
            "a",
            id="R5.8.2 5 a victim without start time counts as started now",
        ),
    ],
)
def test_pick_one_node_for_preemption(victims: dict[str, Victims], expected: str) -> None:
    def no_random(n: int) -> int:
        raise AssertionError("a unique best node needs no random draw")

    assert pick_one_node_for_preemption(victims, None, 100, no_random) == expected
    # Criteria are about the victims, not the order the candidates come in.
    flipped = dict(reversed(list(victims.items())))
    assert pick_one_node_for_preemption(flipped, None, 100, no_random) == expected


@pytest.mark.parametrize("draw", [0, 1, 2])
def test_pick_one_node_final_tie_uses_the_random_source(draw: int) -> None:
    victims = {n: V((MID, 3)) for n in ("a", "b", "c")}
    asked: list[int] = []

    def randrange(n: int) -> int:
        asked.append(n)
        return draw

    assert pick_one_node_for_preemption(victims, None, 100, randrange) == "abc"[draw]
    assert asked == [3]


def test_pick_one_node_ties_kept_in_order_only_among_the_best() -> None:
    """After a criterion, only the tied best nodes stay (the random draw is among them)."""
    victims = {"a": V((MID, 3)), "b": V((HIGH, 3)), "c": V((MID, 3))}
    assert pick_one_node_for_preemption(victims, None, 100, lambda n: n - 1) == "c"


def test_pick_one_node_custom_funcs_replace_defaults() -> None:
    """R5.8.3: a non-nil OrderedScoreFuncs replaces the whole default list."""
    victims = {"a": V((LOW, 0)), "b": V((HIGH, 0), (HIGH, 0), violations=3)}

    def most_victims(node: str) -> int:
        return len(victims[node].pods)

    assert pick_one_node_for_preemption(victims, [most_victims], 0, lambda n: 0) == "b"
    assert pick_one_node_for_preemption({}, None, 0, lambda n: 0) == ""


@st.composite
def _victim_lists(draw: st.DrawFn) -> dict[str, Victims]:
    """Candidates whose victims are sorted by the default order (priority, then
    start time, unset = now), as a batched dry run produces them."""
    out: dict[str, Victims] = {}
    for i in range(draw(st.integers(1, 6))):
        pods = []
        for j in range(draw(st.integers(1, 4))):
            p = pod(f"v{i}-{j}", draw(st.sampled_from([LOW, MID, HIGH])))
            p.start_time = draw(st.sampled_from([None, 10, 20, 99, 150]))
            pods.append(PodInfo(p))
        pods.sort(
            key=lambda q: (-q.pod.priority, 100 if q.pod.start_time is None else q.pod.start_time)
        )
        out[f"n{i}"] = Victims(pods, draw(st.integers(0, 2)))
    return out


@settings(max_examples=scaled(300), deadline=None)
@given(victims=_victim_lists(), now=st.sampled_from([15, 100, 200]), seed=st.integers(0, 9))
def test_pick_by_stats_equals_pick_one_node(
    victims: dict[str, Victims], now: int, seed: int
) -> None:
    """The batched dry run's pick (stats read off arrays, no victim lists) chooses what
    pickOneNodeForPreemption chooses with the default criteria, drawing from the
    random source exactly as often."""
    want_rng = random.Random(seed)
    want = pick_one_node_for_preemption(victims, None, now, want_rng.randrange)
    after = want_rng.getstate()
    with_stats = {
        name: Victims(
            v.pods, v.num_pdb_violations, stats=victim_stats(v.pods, v.num_pdb_violations)
        )
        for name, v in victims.items()
    }
    stats = [victim_stats(v.pods, v.num_pdb_violations) for v in victims.values()]
    columns = (
        np.array([s[0] for s in stats], dtype=np.int64),
        np.array([s[1] for s in stats], dtype=np.int64),
        np.array([s[2] for s in stats], dtype=np.int64),
        np.array([s[3] for s in stats], dtype=np.int64),
        np.array([s[4] or 0 for s in stats], dtype=np.int64),
        np.array([s[4] is not None for s in stats], dtype=np.bool_),
        np.array([s[5] for s in stats], dtype=np.bool_),
    )
    for few in (candidates_module._FEW_CANDIDATES, 0):  # the tuple path, then numpy's
        with patch.object(candidates_module, "_FEW_CANDIDATES", few):
            rng = random.Random(seed)
            assert pick_by_stats(with_stats, now, rng.randrange) == want
            assert rng.getstate() == after
            rng = random.Random(seed)
            assert list(victims)[pick_index_by_stats(columns, now, rng.randrange)] == want
            assert rng.getstate() == after


@pytest.mark.parametrize("draw", [0, 1])
def test_pick_by_stats_beyond_int64_falls_back_to_the_reference(draw: int) -> None:
    """Stats that do not fit int64 (a start time past 2^63 ns) are picked by the
    reference on the pods: the same node and the same random draws."""
    late = 2**63 + 5  # beyond int64: the columns cannot hold it
    victims = {
        name: Victims([PodInfo(pod(f"v-{name}", LOW, start=late))], 0) for name in ("a", "b", "c")
    }
    for v in victims.values():
        v.stats = victim_stats(v.pods, 0)
    # Every criterion ties: the reference draws randrange(3) once.
    want_rng = random.Random(draw)
    want = pick_one_node_for_preemption(victims, None, 0, want_rng.randrange)
    rng = random.Random(draw)
    assert pick_by_stats(victims, 0, rng.randrange) == want
    assert rng.getstate() == want_rng.getstate()


@pytest.mark.parametrize(
    ("victims", "expected"),
    [
        pytest.param(V(), None, id="GetEarliestPodStartTime no victims"),
        pytest.param(V((LOW, 5), (MID, 9), (MID, 7)), 7, id="GetEarliestPodStartTime max prio"),
        pytest.param(V((MID, None), (MID, 70)), 70, id="GetEarliestPodStartTime nil is now"),
    ],
)
def test_earliest_start_time(victims: Victims, expected: int | None) -> None:
    assert earliest_start_time(victims, 100) == expected
