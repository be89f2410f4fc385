"""framework.preemption.candidates: the one pick (pickOneNodeForPreemption).

Cases re-express upstream's TestSelectBestCandidate / TestPickOneNodeForPreemption
and TestGetEarliestPodStartTime. The reference criteria (upstream's score
functions read straight off the pods, and its narrowing loop) live here only, as
the oracle: the one pick over ``victim_stats`` columns or over score functions
must choose what they choose, with the same random draws, on random candidate
sets with ties and values beyond int64.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.types import Time
from kubesched.framework.preemption.candidates import (
    default_criteria,
    pick,
    pick_one_node_for_preemption,
)
from kubesched.framework.preemption.victims import (
    MAX_INT32_PLUS_1,
    MIN_INT64,
    Victims,
    victim_stats,
    victim_stats_of,
)
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


# ------------------------------------------------------------------ the oracle
def pod_start_time(pod: PodInfo, now: Time) -> Time:
    """``status.startTime``, or now when unset (upstream GetPodStartTime)."""
    t = pod.pod.start_time
    return now if t is None else t


def earliest_start_time(victims: Victims, now: Time) -> Time | None:
    """Earliest start time among the victims of the highest priority
    (upstream GetEarliestPodStartTime)."""
    pods = victims.pods
    if not pods:
        return None
    earliest = pod_start_time(pods[0], now)
    max_prio = pods[0].pod.priority
    for p in pods:
        prio = p.pod.priority
        if prio == max_prio:
            earliest = min(earliest, pod_start_time(p, now))
        elif prio > max_prio:
            max_prio = prio
            earliest = pod_start_time(p, now)
    return earliest


def default_score_funcs(victims: dict[str, Victims], now: Time) -> list[Callable[[str], int]]:
    """The five criteria of pickOneNodeForPreemption, as score functions (higher wins)."""

    def latest_start_time(node: str) -> int:
        t = earliest_start_time(victims[node], now)
        return MIN_INT64 if t is None else t

    return [
        lambda node: -victims[node].num_pdb_violations,
        lambda node: -victims[node].pods[0].pod.priority,
        lambda node: -sum(p.pod.priority + MAX_INT32_PLUS_1 for p in victims[node].pods),
        lambda node: -len(victims[node].pods),
        latest_start_time,
    ]


def reference_pick(
    victims: dict[str, Victims],
    score_funcs: list[Callable[[str], int]] | None,
    now: Time,
    randrange: Callable[[int], int],
) -> str:
    """Upstream's narrowing loop, node by node."""
    if not victims:
        return ""
    candidates = list(victims)
    funcs = score_funcs if score_funcs is not None else default_score_funcs(victims, now)
    for f in funcs:
        best = MIN_INT64
        selected: list[str] = []
        for node in candidates:
            score = f(node)
            if score > best:
                best = score
                selected = []
            if score == best:
                selected.append(node)
        if len(selected) == 1:
            return selected[0]
        candidates = selected
    if len(candidates) == 1:
        return candidates[0]
    return candidates[randrange(len(candidates))]


# ------------------------------------------------------------------ tables


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

    for given_order in (victims, dict(reversed(list(victims.items())))):
        # Criteria are about the victims, not the order the candidates come in.
        assert pick_one_node_for_preemption(given_order, None, 100, no_random) == expected
        assert reference_pick(given_order, None, 100, no_random) == expected
        # The batched dry run's form: the stats columns of all candidates at once.
        columns = victim_stats_of(list(given_order.values()))
        i = pick(len(given_order), default_criteria(columns, 100), no_random)
        assert list(given_order)[i] == expected


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


def test_score_funcs_run_only_on_the_candidates_still_in() -> None:
    """A criterion is asked about the nodes left by the ones before, as upstream's
    loop asks (and not at all once one node is left)."""
    victims = {n: V((LOW, 0)) for n in ("a", "b", "c")}
    asked: list[tuple[int, str]] = []

    def scorer(k: int, scores: dict[str, int]) -> Callable[[str], int]:
        def f(node: str) -> int:
            asked.append((k, node))
            return scores[node]

        return f

    funcs = [
        scorer(0, {"a": 1, "b": 2, "c": 2}),
        scorer(1, {"a": 9, "b": 0, "c": 1}),
        scorer(2, {"a": 0, "b": 0, "c": 0}),
    ]
    assert pick_one_node_for_preemption(victims, funcs, 0, lambda n: 0) == "c"
    assert asked == [(0, "a"), (0, "b"), (0, "c"), (1, "b"), (1, "c")]


def test_pick_all_tied_draws_once_over_all() -> None:
    asked: list[int] = []

    def randrange(n: int) -> int:
        asked.append(n)
        return n - 1

    assert pick(4, [[5, 5, 5, 5], [0, 0, 0, 0]], randrange) == 3
    assert pick(1, [[5]], randrange) == 0
    assert pick(3, [], randrange) == 2
    assert asked == [4, 3]


# ------------------------------------------------------------------ properties
_PRIORITIES = [LOW, MID, HIGH, INT32_MIN, 2**31 - 1]
_STARTS = [None, 10, 20, 99, 150]
_HUGE_PRIORITIES = [*_PRIORITIES, 2**62, -(2**62)]
_HUGE_STARTS = [*_STARTS, 2**63 + 5, -(2**63) - 7]


@st.composite
def _victim_lists(draw: st.DrawFn, sort: bool, huge: bool = True) -> dict[str, Victims]:
    """Candidates with one to four victims; ``sort``: sorted by the default order
    (priority, then start time, unset = now), as a batched dry run produces them;
    ``huge``: priorities and start times beyond int32/int64 too."""
    out: dict[str, Victims] = {}
    priorities = _HUGE_PRIORITIES if huge else _PRIORITIES
    starts = _HUGE_STARTS if huge else _STARTS
    for i in range(draw(st.integers(1, 7))):
        pods = []
        for j in range(draw(st.integers(1, 4))):
            p = pod(f"v{i}-{j}", draw(st.sampled_from(priorities)))
            p.start_time = draw(st.sampled_from(starts))
            pods.append(PodInfo(p))
        if sort:
            pods.sort(
                key=lambda q: (
                    -q.pod.priority,
                    100 if q.pod.start_time is None else q.pod.start_time,
                )
            )
        # Violating victims are some of the victims (upstream counts them among them).
        out[f"n{i}"] = Victims(pods, draw(st.integers(0, min(2, len(pods)))))
    return out


def _same_pick(
    got: Callable[[Callable[[int], int]], str],
    want: Callable[[Callable[[int], int]], str],
    seed: int,
) -> None:
    """Both picks give the same node (or the same error) and leave the random
    source in the same state."""
    want_rng, got_rng = random.Random(seed), random.Random(seed)
    try:
        expected: str | type[Exception] = want(want_rng.randrange)
    except ValueError:
        expected = ValueError
    try:
        actual: str | type[Exception] = got(got_rng.randrange)
    except ValueError:
        actual = ValueError
    assert actual == expected
    assert got_rng.getstate() == want_rng.getstate()


@settings(max_examples=scaled(300), deadline=None)
@given(
    victims=st.booleans().flatmap(_victim_lists),
    # ``now`` is a Time (int64 nanoseconds), as every clock gives it.
    now=st.sampled_from([15, 100, 200, 2**63 - 1]),
    seed=st.integers(0, 9),
)
def test_pick_equals_the_reference_criteria(
    victims: dict[str, Victims], now: int, seed: int
) -> None:
    """The one pick with the default criteria (``victim_stats`` columns, int64 or
    object) chooses what upstream's score functions choose, drawing from the
    random source exactly as they do — victims in any order (upstream reads the
    first victim's priority), values beyond int64 included."""
    _same_pick(
        lambda r: pick_one_node_for_preemption(victims, None, now, r),
        lambda r: reference_pick(victims, None, now, r),
        seed,
    )


_SCORES = st.sampled_from([0, 1, -1, 2**63, 2**63 - 1, MIN_INT64, MIN_INT64 - 1, 2**70])


@settings(max_examples=scaled(300), deadline=None)
@given(
    scores=st.integers(1, 7).flatmap(
        lambda n: st.lists(st.lists(_SCORES, min_size=n, max_size=n), max_size=4)
    ),
    seed=st.integers(0, 9),
)
def test_pick_equals_the_reference_on_score_funcs(scores: list[list[int]], seed: int) -> None:
    """Custom score functions (any Python int, past int64 both ways, many ties):
    the same node, the same draws (or the same error) as upstream's loop."""
    n = len(scores[0]) if scores else 3
    victims = {f"n{i}": V((LOW, 0)) for i in range(n)}

    def score_func(row: list[int]) -> Callable[[str], int]:
        return lambda node: row[int(node[1:])]

    def funcs() -> list[Callable[[str], int]]:
        return [score_func(row) for row in scores]

    _same_pick(
        lambda r: pick_one_node_for_preemption(victims, funcs(), 0, r),
        lambda r: reference_pick(victims, funcs(), 0, r),
        seed,
    )


@settings(max_examples=scaled(200), deadline=None)
@given(victims=_victim_lists(True, huge=False), seed=st.integers(0, 2**31))
def test_victim_stats_of_a_batch_equal_those_of_each_list(
    victims: dict[str, Victims], seed: int
) -> None:
    """A batch's columns (slot-major potential victims, reprieved ones not set,
    the violating ones first) equal ``victim_stats`` of each candidate's own list."""
    rng = random.Random(seed)
    lists = list(victims.values())
    longest = max(len(v.pods) for v in lists) + 1
    k = len(lists)
    slots = np.zeros((longest, k), dtype=np.bool_)
    prio = np.zeros((longest, k), dtype=np.int64)
    start = np.zeros((longest, k), dtype=np.int64)
    known = np.ones((longest, k), dtype=np.bool_)
    n_violating = np.zeros(k, dtype=np.int64)
    chosen: list[Victims] = []
    for i, v in enumerate(lists):
        pods = v.pods
        nv = rng.randint(0, len(pods))
        n_violating[i] = nv
        for j, p in enumerate(pods):
            slots[j, i] = True
            prio[j, i] = p.pod.priority
            start[j, i] = p.pod.start_time or 0
            known[j, i] = p.pod.start_time is not None
        # A reprieved potential victim after them: not a victim, not counted.
        prio[len(pods), i] = rng.choice([LOW, MID, HIGH])
        start[len(pods), i] = rng.randint(0, 10)
        chosen.append(Victims(pods, nv))
    got = victim_stats(slots, prio, start, known=known, n_violating=n_violating)
    want = victim_stats_of(chosen)
    for k in (0, 1, 2, 3, 5, 6):  # all but the earliest start
        assert got[k].tolist() == want[k].tolist(), k
    # The earliest start: where one is known.
    assert np.where(got[5], got[4], 0).tolist() == np.where(want[5], want[4], 0).tolist()


@pytest.mark.parametrize(
    ("victims", "expected"),
    [
        pytest.param(V(), None, id="GetEarliestPodStartTime no victims"),
        pytest.param(V((LOW, 5), (MID, 9), (MID, 7)), 7, id="GetEarliestPodStartTime max prio"),
        pytest.param(V((MID, None), (MID, 70)), 70, id="GetEarliestPodStartTime nil is now"),
    ],
)
def test_earliest_start_time(victims: Victims, expected: int | None) -> None:
    """The oracle's GetEarliestPodStartTime, and the stats' earliest start."""
    assert earliest_start_time(victims, 100) == expected
    if victims.pods:
        _, _, _, _, earliest, has, unset = victim_stats_of([victims])
        got = min(int(earliest[0]), 100) if bool(unset[0]) else int(earliest[0])
        assert got == expected and bool(has[0])
