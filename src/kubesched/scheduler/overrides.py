"""Exact statuses of the nodes holding nominated pods, and their per-row cache.

Filtering with nominated pods (upstream ``RunFilterPluginsWithNominatedPods``)
gives a node that holds nominated pods of equal or higher priority its own
answer: ``Overrides`` carries those answers for one scheduling cycle.

When every active filter's answer depends only on the pod's spec, the nodes' own
state and a node's summed requests (``Framework.what_if_spec_determined``),
``OverrideRows`` keeps each row's last answer per spec and a cycle asks again only
about the rows the node table's and the nominated-load index's change logs name (a
burst of preemptors changes a node or two per cycle while a thousand hold
nominated pods).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.nominated import NominatedLoadIndex
from kubesched.framework.row_answers import PodSignature, RowAnswers, RowEntry
from kubesched.framework.status import Status, StatusList
from kubesched.framework.types import PodInfo
from kubesched.runtime.framework import Framework

NOT_OVERRIDDEN: Final = -2


@dataclass(slots=True)
class Overrides:
    """Exact statuses of the nodes holding nominated pods that count, as arrays:
    ``rows`` ascending, ``index[i]`` into ``statuses`` (-1 = the node passes).
    ``statuses`` may be shared with later answers, which only append to it."""

    rows: IntArray
    index: IntArray
    statuses: list[Status]
    _dense: IntArray | None = None
    """Row -> override index, ``NOT_OVERRIDDEN`` elsewhere; one slot past the
    largest row holds ``NOT_OVERRIDDEN`` too (rows beyond are clipped to it).
    Built on the first lookup (an answer may be reused over many cycles), or
    given alone (``answer_dense``: ``rows`` and ``index`` empty)."""

    def __bool__(self) -> bool:
        return len(self.rows) > 0 or self._dense is not None

    def lookup(self, rows: IntArray) -> tuple[IntArray, IntArray]:
        """(positions of ``rows`` that are overridden, their override index)."""
        dense = self._dense
        if dense is None:
            dense = np.full(int(self.rows.max()) + 2, NOT_OVERRIDDEN, dtype=np.int64)
            dense[self.rows] = self.index
            self._dense = dense
        got = dense.take(rows, mode="clip")
        hit = (got != NOT_OVERRIDDEN).nonzero()[0]
        return hit, got[hit]

    @staticmethod
    def of(statuses: dict[int, Status]) -> Overrides:
        rows = sorted(statuses)
        out: list[Status] = []
        index: list[int] = []
        for row in rows:
            st = statuses[row]
            if st.is_success():
                index.append(-1)
            else:
                index.append(len(out))
                out.append(st)
        return Overrides(np.array(rows, dtype=np.int64), np.array(index, dtype=np.int64), out)


_NO_ROWS: Final = np.zeros(0, dtype=np.int64)
NO_OVERRIDES: Final = Overrides(_NO_ROWS, _NO_ROWS, [])

_UNKNOWN: Final = -3


class _Entry(RowEntry):
    """Row answers for one signature: ``index[row]`` (-1 pass, else into
    ``statuses``, ``_UNKNOWN`` not asked yet)."""

    __slots__ = ("index", "known", "last", "over")

    def __init__(self, table: NodeTable) -> None:
        self.index = np.full(table.capacity, _UNKNOWN, dtype=np.int64)
        self.known = StatusList()
        self.last: tuple[IntArray, Overrides] | None = None
        """The last rows asked about and the answer given (with its lookup table),
        handed out again while none of those rows changed."""
        self.over: IntArray | None = None
        """(``answer_dense`` only) row -> ``index[row]`` where nominated pods count,
        ``NOT_OVERRIDDEN`` elsewhere (one slot longer than the table)."""

    @property
    def statuses(self) -> list[Status]:
        """Every status ``index`` may point at (append-only)."""
        return self.known.items

    def add(self, answers: list[Status]) -> IntArray:
        """Positions in ``statuses`` of ``answers`` (equal statuses share one)."""
        return np.array(self.known.positions(answers), dtype=np.int64)


class OverrideRows:
    """Per-row what-if answers of spec-determined cycles in a ``RowAnswers`` store keyed
    by the pod's signature (the store drops entries when a node changes)."""

    __slots__ = ("_store",)

    def __init__(self) -> None:
        self._store: RowAnswers[_Entry] = RowAnswers("nominated_overrides", 8, nodes=True)

    def _entry(
        self,
        fwk: Framework,
        state: CycleState,
        pod: PodInfo,
        extra: object,
        index: NominatedLoadIndex,
    ) -> tuple[_Entry, list[int] | None]:
        """The entry of the pod's signature with the rows changed since its last
        use (None: a new entry, nothing known)."""
        key = PodSignature(
            fwk, pod.facts, state.skip_filter_plugins, pod.pod.priority, pod.pod.node_name, extra
        )
        table = fwk.table
        entry, changed = self._store.lookup(key, table, index)
        if entry is None:
            fresh = _Entry(table)
            return self._store.put(key, table, fresh, index), None
        return entry, changed

    def answer(
        self,
        fwk: Framework,
        state: CycleState,
        pod: PodInfo,
        rows: IntArray,
        load: IntArray,
        index: NominatedLoadIndex,
    ) -> Overrides | None:
        """The filters' what-if answer as ``Overrides`` for ``rows`` (ascending,
        distinct) with nominated load ``load``, just asked of ``index`` (so it is in
        sync with the nominator); only rows the change logs name since the
        signature's last use are asked again. None when the framework cannot answer.
        Only for ``fwk.what_if_spec_determined(state)``."""
        table = fwk.table
        own = pod.pod.uid if index.is_nominated(pod.pod.uid) else None
        entry, changed = self._entry(fwk, state, pod, (own,), index)
        known = entry.index
        if changed:
            known[changed] = _UNKNOWN
        got = known.take(rows)
        ask = (got == _UNKNOWN).nonzero()[0]
        last = entry.last
        if not len(ask) and last is not None and last[0] is rows:
            return last[1]
        if len(ask):
            ask_rows = rows.take(ask)
            width = len(table.resources)
            summed = table.requested[ask_rows]
            part = load.take(ask, axis=0)
            summed[:, : part.shape[1]] += part[:, :width]
            if not self._ask(entry, fwk, state, pod, ask_rows, summed):
                return None
            got[ask] = known.take(ask_rows)
        found = Overrides(rows, got, entry.statuses)
        entry.last = (rows, found)
        return found

    def answer_dense(
        self,
        fwk: Framework,
        state: CycleState,
        pod: PodInfo,
        index: NominatedLoadIndex,
        load: IntArray,
        count: IntArray,
    ) -> Overrides | None:
        """``answer`` when every nominated pod counts and the pod is not nominated
        itself (``load``/``count``: ``index.dense``/``dense_counts``, just read). It
        keeps the row -> override array, so unchanged rows cost nothing; the answer
        shares that array, updated in place by the next call: use it only within
        the cycle that asked."""
        table = fwk.table
        entry, changed = self._entry(fwk, state, pod, True, index)
        over = entry.over
        if over is None or changed is None:
            over = entry.over = np.full(table.capacity + 1, NOT_OVERRIDDEN, dtype=np.int64)
            rows = np.flatnonzero(count[: table.capacity])
        else:
            if not changed and entry.last is not None:
                return entry.last[1]
            # Every changed row holding load is asked again (below). A cycle
            # typically brings one row, logged a few times: plain Python.
            touched = sorted(set(changed))
            for r in touched:
                over[r] = NOT_OVERRIDDEN
            rows = np.array([r for r in touched if count[r]], dtype=np.int64)
        if len(rows):
            summed = table.requested[rows] + load.take(rows, axis=0)
            if not self._ask(entry, fwk, state, pod, rows, summed):
                entry.over = None
                return None
            over[rows] = entry.index.take(rows)
        found = Overrides(_NO_ROWS, _NO_ROWS, entry.statuses, over)  # given as slots
        entry.last = (rows, found)
        return found

    @staticmethod
    def _ask(
        entry: _Entry,
        fwk: Framework,
        state: CycleState,
        pod: PodInfo,
        rows: IntArray,
        summed: IntArray,
    ) -> bool:
        """Ask the filters about ``rows`` with ``summed`` requests and keep the
        answers in ``entry``; False when the framework cannot answer."""
        if len(rows) == 1:
            row = int(rows[0])
            one = fwk.run_filter_what_if_row(state, pod, row, summed[0])
            if one is None:
                return False
            entry.index[row] = -1 if one.is_success() else entry.known.positions((one,))[0]
            return True
        got = fwk.run_filter_what_if(state, pod, rows, summed)
        if got is None:
            return False
        found, statuses = got
        new = found.astype(np.int64)
        failing = new >= 0
        if failing.any():
            new[failing] = entry.add(statuses)[new[failing]]
        entry.index[rows] = new
        return True
