"""Score helpers shared by plugins (upstream pluginhelper.DefaultNormalizeScore) and
the per-row score cache of row-pure scoring functions (``RowScoreCache``)."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import Final

import numpy as np

from kubesched.api.goformat import go_div, go_div_vec
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.results import MAX_NODE_SCORE, NodeScore


def default_normalize_score(
    scores: list[NodeScore], reverse: bool, max_priority: int = MAX_NODE_SCORE
) -> None:
    """Scale scores to [0, max_priority] by the maximum (integer division); with
    ``reverse`` the scale is flipped. All-zero scores stay 0 (or become
    ``max_priority`` with ``reverse``)."""
    max_count = max((s.score for s in scores), default=0)
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return
    for s in scores:
        v = go_div(max_priority * s.score, max_count)
        s.score = max_priority - v if reverse else v


def default_normalize_vector(
    scores: IntArray, reverse: bool, max_priority: int = MAX_NODE_SCORE
) -> IntArray:
    """Vector form of :func:`default_normalize_score`."""
    if len(scores) == 0:
        return scores
    max_count = max(int(scores.max()), 0)
    if max_count == 0:
        if reverse:
            return np.full(len(scores), max_priority, dtype=np.int64)
        return scores
    scaled = go_div_vec(max_priority * scores, max_count)
    return max_priority - scaled if reverse else scaled


class _RowEntry:
    __slots__ = ("layout", "seq", "table", "values")

    def __init__(
        self, table: weakref.ref[NodeTable], layout: int, seq: int, values: IntArray
    ) -> None:
        self.table = table
        self.layout = layout
        self.seq = seq
        self.values = values


SMALL_UPDATE: Final = 8
"""Up to this many changed rows are recomputed one by one with the exact
(per-node) function; more go through the vector function at once."""


class RowScoreCache:
    """Scores that are a pure function of one row's state and a pod-side ``key``
    (NodeResourcesFit's strategies, BalancedAllocation: a node's allocatable and
    requested amounts and the pod's amounts), kept for every table slot and
    brought up to date from the table's change log. A scoring cycle then costs
    the recomputation of the few rows changed since the previous cycle (usually
    the node the previous pod was bound to) and one gather, instead of the full
    formula over every feasible node.

    Plugins own one cache per plugin object (scores depend on plugin args) and
    call :meth:`scores` from ``score_vector``. ``vector(rows)`` must compute the
    scores of the given table rows with the vector formula and ``one(row)``
    the score of one live row with the exact per-node formula; the two agree
    exactly (the plugins' equivalence tests check it). At most ``max_keys``
    pod-side keys are kept (least recently used dropped first)."""

    __slots__ = ("_entries", "_max_keys", "_seen")

    def __init__(self, max_keys: int = 16) -> None:
        self._entries: dict[Hashable, _RowEntry] = {}
        self._max_keys = max_keys
        # Keys met once (-> the table's change_seq then): a key gets a whole-table
        # entry only when it comes back after the table changed (a later cycle), so
        # a stream of one-off pod shapes costs no more than the plain formula.
        self._seen: dict[Hashable, int] = {}

    def scores(
        self,
        table: NodeTable,
        key: Hashable,
        rows: IntArray,
        vector: Callable[[IntArray], IntArray],
        one: Callable[[int], int],
    ) -> IntArray:
        """The scores of ``rows`` (a new array)."""
        values = self.slots(table, key, vector, one)
        if values is None:
            return vector(rows)
        out: IntArray = values[rows]
        return out

    def slots(
        self,
        table: NodeTable,
        key: Hashable,
        vector: Callable[[IntArray], IntArray],
        one: Callable[[int], int],
    ) -> IntArray | None:
        """The scores of every table slot, brought up to date (live slots only; do
        not write); None while ``key`` has only been met since the table last
        changed (a key's first cycle: callers then score just their rows). The
        same array object is returned until it has to be rebuilt (after a table
        reallocation, or when too many rows changed at once)."""
        entries = self._entries
        e = entries.pop(key, None)
        seq = table.change_seq
        if e is not None and e.table() is table and e.layout == table.layout_generation:
            if e.seq != seq:
                changed = table.rows_changed_since(e.seq)
                if changed is None or len(changed) > len(e.values) // 4:
                    e = None
                else:
                    self._update(table, e, changed, vector, one)
                    e.seq = seq
        else:
            e = None
        if e is None:
            first = self._seen.get(key)
            if first is None or first == seq:
                self._seen[key] = seq
                if len(self._seen) > 4 * self._max_keys:
                    del self._seen[next(iter(self._seen))]
                return None
            values = np.asarray(vector(np.arange(table.capacity, dtype=np.int64)), np.int64)
            e = _RowEntry(weakref.ref(table), table.layout_generation, seq, values)
        entries[key] = e
        if len(entries) > self._max_keys:
            del entries[next(iter(entries))]
        return e.values

    @staticmethod
    def _update(
        table: NodeTable,
        e: _RowEntry,
        changed: list[int],
        vector: Callable[[IntArray], IntArray],
        one: Callable[[int], int],
    ) -> None:
        infos = table.infos
        live = [r for r in set(changed) if infos[r] is not None]
        if not live:
            return
        values = e.values
        if len(live) <= SMALL_UPDATE:
            for r in live:
                values[r] = one(r)
        else:
            arr = np.array(sorted(live), dtype=np.int64)
            values[arr] = vector(arr)
