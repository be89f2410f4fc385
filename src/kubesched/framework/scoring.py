"""Score helpers shared by plugins (upstream pluginhelper.DefaultNormalizeScore) and
the per-row score cache of row-pure scoring functions (``RowScoreCache``)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Final

import numpy as np

from kubesched.api.goformat import go_div
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.results import MAX_NODE_SCORE, NodeScore
from kubesched.framework.row_answers import RowAnswers, RowEntry


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


class _Scores(RowEntry):
    __slots__ = ("values",)

    def __init__(self, values: IntArray) -> None:
        self.values = values


SMALL_UPDATE: Final = 8
"""Up to this many changed rows are recomputed one by one with the exact
(per-node) function; more go through the vector function at once."""


class RowScoreCache:
    """Scores that are a pure function of one row's state and a pod-side ``key``,
    kept per slot in a ``RowAnswers`` store so a cycle recomputes only changed rows.
    One per plugin object; ``vector(rows)`` (vector formula) and ``one(row)``
    (per-node formula) must agree exactly. At most ``max_keys`` keys (LRU)."""

    __slots__ = ("_store",)

    def __init__(self, max_keys: int = 16) -> None:
        self._store: RowAnswers[_Scores] = RowAnswers("row_scores", max_keys, lru=True, too_many=4)

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
        """Every slot's scores, up to date (live slots; do not write; the same array
        until rebuilt); None in a key's first cycle (score just the rows then)."""
        store = self._store
        e, changed = store.lookup(key, table)
        if e is None:
            if not store.met_before(key, table):
                return None
            values = np.asarray(vector(np.arange(table.capacity, dtype=np.int64)), np.int64)
            e = store.put(key, table, _Scores(values))
        elif changed:
            infos = table.infos
            live = [r for r in set(changed) if infos[r] is not None]
            if 0 < len(live) <= SMALL_UPDATE:
                for r in live:
                    e.values[r] = one(r)
            elif live:
                arr = np.array(sorted(live), dtype=np.int64)
                e.values[arr] = vector(arr)
        return e.values
