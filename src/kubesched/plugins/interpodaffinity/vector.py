"""InterPodAffinity Filter and Score over a whole NodeTable at once.

A node's answer depends only on its values of a few label keys, so each check is
one gather of the counts by ``LabelColumn.codes`` per key; equal on every node to
the per-node reference in ``filtering`` / ``scoring``.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from kubesched.framework.interfaces import Verdicts
from kubesched.framework.nodetable import BoolArray, IntArray, NodeTable
from kubesched.framework.status import Status
from kubesched.plugins.interpodaffinity.counts import per_row
from kubesched.plugins.interpodaffinity.filtering import (
    AFFINITY_MISMATCH,
    ANTI_AFFINITY_MISMATCH,
    EXISTING_ANTI_AFFINITY_MISMATCH,
    PreFilterState,
)
from kubesched.plugins.interpodaffinity.scoring import PreScoreState

STATUSES: Final[tuple[Status, ...]] = (
    AFFINITY_MISMATCH,
    ANTI_AFFINITY_MISMATCH,
    EXISTING_ANTI_AFFINITY_MISMATCH,
)


def _affinity_fail(state: PreFilterState, table: NodeTable) -> BoolArray | None:
    terms = state.terms.required_affinity
    if not terms:
        return None
    missing = np.zeros(table.capacity, dtype=np.bool_)
    absent = np.zeros(table.capacity, dtype=np.bool_)
    for t in terms:
        count, has = per_row(state.affinity, t.topology_key, table)
        missing |= ~has
        absent |= has & (count <= 0)
    if len(state.affinity) == 0 and state.self_match:
        return missing
    out: BoolArray = missing | absent
    return out


def _anti_fail(state: PreFilterState, table: NodeTable) -> BoolArray | None:
    if len(state.anti) == 0 or not state.terms.required_anti:
        return None
    fail = np.zeros(table.capacity, dtype=np.bool_)
    for t in state.terms.required_anti:
        count, has = per_row(state.anti, t.topology_key, table)
        fail |= has & (count > 0)
    return fail


def _existing_fail(state: PreFilterState, table: NodeTable) -> BoolArray | None:
    existing = state.existing_anti
    if len(existing) == 0:
        return None
    fail = np.zeros(table.capacity, dtype=np.bool_)
    for key in existing.topology_keys():
        count, has = per_row(existing, key, table)
        fail |= has & (count > 0)
    return fail


def filter_verdicts(state: PreFilterState, table: NodeTable) -> Verdicts:
    """Filter of every slot (free slots meaningless), cached on the state until
    AddPod / RemovePod or another table / node generation."""
    cache = state.vector_cache
    if isinstance(cache, tuple) and cache[0] is table and cache[1] == table.node_generation:
        cached: Verdicts = cache[2]
        return cached
    index = np.full(table.capacity, -1, dtype=np.int32)
    # Later checks first, so that earlier checks overwrite them (upstream order).
    for code, fail in (
        (2, _existing_fail(state, table)),
        (1, _anti_fail(state, table)),
        (0, _affinity_fail(state, table)),
    ):
        if fail is not None:
            index[fail] = code
    index.setflags(write=False)
    v = Verdicts(index, STATUSES)
    state.vector_cache = (table, table.node_generation, v)
    return v


def raw_scores(state: PreScoreState, table: NodeTable) -> IntArray:
    """Upstream Score of every table slot (cached per table and node generation)."""
    c = state.raw_cache
    if c is not None and c[0] is table and c[1] == table.node_generation:
        return c[2]
    total = np.zeros(table.capacity, dtype=np.int64)
    for key, values in state.scores.items():
        col = table.label(key)
        if not len(col.values):
            continue
        arr = np.zeros(len(col.values), dtype=np.int64)
        index = col.index
        for v, s in values.items():
            code = index.get(v)
            if code is not None:
                arr[code] = s
        codes = col.codes
        has = codes >= 0
        total += np.where(has, arr[np.where(has, codes, 0)], 0)
    total.setflags(write=False)
    state.raw_cache = (table, table.node_generation, total)
    return total
