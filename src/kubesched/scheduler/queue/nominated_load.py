"""The nominated pods' requests as arrays over the node table, kept current incrementally.

Filtering with nominated pods (and preemption's what-if dry run) needs, for a
pod of priority p, the summed requests of the pods nominated to each node with
priority >= p (other than the pod itself). With many nominations (a burst of
preemptors), rebuilding that from the nominator every cycle dominates; this
index applies the nominator's change log instead.
"""

from __future__ import annotations

import numpy as np

from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.types import PodInfo
from kubesched.scheduler.queue.nominator import Nominator


class NominatedLoad:
    def __init__(self) -> None:
        self._key: tuple[int, int, int] | None = None
        self._rows = np.zeros(16, dtype=np.int64)
        self._prios = np.zeros(16, dtype=np.int64)
        self._mat = np.zeros((16, 0), dtype=np.int64)
        self._uids: list[str] = []
        self._pos: dict[str, int] = {}
        self._last: tuple[str, int, IntArray, IntArray] | None = None
        """The last answer (pod UID, priority, rows, vectors): a cycle asks again for
        the same pod (filtering, then preemption) with nothing changed between."""

    def query(
        self, nominator: Nominator, pod: PodInfo, table: NodeTable
    ) -> tuple[IntArray, IntArray]:
        """(rows ascending, summed request vectors) as ``framework.nominated`` defines.
        The arrays may be shared between calls: never write into them."""
        if self._sync(nominator, table):
            self._last = None
        last = self._last
        uid, prio = pod.pod.uid, pod.pod.priority
        if last is not None and last[0] == uid and last[1] == prio:
            return last[2], last[3]
        rows, mat = self._query(pod)
        self._last = (uid, prio, rows, mat)
        return rows, mat

    def _query(self, pod: PodInfo) -> tuple[IntArray, IntArray]:
        n = len(self._uids)
        width = self._mat.shape[1]
        if n == 0:
            return np.zeros(0, dtype=np.int64), np.zeros((0, width), dtype=np.int64)
        mask = self._prios[:n] >= pod.pod.priority
        own = self._pos.get(pod.pod.uid)
        if own is not None:
            mask[own] = False
        if not mask.any():
            return np.zeros(0, dtype=np.int64), np.zeros((0, width), dtype=np.int64)
        rows = self._rows[:n][mask]
        order = np.argsort(rows, kind="stable")
        rows = rows[order]
        mat = self._mat[:n][mask][order]
        if len(rows) < 2:
            return rows, mat
        starts = rows[1:] != rows[:-1]
        if starts.all():
            return rows, mat  # one nominated pod per node: nothing to sum
        # Several pods on a node: sum each run of equal rows (exact int64 sums).
        first = np.flatnonzero(np.concatenate(([True], starts)))
        return rows[first], np.add.reduceat(mat, first, axis=0)

    def _sync(self, nominator: Nominator, table: NodeTable) -> bool:
        """Apply the nominator's changes; True if anything may have changed."""
        key = (id(table), table.node_generation, len(table.resources))
        log = nominator.take_log()
        if key != self._key:
            self._rebuild(nominator, table)
            return True
        if not log and len(table.resources) == self._mat.shape[1]:
            return False
        for uid, node in log:
            self._remove(uid)
            if node:
                info = nominator.infos.get(uid)
                row = table.row_of.get(node)
                if info is not None and row is not None:
                    self._append(uid, row, info, table)
        if len(table.resources) != self._mat.shape[1]:
            self._rebuild(nominator, table)  # a request vector grew the axis
        return True

    def _rebuild(self, nominator: Nominator, table: NodeTable) -> None:
        self._uids = []
        self._pos = {}
        self._mat = np.zeros((16, len(table.resources)), dtype=np.int64)
        for uid, node in nominator.nominated_pod_to_node.items():
            info = nominator.infos.get(uid)
            row = table.row_of.get(node)
            if info is not None and row is not None:
                self._append(uid, row, info, table)
        if self._mat.shape[1] != len(table.resources):
            grown = np.zeros((self._mat.shape[0], len(table.resources)), dtype=np.int64)
            grown[:, : self._mat.shape[1]] = self._mat
            self._mat = grown
        self._key = (id(table), table.node_generation, len(table.resources))

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
            self._rows, self._prios, self._mat = rows, prios, mat
        self._rows[n] = row
        self._prios[n] = info.pod.priority
        self._mat[n] = 0
        self._mat[n, : len(vec)] = vec
        self._uids.append(uid)
        self._pos[uid] = n

    def _remove(self, uid: str) -> None:
        i = self._pos.pop(uid, None)
        if i is None:
            return
        last = len(self._uids) - 1
        if i != last:
            moved = self._uids[last]
            self._uids[i] = moved
            self._pos[moved] = i
            self._rows[i] = self._rows[last]
            self._prios[i] = self._prios[last]
            self._mat[i] = self._mat[last]
        self._uids.pop()
