"""Victims of a preemption candidate and what pickOneNodeForPreemption reads of them.

Upstream: pkg/scheduler/framework/preemption (GetEarliestPodStartTime, the
criteria of pickOneNodeForPreemption). The five default criteria, in order:
fewest PDB violations, lowest highest-priority victim, lowest sum of victim
priorities (each + 2^31), fewest victims, latest earliest start time among the
highest-priority victims. ``default_score_funcs`` reads them off the pods (the
reference); ``victim_stats`` (one victim list) and ``victim_stat_columns``
(many, from a batched dry run) precompute them as ``VictimStats`` so that the
picks of ``candidates.py`` need no pod lists.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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


def victim_stats(pods: Sequence[PodInfo], num_pdb_violations: int) -> VictimStats:
    """``VictimStats`` of a non-empty victim list sorted by the default order (the
    first victim has the highest priority)."""
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


def victim_stat_columns(
    slots: BoolArray,
    n_violating: IntArray | None,
    priority: IntArray,
    start: IntArray,
    known: BoolArray | None,
    nonempty: BoolArray | None,
) -> StatColumns:
    """``VictimStats`` columns of each row's victims, all arrays slot-major:
    ``slots[j, i]`` says the j-th potential victim of row i stays a victim;
    ``priority``, ``start`` and ``known`` (it has a start time; None: all have)
    describe it; the first ``n_violating[i]`` potential victims violate a PDB
    (None: none does). ``nonempty``: ``slots.any(axis=0)`` when every row has a
    victim (None: not known). The victims of a row are sorted by the default
    order, so the first has the highest priority."""
    n, rows = slots.shape
    if n_violating is None:
        num_violations = np.zeros(rows, dtype=np.int64)
    else:
        num_violations = (slots & (np.arange(n)[:, None] < n_violating)).sum(axis=0)
    high = np.where(slots, priority, _INT64_MIN).max(axis=0)
    total = np.where(slots, priority + MAX_INT32_PLUS_1, 0).sum(axis=0)
    count = slots.sum(axis=0)
    top = slots & (priority == high)
    if known is None:
        earliest = np.where(top, start, _INT64_MAX).min(axis=0)
        has = nonempty if nonempty is not None else top.any(axis=0)
        return (num_violations, high, total, count, earliest, has, np.zeros(rows, np.bool_))
    top_known = top & known
    earliest = np.where(top_known, start, _INT64_MAX).min(axis=0)
    return (
        num_violations,
        high,
        total,
        count,
        earliest,
        top_known.any(axis=0),
        (top & ~known).any(axis=0),
    )


_INT64_MIN: Final = int(np.iinfo(np.int64).min)
_INT64_MAX: Final = int(np.iinfo(np.int64).max)
