"""Per-node counts of the pods a (namespace, label selector) matches, kept current
from the NodeTable's change log: what PodTopologySpread's vector paths count
instead of looping over every pod of every node in each cycle.

A selector is evaluated once per (namespace, labels) group; per recent selector
(bounded LRU) a per-row count vector is kept. Terminating pods are never counted
(``countPodsMatchSelector``); the per-node path's ``common.count_pods_match``
counts the same.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Final

import numpy as np

from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.podtopologyspread.common import NAME, Selector, SelectorKey

_GROUP_KEY: Final = NAME + "/labels"
"""``PodInfo.extra`` key caching a pod's (namespace, label items) group key."""

GroupKey = tuple[str, tuple[tuple[str, str], ...]]


def _group_key(pi: PodInfo) -> GroupKey:
    key = pi.extra.get(_GROUP_KEY)
    if key is None:
        pod = pi.pod
        # Unsorted: replicas of a template list their labels in the same order;
        # the same labels in another order merely form a second group.
        key = (pod.namespace, tuple(pod.labels.items()))
        pi.extra[_GROUP_KEY] = key
    return key  # type: ignore[return-value]


class _Query:
    __slots__ = ("memo", "namespace", "selector", "vec")

    def __init__(self, namespace: str, selector: Selector, capacity: int) -> None:
        self.namespace = namespace
        self.selector = selector
        self.vec: IntArray = np.zeros(capacity, dtype=np.int64)
        self.memo: dict[int, bool] = {}


class PodCountIndex:
    """Matching-pod counts per table row; ``counts`` returns an int64 slot array
    (free slots 0) not to be written."""

    __slots__ = (
        "_group_labels",
        "_group_ns",
        "_group_rows",
        "_groups",
        "_layout",
        "_max_queries",
        "_queries",
        "_rows",
        "_seq",
        "_table",
        "_zeros",
    )

    def __init__(self, max_queries: int = 128) -> None:
        self._max_queries = max_queries
        self._table: weakref.ref[NodeTable] | None = None
        self._layout = -1
        self._seq = -1
        self._rows: list[dict[int, int]] = []
        self._groups: dict[GroupKey, int] = {}
        self._group_ns: list[str] = []
        self._group_labels: list[Mapping[str, str]] = []
        self._group_rows: list[dict[int, int]] = []
        self._queries: dict[tuple[str, SelectorKey], _Query] = {}
        self._zeros: IntArray = np.zeros(0, dtype=np.int64)

    # ------------------------------------------------------------------ queries
    def counts(self, table: NodeTable, namespace: str, selector: Selector) -> IntArray:
        """Per row: pods of ``namespace``, not terminating, that ``selector`` matches
        (0 everywhere for an empty selector)."""
        self._sync(table)
        if selector.is_empty() or selector.label_selector is None:
            if len(self._zeros) != table.capacity:
                self._zeros = np.zeros(table.capacity, dtype=np.int64)
            return self._zeros
        key = (namespace, selector.key)
        q = self._queries.pop(key, None)
        if q is None:
            q = self._new_query(namespace, selector, table.capacity)
        self._queries[key] = q
        if len(self._queries) > self._max_queries:
            del self._queries[next(iter(self._queries))]
        return q.vec

    def _matches(self, q: _Query, gid: int) -> bool:
        hit = q.memo.get(gid)
        if hit is None:
            hit = self._group_ns[gid] == q.namespace and q.selector.matches(self._group_labels[gid])
            q.memo[gid] = hit
        return hit

    def _new_query(self, namespace: str, selector: Selector, capacity: int) -> _Query:
        q = _Query(namespace, selector, capacity)
        vec = q.vec
        for gid, rows in enumerate(self._group_rows):
            if not rows or not self._matches(q, gid):
                continue
            idx = np.fromiter(rows.keys(), dtype=np.int64, count=len(rows))
            vals = np.fromiter(rows.values(), dtype=np.int64, count=len(rows))
            vec[idx] += vals
        return q

    # ------------------------------------------------------------------ sync
    def _sync(self, table: NodeTable) -> None:
        current = self._table() if self._table is not None else None
        if current is not table or self._layout != table.layout_generation:
            self._rebuild(table)
            return
        if self._seq == table.change_seq:
            return
        changed = table.rows_changed_since(self._seq)
        if changed is None:
            self._rebuild(table)
            return
        infos = table.infos
        for row in set(changed):
            self._refresh_row(row, infos[row])
        self._seq = table.change_seq

    def _rebuild(self, table: NodeTable) -> None:
        self._table = weakref.ref(table)
        self._layout = table.layout_generation
        self._rows = [{} for _ in range(table.capacity)]
        self._group_rows = [{} for _ in self._group_rows]
        self._queries = {}
        for row, info in enumerate(table.infos):
            if info is not None:
                self._refresh_row(row, info)
        self._seq = table.change_seq

    def _gid(self, pi: PodInfo) -> int:
        key = _group_key(pi)
        gid = self._groups.get(key)
        if gid is None:
            gid = len(self._group_ns)
            self._groups[key] = gid
            self._group_ns.append(pi.pod.namespace)
            self._group_labels.append(dict(key[1]))
            self._group_rows.append({})
        return gid

    def _refresh_row(self, row: int, info: NodeInfo | None) -> None:
        new: dict[int, int] = {}
        if info is not None:
            for pi in info.pods:
                if pi.pod.deletion_timestamp is not None:
                    continue
                gid = self._gid(pi)
                new[gid] = new.get(gid, 0) + 1
        old = self._rows[row]
        if new == old:
            return
        queries = list(self._queries.values())
        for gid in old.keys() | new.keys():
            delta = new.get(gid, 0) - old.get(gid, 0)
            if delta == 0:
                continue
            rows = self._group_rows[gid]
            if gid in new:
                rows[row] = new[gid]
            else:
                del rows[row]
            for q in queries:
                if self._matches(q, gid):
                    q.vec[row] += delta
        self._rows[row] = new
