"""Victims of a preemption candidate and what pickOneNodeForPreemption reads of them.

pickOneNodeForPreemption's default criteria, in order: fewest PDB violations,
lowest priority of the first (highest) victim, lowest sum of priorities (each +
2^31), fewest victims, latest earliest start time among the highest-priority
victims (GetEarliestPodStartTime). ``victim_stats`` alone reads them off victims,
as columns ``candidates.pick`` reads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from kubesched.framework.nodetable import BoolArray, IntArray
from kubesched.framework.types import PodInfo

MAX_INT32_PLUS_1: Final = 2**31
MIN_INT64: Final = -(2**63)


StatColumns = tuple[
    npt.NDArray[Any],
    npt.NDArray[Any],
    npt.NDArray[Any],
    npt.NDArray[Any],
    npt.NDArray[Any],
    BoolArray,
    BoolArray,
]
"""Per candidate: violations, first victim's priority, priority sum, count,
earliest known start among the highest-priority victims, whether one has a known
start, whether one has none ("now"). int64, or object arrays past int64."""


class Victims:
    """The victims on one node and how many violate a PDB (``make`` builds ``pods``
    on first use)."""

    __slots__ = ("_make", "_pods", "num_pdb_violations")

    def __init__(
        self,
        pods: list[PodInfo] | None = None,
        num_pdb_violations: int = 0,
        *,
        make: Callable[[], list[PodInfo]] | None = None,
    ) -> None:
        self._pods = pods
        self._make = make
        self.num_pdb_violations = num_pdb_violations

    @property
    def pods(self) -> list[PodInfo]:
        if self._pods is None:
            self._pods = self._make() if self._make is not None else []
            self._make = None
        return self._pods

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Victims):
            return NotImplemented
        return (self.pods, self.num_pdb_violations) == (other.pods, other.num_pdb_violations)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Victims(pods={self.pods!r}, num_pdb_violations={self.num_pdb_violations!r})"


def victim_stats(
    slots: BoolArray,
    priority: npt.NDArray[Any],
    start: npt.NDArray[Any],
    known: BoolArray,
    n_violating: IntArray | None = None,
    *,
    first_is_highest: bool = True,
) -> StatColumns:
    """``StatColumns`` of each row's victims, arrays slot-major: ``slots[j, i]`` the
    j-th potential victim of row i is one, with ``priority`` / ``start`` /
    ``known``; the first ``n_violating[i]`` violate a PDB (None: none).
    ``first_is_highest``: default order (else the first set slot is ``Pods[0]``)."""
    n, rows = slots.shape
    low, high_end = (_INT64_MIN, _INT64_MAX) if priority.dtype != object else _UNBOUNDED
    if n_violating is None:
        num_violations = np.zeros(rows, dtype=np.int64)
    else:
        num_violations = (slots & (np.arange(n)[:, None] < n_violating)).sum(axis=0)
    top_priority = np.where(slots, priority, low).max(axis=0)
    if first_is_highest:
        high = top_priority
    else:
        high = priority[slots.argmax(axis=0), np.arange(rows)]
    total = np.where(slots, priority + MAX_INT32_PLUS_1, 0).sum(axis=0)
    count = slots.sum(axis=0)
    top = slots & (priority == top_priority)
    top_known = top & known
    earliest = np.where(top_known, start, high_end).min(axis=0)
    return (
        num_violations,
        high,
        total,
        count,
        earliest,
        top_known.any(axis=0),
        (top & ~known).any(axis=0),
    )


def victim_stats_of(victims: Sequence[Victims]) -> StatColumns:
    """``victim_stats`` of victim lists (the per-node path)."""
    longest = max((len(v.pods) for v in victims), default=0)
    k = len(victims)
    prio: list[list[int]] = [[0] * k for _ in range(longest)]
    start: list[list[int]] = [[0] * k for _ in range(longest)]
    known = np.zeros((longest, k), dtype=np.bool_)
    lens = np.zeros(k, dtype=np.int64)
    for i, v in enumerate(victims):
        pods = v.pods
        lens[i] = len(pods)
        for j, p in enumerate(pods):
            prio[j][i] = p.pod.priority
            t = p.pod.start_time
            if t is not None:
                start[j][i] = t
                known[j, i] = True
    prio_m: npt.NDArray[Any]
    start_m: npt.NDArray[Any]
    try:
        prio_m = np.array(prio, dtype=np.int64).reshape(longest, k)
        start_m = np.array(start, dtype=np.int64).reshape(longest, k)
        # Sums of priorities + 2^31 must fit as well.
        if longest and int(np.abs(prio_m).max()) + MAX_INT32_PLUS_1 > _INT64_MAX // longest:
            raise OverflowError
    except OverflowError:
        prio_m = _objects(prio, longest, k)
        start_m = _objects(start, longest, k)
    slots = np.arange(longest)[:, None] < lens
    nviol = np.array([v.num_pdb_violations for v in victims], dtype=np.int64)
    return victim_stats(slots, prio_m, start_m, known, nviol, first_is_highest=False)


def _objects(values: list[list[int]], n: int, k: int) -> npt.NDArray[np.object_]:
    out = np.empty((n, k), dtype=object)
    for j, row in enumerate(values):
        out[j, :] = row
    return out


_INT64_MIN: Final = int(np.iinfo(np.int64).min)
_INT64_MAX: Final = int(np.iinfo(np.int64).max)
_UNBOUNDED: Final = (-float("inf"), float("inf"))
"""Bounds for object columns (Python ints of any size compare exactly with them)."""
