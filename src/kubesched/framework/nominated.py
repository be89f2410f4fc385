"""The nominated pods' summed requests over the node table, kept current incrementally.

Filtering with nominated pods (``RunFilterPluginsWithNominatedPods``' first pass)
and the dry run add to a node, for a pod of priority p, the requests of the other
pods nominated to it with priority >= p. Contract: ``query(pod, table)`` equals,
per node with nominations, the sum of ``table.request_vector(info)`` over the live
nominations with ``info.pod.priority >= pod.pod.priority`` and another uid —
what the per-node path reads from ``nominated_pods_for_node``.

Each nominator owns one (``Nominator.load_index()``); another table, a node
change or a wider axis rebuilds it (new ``epoch``), else it applies the changed
nominations; its change log names the rows whose load changed.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.rowlog import RowLog
from kubesched.framework.types import PodInfo

_EMPTY_ROWS = np.zeros(0, dtype=np.int64)
_EMPTY_ROWS.setflags(write=False)


class NominatedLoadIndex:
    """See the module docstring. Single-threaded; answers are shared arrays:
    never write into them."""

    def __init__(self) -> None:
        self._nominated: dict[str, tuple[str, PodInfo]] = {}
        """Pod UID -> (node name, the PodInfo it was nominated with)."""
        self._pending: dict[str, str] = {}
        """Pod UID -> its node ("" deleted), changed since the last sync."""
        self._table: NodeTable | None = None
        """The table the arrays are over (held: its identity is the key)."""
        self._generation = (-1, -1)
        """(node generation, resource-axis width) of ``_table`` at the last rebuild."""
        self._rows = np.zeros(16, dtype=np.int64)
        self._prios = np.zeros(16, dtype=np.int64)
        self._mat = np.zeros((16, 0), dtype=np.int64)
        self._uids: list[str] = []
        self._pos: dict[str, int] = {}
        self._prio_counts: dict[int, int] = {}
        """Priority -> how many indexed nominated pods have it."""
        self._slots = 0
        """The table's capacity (rows are below it)."""
        self._dense: tuple[IntArray, IntArray] | None = None
        """(per-row summed requests of every indexed pod (capacity, width), pods
        per row), kept up to date once built; None: to be built."""
        self._last: tuple[str | None, int, IntArray, IntArray] | None = None
        """The last ``query`` answer (own UID if indexed, priority, rows, vectors),
        valid while nothing changed."""
        self._changes = RowLog()
        """Rows whose nominated pods changed, in order (``rows_changed_since``)."""
        self.epoch = 0
        """Bumped when everything is rebuilt (every row may have changed)."""

    # ------------------------------------------------------------- writers
    def add(self, info: PodInfo, node_name: str) -> None:
        """The pod of ``info`` is nominated to ``node_name`` (replacing any earlier
        nomination of it)."""
        uid = info.pod.uid
        self._nominated.pop(uid, None)
        self._nominated[uid] = (node_name, info)
        if self._table is not None:
            self._pending[uid] = node_name

    def delete(self, uid: str) -> None:
        """The pod's nomination is gone (no-op if it has none)."""
        if self._nominated.pop(uid, None) is not None and self._table is not None:
            self._pending[uid] = ""

    # ------------------------------------------------------------- readers
    @property
    def change_seq(self) -> int:
        """A cursor into the change log (read it after a query or ``dense``,
        which bring the index up to date)."""
        return self._changes.seq

    def empty(self) -> bool:
        """No nominated pod is indexed (as of the last sync)."""
        return not self._uids

    def is_nominated(self, uid: str) -> bool:
        """The pod is among the nominated pods indexed (as of the last sync)."""
        return uid in self._pos

    def rows_changed_since(self, seq: int) -> list[int] | None:
        """Rows whose nominated pods changed since the cursor ``seq`` (possibly
        repeated), or None when that part of the log was dropped."""
        return self._changes.since(seq)

    def query(self, pod: PodInfo, table: NodeTable) -> tuple[IntArray, IntArray]:
        """(rows ascending, summed request vectors) of the nominated pods that
        count for ``pod`` (module docstring), one entry per row that has any."""
        self._sync(table)
        last = self._last
        uid = pod.pod.uid
        own = uid if uid in self._pos else None
        prio = pod.pod.priority
        if last is not None and last[0] == own and last[1] == prio:
            return last[2], last[3]
        n = len(self._uids)
        if n and min(self._prio_counts) >= prio:
            rows, mat = self._query_all(self._pos.get(uid))
        else:
            rows, mat = self._gather(pod, None)
        self._last = (own, prio, rows, mat)
        return rows, mat

    def query_rows(
        self, pod: PodInfo, table: NodeTable, rows: Collection[int]
    ) -> tuple[IntArray, IntArray]:
        """``query`` restricted to ``rows`` (a few: the cost is one pass over the
        nominated pods per row)."""
        self._sync(table)
        return self._gather(pod, rows)

    def dense(self, pod: PodInfo, table: NodeTable) -> IntArray | None:
        """``query`` as a (capacity, width) slot matrix when every indexed pod counts
        and the pod is not nominated itself, else None. Shared and updated in
        place: read it before anything changes."""
        self._sync(table)
        if (
            not self._uids
            or pod.pod.uid in self._pos
            or min(self._prio_counts) < pod.pod.priority
            or self._mat.shape[1] != len(table.resources)
        ):
            return None
        dense, _ = self._dense_load()
        if dense.shape[0] < table.capacity:
            return None
        return dense

    def dense_counts(self) -> IntArray:
        """Nominated pods per table slot, alongside the matrix ``dense`` just
        returned (same lifetime and rules)."""
        return self._dense_load()[1]

    # ------------------------------------------------------------ internals
    def _gather(self, pod: PodInfo, only: Collection[int] | None) -> tuple[IntArray, IntArray]:
        """Sum the counting pods (on the rows ``only``, if given) per row."""
        n = len(self._uids)
        width = self._mat.shape[1]
        if n == 0:
            return _EMPTY_ROWS, np.zeros((0, width), dtype=np.int64)
        mask = self._prios[:n] >= pod.pod.priority
        if only is not None:
            on = np.zeros(n, dtype=np.bool_)
            for r in only:
                on |= self._rows[:n] == r
            mask &= on
        own = self._pos.get(pod.pod.uid)
        if own is not None:
            mask[own] = False
        if not mask.any():
            return _EMPTY_ROWS, np.zeros((0, width), dtype=np.int64)
        # ``take`` with an index gathers 2-D rows much faster than boolean or fancy
        # indexing; the stable sort keeps pods of one node in log order.
        idx = np.flatnonzero(mask)
        rows = self._rows.take(idx)
        order = np.argsort(rows, kind="stable")
        idx = idx.take(order)
        rows = rows.take(order)
        mat = self._mat.take(idx, axis=0)
        if len(rows) < 2:
            return rows, mat
        starts = rows[1:] != rows[:-1]
        if starts.all():
            return rows, mat  # one nominated pod per node: nothing to sum
        # Several pods on a node: sum each run of equal rows (exact int64 sums).
        first = np.flatnonzero(np.concatenate(([True], starts)))
        return rows.take(first), np.add.reduceat(mat, first, axis=0)

    def _query_all(self, own: int | None) -> tuple[IntArray, IntArray]:
        """``query`` when every indexed pod but ``own`` counts: the per-row sums."""
        dense, count = self._dense_load()
        rows = np.flatnonzero(count)
        if own is None:
            return rows, dense.take(rows, axis=0)
        row = int(self._rows[own])
        if count[row] == 1:
            rows = rows[rows != row]  # its only pod does not count
            return rows, dense.take(rows, axis=0)
        mat = dense.take(rows, axis=0)
        mat[int(np.searchsorted(rows, row))] -= self._mat[own]
        return rows, mat

    def _dense_load(self) -> tuple[IntArray, IntArray]:
        if self._dense is None:
            n = len(self._uids)
            rows = self._rows[:n]
            slots = max(self._slots, int(rows.max()) + 1 if n else 0)
            dense = np.zeros((slots, self._mat.shape[1]), dtype=np.int64)
            np.add.at(dense, rows, self._mat[:n])
            self._dense = (dense, np.bincount(rows, minlength=slots).astype(np.int64))
        return self._dense

    def _sync(self, table: NodeTable) -> None:
        """Apply the changed nominations, or rebuild (module docstring)."""
        if table.capacity != self._slots:
            self._slots = table.capacity
            self._dense = None
        if table is not self._table or self._generation != (
            table.node_generation,
            len(table.resources),
        ):
            self._last = None
            self._rebuild(table)
            return
        pending = self._pending
        if not pending and len(table.resources) == self._mat.shape[1]:
            return
        self._last = None
        self._pending = {}
        for uid, node in pending.items():
            self._remove(uid)
            if node:
                row = table.row_of.get(node)
                if row is not None:
                    self._append(uid, row, self._nominated[uid][1], table)
        if len(table.resources) != self._mat.shape[1]:
            self._rebuild(table)  # a request vector grew the axis

    def _rebuild(self, table: NodeTable) -> None:
        self.epoch += 1
        self._table = table
        self._pending = {}
        self._uids = []
        self._pos = {}
        self._prio_counts = {}
        self._dense = None
        # Same length as the rows and priorities kept (they may have grown).
        self._mat = np.zeros((len(self._rows), len(table.resources)), dtype=np.int64)
        for uid, (node, info) in self._nominated.items():
            row = table.row_of.get(node)
            if row is not None:
                self._append(uid, row, info, table)
        if self._mat.shape[1] != len(table.resources):
            grown = np.zeros((self._mat.shape[0], len(table.resources)), dtype=np.int64)
            grown[:, : self._mat.shape[1]] = self._mat
            self._mat = grown
            self._dense = None
        self._generation = (table.node_generation, len(table.resources))

    def _append(self, uid: str, row: int, info: PodInfo, table: NodeTable) -> None:
        vec = table.request_vector(info)
        n = len(self._uids)
        if n == len(self._rows) or len(vec) > self._mat.shape[1]:
            cap = max(len(self._rows), 16) * (2 if n == len(self._rows) else 1)
            width = max(self._mat.shape[1], len(vec))
            rows = np.zeros(cap, dtype=np.int64)
            prios = np.zeros(cap, dtype=np.int64)
            mat = np.zeros((cap, width), dtype=np.int64)
            rows[:n] = self._rows[:n]
            prios[:n] = self._prios[:n]
            mat[:n, : self._mat.shape[1]] = self._mat[:n]
            if width != self._mat.shape[1]:
                self._dense = None
            self._rows, self._prios, self._mat = rows, prios, mat
        prio = info.pod.priority
        self._changes.add(row, self._slots)
        self._rows[n] = row
        self._prios[n] = prio
        self._mat[n] = 0
        self._mat[n, : len(vec)] = vec
        self._uids.append(uid)
        self._pos[uid] = n
        self._prio_counts[prio] = self._prio_counts.get(prio, 0) + 1
        if self._dense is not None:
            dense, count = self._dense
            if row < len(count):
                dense[row] += self._mat[n]
                count[row] += 1
            else:
                self._dense = None

    def _remove(self, uid: str) -> None:
        i = self._pos.pop(uid, None)
        if i is None:
            return
        prio = int(self._prios[i])
        self._changes.add(int(self._rows[i]), self._slots)
        left = self._prio_counts[prio] - 1
        if left:
            self._prio_counts[prio] = left
        else:
            del self._prio_counts[prio]
        if self._dense is not None:
            dense, count = self._dense
            row = int(self._rows[i])
            dense[row] -= self._mat[i]
            count[row] -= 1
        last = len(self._uids) - 1
        if i != last:
            moved = self._uids[last]
            self._uids[i] = moved
            self._pos[moved] = i
            self._rows[i] = self._rows[last]
            self._prios[i] = self._prios[last]
            self._mat[i] = self._mat[last]
        self._uids.pop()
