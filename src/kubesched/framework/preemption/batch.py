"""The answers of the batched dry run for one batch of rows (``dry_run.py``).

``VictimBatch`` is what the Evaluator's stop rule reads (``candidates.DryRun``):
which rows are candidates, the others' statuses, and — built only for the
candidates the Evaluator keeps — their victims and ``victim_stats`` columns.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from kubesched.framework.nodetable import BoolArray, IntArray
from kubesched.framework.preemption.victims import StatColumns, Victims
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo


class VictimBatch:
    """SelectVictimsOnNode's answers for ``rows``: ``candidate[i]`` (success with a
    victim), ``violating[i]``, else ``statuses[fail_index[i]]``. Rows passing with
    every victim removed are numbered by ``pos`` (-1: not) into ``slots``
    (slot-major: ``slots[j, k]`` victim j of the k-th stays one), ``entries`` and
    ``n_violating``. ``stats`` not None: default order and criteria."""

    __slots__ = (
        "_entries",
        "_key",
        "_n_violating",
        "_num_violations",
        "_stats",
        "candidate",
        "fail_index",
        "pos",
        "slots",
        "statuses",
        "violating",
    )

    def __init__(
        self,
        candidate: BoolArray,
        violating: BoolArray,
        fail_index: IntArray,
        statuses: list[Status],
        pos: IntArray,
        slots: BoolArray,
        entries: npt.NDArray[np.object_],
        n_violating: IntArray,
        key: Callable[[PodInfo], Any],
        stats: StatColumns | None,
    ) -> None:
        self.candidate = candidate
        self.violating = violating
        self.fail_index = fail_index
        self.statuses = statuses
        self.pos = pos
        self.slots = slots
        self._entries = entries
        self._n_violating = n_violating
        self._key = key
        self._stats = stats
        self._num_violations: list[int] | None = None

    def victims(self, positions: IntArray) -> list[Victims]:
        """Victims of the candidates at ``positions`` (in the per-node path's
        order; lists built on first use)."""
        ks = self.pos[positions]
        if self._stats is not None:
            # The stats count each candidate's violations.
            nviol = self._stats[0][ks].tolist()
            return [
                Victims(None, v, make=functools.partial(self._pods, k))
                for k, v in zip(ks.tolist(), nviol, strict=True)
            ]
        if self._num_violations is None:
            n = self.slots.shape[0]
            first = np.arange(n)[:, None] < self._n_violating
            self._num_violations = (self.slots & first).sum(axis=0).tolist()
        return [Victims(self._pods(k), self._num_violations[k]) for k in ks.tolist()]

    def stats(self, positions: IntArray) -> StatColumns | None:
        """``victim_stats`` columns of the candidates at ``positions`` (None unless
        defaults apply); maybe views: never write."""
        if self._stats is None:
            return None
        ks = self.pos[positions]
        v, h, t, c, e, has, unset = self._stats
        n = len(ks)
        if n:
            first = ks.item(0)
            if ks.item(n - 1) - first + 1 == n:
                # Consecutive candidates (the usual run of kept ones): views.
                sl = slice(first, first + n)
                return (v[sl], h[sl], t[sl], c[sl], e[sl], has[sl], unset[sl])
        return (v[ks], h[ks], t[ks], c[ks], e[ks], has[ks], unset[ks])

    def _pods(self, k: int) -> list[PodInfo]:
        slots: list[int] = np.flatnonzero(self.slots[:, k]).tolist()
        ordered: list[PodInfo] = self._entries[k]
        n_violating = int(self._n_violating[k])
        vs = [ordered[j] for j in slots]
        if n_violating and len(ordered) > n_violating:
            vs.sort(key=self._key)
        return vs
