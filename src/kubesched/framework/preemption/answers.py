"""Each row's whole dry-run answer, kept for as long as nothing it depends on changes.

Under the conditions of ``VictimCache`` (default eligibility and ordering, no
PDB, every potential victim with a start time) and with filters whose what-if
answers are a function of the pod's spec alone
(``Framework.what_if_spec_determined``), the answer of ``SelectVictimsOnNode``
for a row depends on nothing but:

- the row's pods: when the table logs a change of the row, ``VictimCache``
  marks its entry stale; the batcher refreshes the entries of a batch's rows
  (``VictimBatcher._entries``) before it reads any answer, and storing a fresh
  entry drops the row's answer (``VictimCache.store``);
- the preemptor's spec, priority, framework and skipped filters, and the nodes'
  own state (``NodeTable.node_generation``): the key of the whole cache;
- the summed requests of the nominated pods that count on the row: kept with
  the answer and compared.

A burst of identical preemptors (upstream's PreemptionBasic) changes a node or
two per dry run, while each dry run visits a hundred nodes or more: the
batcher computes the rows whose answer is stale and reads the others from
here (``AnswerCache.batch``), which gives exactly the batch it would have
computed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from kubesched.framework.nodetable import BoolArray, IntArray
from kubesched.framework.preemption.batch import VictimBatch
from kubesched.framework.preemption.victims import StatColumns
from kubesched.framework.row_answers import PodSignature
from kubesched.framework.status import Status, StatusList

AnswerKey = tuple[PodSignature, int, int]
"""The preemptor's signature, the table's node and layout generations."""

_STAT_DTYPES = (np.int64, np.int64, np.int64, np.int64, np.int64, np.bool_, np.bool_)


class AnswerCache:
    """Row answers over table slots (see the module docstring). ``valid[row]``:
    the row's answer is kept, for nominated load ``nominated[row]``;
    ``candidate[row]``, else ``status[row]`` indexes ``statuses``; a
    candidate's victims are the slots set in ``slots[row]`` (of
    ``VictimCache.ordered[row]``) and ``stats`` its ``victim_stats`` columns."""

    __slots__ = (
        "_known",
        "candidate",
        "key",
        "nominated",
        "slots",
        "stats",
        "status",
        "valid",
    )

    def __init__(self, capacity: int, width: int, slots: int) -> None:
        self.key: AnswerKey | None = None
        self.valid = np.zeros(capacity, dtype=np.bool_)
        self.nominated = np.zeros((capacity, width), dtype=np.int64)
        self.candidate = np.zeros(capacity, dtype=np.bool_)
        self.status = np.zeros(capacity, dtype=np.int64)
        self.slots = np.zeros((capacity, slots), dtype=np.bool_)
        self.stats: tuple[npt.NDArray[Any], ...] = tuple(
            np.zeros(capacity, dtype=d) for d in _STAT_DTYPES
        )
        self._known = StatusList()

    @property
    def statuses(self) -> list[Status]:
        """Every status ``status[row]`` may index (append-only)."""
        return self._known.items

    def use(self, key: AnswerKey) -> None:
        """Answer for ``key`` from now on; forgets everything if it changed."""
        if self.key != key:
            self.key = key
            self.valid[:] = False
            # A new list: batches and statuses handed out keep the old one.
            self._known = StatusList()

    def invalidate(self, rows: IntArray | int) -> None:
        self.valid[rows] = False

    def stale(self, rows: IntArray, nominated: IntArray | None) -> IntArray:
        """Positions of ``rows`` whose answer is not kept for this nominated load
        (``nominated``: the load over table slots, None: no pod counts)."""
        ok = self.valid.take(rows)
        kept = self.nominated.take(rows, axis=0)
        if nominated is None:
            if kept.any():
                ok &= ~kept.any(axis=1)
        else:
            now = nominated.take(rows, axis=0)
            # Usually no load in the window changed: one comparison of the bytes
            # (both are fresh C-ordered int64 gathers of the same shape).
            if kept.tobytes() != now.tobytes():
                ok &= (kept == now).all(axis=1)
        out: IntArray = (~ok).nonzero()[0]
        return out

    def store(self, rows: IntArray, batch: VictimBatch, nominated: IntArray | None) -> bool:
        """Keep the answers of ``batch`` (computed for ``rows``); False when it
        carries something this cache does not hold (PDB violations, candidates
        without stats): nothing is kept then."""
        if batch.violating.any():
            return False
        cand = batch.candidate
        pos = batch.positions()
        fit = cand.nonzero()[0]
        stats = batch.stats(fit) if len(fit) else None
        if len(fit) and stats is None:
            return False
        slots = batch.slot_matrix()
        self._room(slots.shape[0])
        ids = self.ids(batch.statuses)
        self.candidate[rows] = cand
        self.status[rows] = np.where(cand, 0, ids.take(batch.fail_index))
        self.slots[rows] = False
        if len(fit):
            assert stats is not None
            fit_rows = rows.take(fit)
            self.slots[fit_rows, : slots.shape[0]] = slots[:, pos.take(fit)].T
            for mine, got in zip(self.stats, stats, strict=True):
                mine[fit_rows] = got
        self._kept(rows, nominated)
        return True

    def keep_few(
        self,
        rows: IntArray,
        statuses: list[Status],
        status_of: list[int],
        fit: list[tuple[int, list[bool]]],
        stats: StatColumns | None,
        nominated: IntArray | None,
    ) -> None:
        """``store`` for a few rows answered in plain Python, element by element
        (cheaper than numpy calls there): row ``rows[i]`` failed with
        ``statuses[status_of[i]]``, or is a candidate (``status_of[i]`` < 0)
        whose entry in ``fit`` is ``(i, victim flag per potential victim)``;
        ``stats``: the candidates' ``victim_stats`` columns, in ``fit``'s order."""
        self._room(max((len(flags) for _, flags in fit), default=0))
        ids = self._known.positions(statuses)
        row_list = rows.tolist()
        cand, status, slots = self.candidate, self.status, self.slots
        for i, r in enumerate(row_list):
            cand[r] = status_of[i] < 0
            status[r] = 0 if status_of[i] < 0 else ids[status_of[i]]
            slots[r] = False
        if fit:
            assert stats is not None
            fit_rows = [row_list[i] for i, _ in fit]
            for r, (_, flags) in zip(fit_rows, fit, strict=True):
                slots[r, : len(flags)] = flags
            for mine, got in zip(self.stats, stats, strict=True):
                mine[fit_rows] = got
        self._kept(rows, nominated)

    def _room(self, slots: int) -> None:
        """Grow the victim flags to at least ``slots`` per row."""
        if slots > self.slots.shape[1]:
            grown = np.zeros((self.slots.shape[0], slots), dtype=np.bool_)
            grown[:, : self.slots.shape[1]] = self.slots
            self.slots = grown

    def _kept(self, rows: IntArray, nominated: IntArray | None) -> None:
        """The answers of ``rows`` were just written, for this nominated load."""
        self.nominated[rows] = 0 if nominated is None else nominated.take(rows, axis=0)
        self.valid[rows] = True

    def ids(self, statuses: list[Status]) -> IntArray:
        """Positions in ``statuses`` of the given ones (equal statuses share one)."""
        return np.array(self._known.positions(statuses), dtype=np.int64)

    def batch(
        self, rows: IntArray, ordered: npt.NDArray[np.object_]
    ) -> tuple[BoolArray, IntArray, IntArray, BoolArray, npt.NDArray[np.object_], StatColumns]:
        """The kept answers of ``rows`` as batch arrays: (candidate, failure
        index into ``statuses``, positions (-1 unless a candidate), slot-major
        victim flags of the candidates, their ordered victims (of ``ordered``,
        ``VictimCache.ordered``), their stats)."""
        cand = self.candidate.take(rows)
        fit = cand.nonzero()[0]
        pos = np.full(len(rows), -1, dtype=np.int64)
        pos[fit] = np.arange(len(fit))
        fit_rows = rows.take(fit)
        slots = np.ascontiguousarray(self.slots.take(fit_rows, axis=0).T)
        entries = ordered[fit_rows]
        nv, high, total, count, earliest, has, unset = (col.take(fit_rows) for col in self.stats)
        stats = (nv, high, total, count, earliest, has, unset)
        return cand, self.status.take(rows), pos, slots, entries, stats
