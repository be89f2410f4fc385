"""Victims of a preemption candidate and pickOneNodeForPreemption (R5.8).

Upstream: pkg/scheduler/framework/preemption (SelectCandidate,
pickOneNodeForPreemption, GetEarliestPodStartTime). The five default criteria,
in order: fewest PDB violations, lowest highest-priority victim, lowest sum of
victim priorities (each + 2^31), fewest victims, latest earliest start time
among the highest-priority victims; a remaining tie is broken by the seeded
random source. ``pick_one_node_for_preemption`` is the reference over
``Victims``; ``pick_by_stats`` / ``pick_index_by_stats`` read the same criteria
off precomputed ``VictimStats`` (the batched dry run's columns) and consume
``randrange`` exactly as the reference does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import compress
from typing import Final

import numpy as np

from kubesched.api.types import Time
from kubesched.framework.nodetable import BoolArray, IntArray
from kubesched.framework.types import PodInfo

MAX_INT32_PLUS_1: Final = 2**31
MIN_INT64: Final = -(2**63)


VictimStats = tuple[int, int, int, int, int | None, bool]
"""What pickOneNodeForPreemption's default criteria read of a victim list, for
victims sorted most important first by the default order: (PDB violations,
highest priority, sum of priorities each + 2^31, number of victims, earliest
known start time among the highest-priority victims or None, whether one of
those has no start time — "now" at picking time)."""


StatColumns = tuple[IntArray, IntArray, IntArray, IntArray, IntArray, BoolArray, BoolArray]
"""``VictimStats`` of many candidates as arrays: violations, highest priority,
priority sum, count, earliest known start (valid where the next is True), has
a known start, has an unset start."""


class Victims:
    """The victims on one node and how many of them violate a PDB.

    A batched dry run hands ``make`` (building ``pods`` on first use) and the
    victims' ``stats`` (see ``VictimStats``), so that candidates that are not
    picked never build their lists."""

    __slots__ = ("_make", "_pods", "num_pdb_violations", "stats")

    def __init__(
        self,
        pods: list[PodInfo] | None = None,
        num_pdb_violations: int = 0,
        *,
        make: Callable[[], list[PodInfo]] | None = None,
        stats: VictimStats | None = None,
    ) -> None:
        self._pods = pods
        self._make = make
        self.num_pdb_violations = num_pdb_violations
        self.stats = stats

    @property
    def pods(self) -> list[PodInfo]:
        if self._pods is None:
            self._pods = self._make() if self._make is not None else []
            self._make = None
        return self._pods

    @pods.setter
    def pods(self, value: list[PodInfo]) -> None:
        self._pods = value
        self._make = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Victims):
            return NotImplemented
        return (self.pods, self.num_pdb_violations) == (other.pods, other.num_pdb_violations)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Victims(pods={self.pods!r}, num_pdb_violations={self.num_pdb_violations!r})"


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
            t = pod_start_time(p, now)
            earliest = min(earliest, t)
        elif prio > max_prio:
            max_prio = prio
            earliest = pod_start_time(p, now)
    return earliest


def default_score_funcs(victims: dict[str, Victims], now: Time) -> list[Callable[[str], int]]:
    """The five criteria of pickOneNodeForPreemption, as score functions (higher wins)."""

    def min_pdb_violations(node: str) -> int:
        return -victims[node].num_pdb_violations

    def min_highest_priority(node: str) -> int:
        return -victims[node].pods[0].pod.priority

    def min_sum_priorities(node: str) -> int:
        return -sum(p.pod.priority + MAX_INT32_PLUS_1 for p in victims[node].pods)

    def min_num_pods(node: str) -> int:
        return -len(victims[node].pods)

    def latest_start_time(node: str) -> int:
        t = earliest_start_time(victims[node], now)
        return MIN_INT64 if t is None else t

    return [
        min_pdb_violations,
        min_highest_priority,
        min_sum_priorities,
        min_num_pods,
        latest_start_time,
    ]


def pick_one_node_for_preemption(
    victims: dict[str, Victims],
    score_funcs: list[Callable[[str], int]] | None,
    now: Time,
    randrange: Callable[[int], int],
) -> str:
    """Narrow the candidates criterion by criterion; a final tie is broken by
    ``randrange`` (upstream returns the first of a Go map's random order)."""
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


def pick_by_stats(victims: dict[str, Victims], now: Time, randrange: Callable[[int], int]) -> str:
    """``pick_one_node_for_preemption`` with the default criteria, read off each
    candidate's ``Victims.stats`` instead of its pods (same narrowing — keep the
    candidates with the best score, in order — and the same use of ``randrange``)."""
    names = list(victims)
    scores: list[tuple[int, int, int, int, int]] = []
    for v in victims.values():
        st = v.stats
        assert st is not None
        nviol, high, total, count, earliest, unset = st
        if unset:
            earliest = now if earliest is None else min(earliest, now)
        scores.append((-nviol, -high, -total, -count, MIN_INT64 if earliest is None else earliest))
    try:
        table = np.array(scores, dtype=np.int64).T
    except OverflowError:
        return _pick_by_scores(names, scores, randrange)
    candidates = np.arange(len(names))
    for k in range(5):
        column = table[k, candidates]
        candidates = candidates[column == column.max()]
        if len(candidates) == 1:
            return names[int(candidates[0])]
    return names[int(candidates[randrange(len(candidates))])]


_FEW_CANDIDATES: Final = 256
"""Up to this many candidates, ``pick_index_by_stats`` compares Python tuples."""


def pick_index_by_stats(columns: StatColumns, now: Time, randrange: Callable[[int], int]) -> int:
    """``pick_by_stats`` on columns (``CandidateSet.stats``): the index of the
    chosen candidate."""
    nviol, high, total, count, earliest, known, unset = columns
    latest = np.where(known, earliest, MIN_INT64)
    if unset.any():
        latest = np.where(unset, np.where(known, np.minimum(earliest, now), now), latest)
    n = len(nviol)
    if n <= _FEW_CANDIDATES:
        scores = np.array((nviol, high, total, count, latest))
        if bool((scores.max(axis=1) == scores.min(axis=1)).all()):
            # Every column constant (a homogeneous cluster): every candidate ties.
            return 0 if n == 1 else randrange(n)
        # Narrowing column by column keeps exactly the rows whose score tuple is
        # the lexicographic maximum (in order); tuples beat numpy's per-call cost.
        scores[:4] *= -1  # fewer victims / violations / lower priorities are better
        keys = list(zip(*scores.tolist(), strict=False))  # equal lengths by construction
        best = max(keys)
        if keys.count(best) == 1:
            return keys.index(best)
        ties = list(compress(range(len(keys)), map(best.__eq__, keys)))
        return ties[randrange(len(ties))]
    candidates = np.arange(len(nviol))
    for column in (-nviol, -high, -total, -count, latest):
        scores = column[candidates]
        candidates = candidates[scores == scores.max()]
        if len(candidates) == 1:
            return int(candidates[0])
    return int(candidates[randrange(len(candidates))])


def _pick_by_scores(
    names: list[str], scores: list[tuple[int, int, int, int, int]], randrange: Callable[[int], int]
) -> str:
    """``pick_by_stats`` with Python ints (scores beyond int64)."""
    candidates = list(range(len(names)))
    for k in range(5):
        best = MIN_INT64
        selected: list[int] = []
        for c in candidates:
            score = scores[c][k]
            if score > best:
                best = score
                selected = []
            if score == best:
                selected.append(c)
        if len(selected) == 1:
            return names[selected[0]]
        candidates = selected
    if len(candidates) == 1:
        return names[candidates[0]]
    return names[candidates[randrange(len(candidates))]]


def victim_stats(pods: Sequence[PodInfo], num_pdb_violations: int) -> VictimStats:
    """``VictimStats`` of a non-empty victim list sorted by the default order (for
    tests and the per-node path)."""
    high = pods[0].pod.priority
    earliest: int | None = None
    unset = False
    for p in pods:
        if p.pod.priority == high:
            t = p.pod.start_time
            if t is None:
                unset = True
            elif earliest is None or t < earliest:
                earliest = t
    total = sum(p.pod.priority + MAX_INT32_PLUS_1 for p in pods)
    return (num_pdb_violations, high, total, len(pods), earliest, unset)
