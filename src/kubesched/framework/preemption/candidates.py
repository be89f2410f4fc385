"""A dry run's candidates: the bounded lists, the stop rule, and the pick.

Upstream candidate.go (candidateList), DryRunPreemption's stop rule,
SelectCandidate / pickOneNodeForPreemption. ``DryRun`` keeps two bounded lists
(non-violating, violating) and stops once there is a non-violating candidate and
``num_candidates`` in all, fed node by node or batch by batch alike. ``pick``
narrows over a criteria matrix (default criteria from ``victim_stats`` columns, or
the policy's ``ordered_score_funcs``); a final tie goes to the seeded random
source (upstream: a Go map's order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from kubesched.api.types import Time
from kubesched.framework.nodetable import IntArray
from kubesched.framework.preemption.batch import VictimBatch
from kubesched.framework.preemption.victims import (
    MIN_INT64,
    StatColumns,
    Victims,
    victim_stats_of,
)
from kubesched.framework.results import LazyNodeToStatus
from kubesched.framework.status import Code, Status, error
from kubesched.framework.types import PodInfo


@dataclass(slots=True)
class Candidate:
    name: str
    victims: Victims


class CandidateList:
    """Upstream candidateList: the first ``capacity`` candidates (Candidates or
    VictimBatch positions), later adds dropped but counted."""

    __slots__ = ("added", "capacity", "parts")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.added = 0
        self.parts: list[Candidate | tuple[VictimBatch, IntArray, IntArray]] = []

    def size(self) -> int:
        return min(self.added, self.capacity)

    def add(self, c: Candidate) -> None:
        if self.added < self.capacity:
            self.parts.append(c)
        self.added += 1

    def add_batch(self, batch: VictimBatch, positions: IntArray, rows: IntArray) -> None:
        """``add`` for the candidates at ``positions`` of ``batch`` (rows: the batch's)."""
        kept = positions[: max(self.capacity - self.added, 0)]
        if len(kept):
            self.parts.append((batch, kept, rows[kept]))
        self.added += len(positions)


class CandidateSet:
    """A dry run's candidates, non-violating first, built only when asked for."""

    __slots__ = ("_built", "_names", "_parts", "_size")

    def __init__(
        self,
        names: tuple[str, ...],
        parts: Sequence[Candidate | tuple[VictimBatch, IntArray, IntArray]],
    ) -> None:
        self._names = names
        self._parts = parts
        self._size = sum(1 if isinstance(p, Candidate) else len(p[1]) for p in parts)
        self._built: list[Candidate] | None = None

    def __len__(self) -> int:
        return self._size

    def materialize(self) -> list[Candidate]:
        if self._built is None:
            out: list[Candidate] = []
            names = self._names
            for part in self._parts:
                if isinstance(part, Candidate):
                    out.append(part)
                    continue
                batch, positions, rows = part
                victims = batch.victims(positions)
                out.extend(
                    Candidate(names[r], v) for r, v in zip(rows.tolist(), victims, strict=True)
                )
            self._built = out
        return self._built

    def at(self, i: int) -> Candidate:
        """The i-th candidate (without building the others)."""
        if self._built is not None:
            return self._built[i]
        for part in self._parts:
            if isinstance(part, Candidate):
                if i == 0:
                    return part
                i -= 1
                continue
            batch, positions, rows = part
            if i < len(positions):
                (victims,) = batch.victims(positions[i : i + 1])
                return Candidate(self._names[int(rows[i])], victims)
            i -= len(positions)
        raise IndexError(i)

    def stats(self) -> StatColumns | None:
        """Every candidate's stats as columns, or None if some candidate has none."""
        got: list[StatColumns] = []
        for part in self._parts:
            if isinstance(part, Candidate):
                return None
            batch, positions, _ = part
            columns = batch.stats(positions)
            if columns is None:
                return None
            got.append(columns)
        if len(got) == 1:
            return got[0]
        v, h, t, c, e, has, unset = (np.concatenate(col) for col in zip(*got, strict=True))
        return (v, h, t, c, e, has, unset)


class DryRun:
    """The two bounded candidate lists, the failing nodes' statuses and the errors
    of one dry run, fed node by node or batch by batch in visiting order."""

    __slots__ = ("done", "errs", "non_violating", "num_candidates", "statuses", "violating")

    def __init__(self, num_candidates: int) -> None:
        self.num_candidates = num_candidates
        self.non_violating = CandidateList(num_candidates)
        self.violating = CandidateList(num_candidates)
        self.statuses = LazyNodeToStatus()
        self.errs: list[str] = []
        self.done = False

    def size(self) -> int:
        return self.non_violating.size() + self.violating.size()

    def candidates(self, names: tuple[str, ...]) -> CandidateSet:
        return CandidateSet(names, self.non_violating.parts + self.violating.parts)

    def take_one(self, name: str, result: tuple[list[PodInfo], int, Status]) -> None:
        victims, num_violations, status = result
        if status.is_success() and victims:
            c = Candidate(name, Victims(victims, num_violations))
            (self.non_violating if num_violations == 0 else self.violating).add(c)
            nv, v = self.non_violating.size(), self.violating.size()
            if nv > 0 and nv + v >= self.num_candidates:
                self.done = True
            return
        if status.is_success():
            status = error(f'expected at least one victim pod on node "{name}"')
        if status.code == Code.ERROR:
            self.errs.append(status.message())
        self.statuses.set(name, status)

    def take_batch(self, names: tuple[str, ...], rows: IntArray, batch: VictimBatch) -> int:
        """Take the answers for ``rows`` in order up to the stop point; returns how
        many rows were taken (all of them unless the run is done)."""
        cand = batch.candidate
        cap = self.num_candidates
        nv_pool, v_pool = self.non_violating, self.violating
        stopped: bool
        if not batch.violating.any():
            # Only non-violating candidates: after its k-th one (k >= 1) the
            # non-violating list holds min(added + k, cap) >= 1, so the stop rule
            # first holds at the t-th with added + t + size(violating) >= cap.
            found = np.flatnonzero(cand)
            t = max(cap - v_pool.size() - nv_pool.added, 1)
            stopped = len(found) >= t
            if stopped:
                found = found[:t]
                end = int(found[-1]) + 1
            else:
                end = len(rows)
            if len(found):
                nv_pool.add_batch(batch, found, rows)
        else:
            nonv = cand & ~batch.violating
            viol = cand & batch.violating
            # List sizes after each row, and the first row where the stop rule holds
            # (it is only checked after adding a candidate).
            nv_size = np.minimum(nv_pool.added + np.cumsum(nonv), cap)
            v_size = np.minimum(v_pool.added + np.cumsum(viol), cap)
            stops = np.flatnonzero(cand & (nv_size > 0) & (nv_size + v_size >= cap))
            stopped = len(stops) > 0
            end = int(stops[0]) + 1 if stopped else len(rows)
            for pool, mask in ((nv_pool, nonv), (v_pool, viol)):
                got = np.flatnonzero(mask[:end])
                if len(got):
                    pool.add_batch(batch, got, rows)
        fails = np.flatnonzero(~cand[:end])
        if len(fails):
            index = batch.fail_index[fails]
            statuses = batch.statuses
            errors = [s.code == Code.ERROR for s in statuses]
            if any(errors):
                is_error = np.array(errors, dtype=np.bool_)
                for i in index[is_error[index]].tolist():
                    self.errs.append(statuses[i].message())
            self.statuses.defer(names, rows[fails], index, statuses)
        if stopped:
            self.done = True
        return end


def rotated(rows: IntArray, shift: int, a: int, b: int) -> IntArray:
    """Positions ``[a, b)`` (clamped to ``len(rows)``) of ``rows`` rotated left by
    ``shift`` (a copy)."""
    n = len(rows)
    b = min(b, n)
    s, e = shift + a, shift + b
    out: IntArray
    if e <= n:
        out = rows[s:e].copy()
    elif s >= n:
        out = rows[s - n : e - n].copy()
    else:
        out = np.concatenate((rows[s:], rows[: e - n]))
    return out


class Row(Protocol):
    """One criterion's scores (higher wins), read by candidate index."""

    def __getitem__(self, i: int, /) -> int: ...


def pick(n: int, criteria: Iterable[Row], randrange: Callable[[int], int]) -> int:
    """pickOneNodeForPreemption's narrowing of candidates ``0..n-1`` (n >= 1)
    criterion by criterion to the best score (below ``MIN_INT64`` never best); one
    left wins at once, a final tie is one ``randrange(len(left))``. Scores are read
    only for candidates still in (score functions run where upstream's do)."""
    left: Sequence[int] = range(n)
    for row in criteria:
        scores: list[int]
        if len(left) == n and isinstance(row, list):
            scores = row  # every candidate still in: a list row is its own scores
        else:
            scores = [row[i] for i in left]
        best = max(scores, default=MIN_INT64)
        best = max(best, MIN_INT64)
        if scores.count(best) != len(scores):
            left = [i for i, s in zip(left, scores, strict=True) if s == best]
        if len(left) == 1:
            return left[0]
    if len(left) == 1:
        return left[0]
    return left[randrange(len(left))]


def default_criteria(columns: StatColumns, now: Time) -> list[Row]:
    """pickOneNodeForPreemption's default criteria (higher wins) from ``victim_stats``
    columns; no start time counts as ``now``."""
    nviol, high, total, count, earliest, known, unset = columns
    latest = np.where(known, earliest, MIN_INT64)
    if unset.any():
        latest = np.where(unset, np.where(known, np.minimum(earliest, now), now), latest)
    return [
        (-nviol).tolist(),
        (-high).tolist(),
        (-total).tolist(),
        (-count).tolist(),
        latest.tolist(),
    ]


class _Scored:
    """A score function's row: ``f`` of the candidate's node, on first read."""

    __slots__ = ("_f", "_names")

    def __init__(self, f: Callable[[str], int], names: list[str]) -> None:
        self._f = f
        self._names = names

    def __getitem__(self, i: int, /) -> int:
        return self._f(self._names[i])


def criteria(
    victims: dict[str, Victims], score_funcs: list[Callable[[str], int]] | None, now: Time
) -> list[Row]:
    """The criteria matrix of ``victims``' candidates (in order): ``score_funcs``,
    or the default criteria when None."""
    if score_funcs is None:
        return default_criteria(victim_stats_of(list(victims.values())), now)
    names = list(victims)
    return [_Scored(f, names) for f in score_funcs]


def pick_one_node_for_preemption(
    victims: dict[str, Victims],
    score_funcs: list[Callable[[str], int]] | None,
    now: Time,
    randrange: Callable[[int], int],
) -> str:
    """The node ``pick`` chooses among ``victims``' (in order) by ``criteria`` (""
    when there is no candidate)."""
    if not victims:
        return ""
    names = list(victims)
    return names[pick(len(names), criteria(victims, score_funcs, now), randrange)]
