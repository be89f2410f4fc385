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

    def query(
        self, nominator: Nominator, pod: PodInfo, table: NodeTable
    ) -> tuple[IntArray, IntArray]:
        """(rows ascending, summed request vectors) as ``framework.nominated`` defines."""
        self._sync(nominator, table)
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
        mat = self._mat[:n][mask]
        uniq, inverse = np.unique(rows, return_inverse=True)
        if len(uniq) == len(rows):
            out = np.empty_like(mat)
            out[inverse] = mat
            return uniq, out
        out = np.zeros((len(uniq), width), dtype=np.int64)
        np.add.at(out, inverse, mat)
        return uniq, out

    def _sync(self, nominator: Nominator, table: NodeTable) -> None:
        key = (id(table), table.node_generation, len(table.resources))
        log = nominator.take_log()
        if key != self._key:
            self._rebuild(nominator, table)
            return
        for uid, node in log:
            self._remove(uid)
            if node:
                info = nominator.infos.get(uid)
                row = table.row_of.get(node)
                if info is not None and row is not None:
                    self._append(uid, row, info, table)
        if len(table.resources) != self._mat.shape[1]:
            self._rebuild(nominator, table)  # a request vector grew the axis

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
