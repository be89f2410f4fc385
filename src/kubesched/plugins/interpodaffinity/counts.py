"""Counts per topology pair (upstream ``topologyToMatchedTermCount`` /
``scoreMap``), with helpers that fill them from per-row pod counts and read
them back as vectors over a NodeTable.

:class:`TopologyCounts` is upstream's map by ``topologyPair`` (zero entries
deleted) as key -> value -> count, so one key's counts read as an array.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from kubesched.framework.nodetable import BoolArray, IntArray, LabelColumn, NodeTable


class TopologyCounts:
    """(topology key, value) -> count; zero entries are removed, as upstream."""

    __slots__ = ("_by_key", "_code_cache", "_size")

    def __init__(self) -> None:
        self._by_key: dict[str, dict[str, int]] = {}
        self._size = 0
        self._code_cache: dict[str, tuple[LabelColumn, IntArray]] = {}

    def __len__(self) -> int:
        """Number of pairs with a non-zero count (upstream ``len(map)``)."""
        return self._size

    def get(self, key: str, value: str) -> int:
        d = self._by_key.get(key)
        return 0 if d is None else d.get(value, 0)

    def topology_keys(self) -> Iterator[str]:
        return iter(self._by_key)

    def add(self, key: str, value: str, delta: int) -> None:
        """``m[pair] += delta``, deleting the pair when it reaches zero."""
        if delta == 0:
            return
        d = self._by_key.get(key)
        if d is None:
            d = {}
            self._by_key[key] = d
        old = d.get(value, 0)
        new = old + delta
        if new == 0:
            del d[value]
            self._size -= 1
            if not d:
                del self._by_key[key]
        else:
            if old == 0:
                self._size += 1
            d[value] = new
        self._code_cache.pop(key, None)

    def merge_values(self, key: str, values: dict[str, int]) -> None:
        """Add non-zero counts for many values of one key."""
        if not values:
            return
        if key not in self._by_key:
            # Bulk path (PreFilter): a fresh key takes the non-zero counts as they are.
            self._by_key[key] = dict(values)
            self._size += len(values)
            self._code_cache.pop(key, None)
            return
        for v, c in values.items():
            self.add(key, v, c)

    def clone(self) -> TopologyCounts:
        c = TopologyCounts()
        c._by_key = {k: dict(d) for k, d in self._by_key.items()}
        c._size = self._size
        return c

    def as_dict(self) -> dict[tuple[str, str], int]:
        """{(key, value): count}, for tests and debugging."""
        return {(k, v): c for k, d in self._by_key.items() for v, c in d.items()}

    def by_code(self, key: str, col: LabelColumn) -> IntArray:
        """Counts of one key indexed by ``col``'s value codes (0 for values without
        a count). Cached until the key's counts change."""
        cached = self._code_cache.get(key)
        if cached is not None and cached[0] is col:
            return cached[1]
        arr = np.zeros(len(col.values), dtype=np.int64)
        index = col.index
        for v, c in self._by_key.get(key, {}).items():
            code = index.get(v)
            if code is not None:
                arr[code] = c
        self._code_cache[key] = (col, arr)
        return arr

    def __repr__(self) -> str:
        return f"TopologyCounts({self.as_dict()})"


def per_row(counts: TopologyCounts, key: str, table: NodeTable) -> tuple[IntArray, BoolArray]:
    """(count of the row's value of ``key``, row has the label) for every table slot."""
    col = table.label(key)
    codes = col.codes
    has: BoolArray = codes >= 0
    if not len(col.values):
        return np.zeros(len(codes), dtype=np.int64), has
    arr = counts.by_code(key, col)
    out: IntArray = np.where(has, arr[np.where(has, codes, 0)], 0)
    return out, has


def values_from_rows(
    table: NodeTable, key: str, rows: IntArray, counts: IntArray
) -> tuple[dict[str, int], bool]:
    """Sum per-row ``counts`` per value of label ``key``: (non-zero sums, whether any
    row had the label); rows without it contribute nothing."""
    if len(rows) == 0:
        return {}, False
    col = table.label(key)
    codes = col.codes[rows]
    has = codes >= 0
    if not has.any():
        return {}, False
    sums = np.bincount(codes[has], weights=counts[has], minlength=len(col.values))
    nz = np.flatnonzero(sums)
    values = col.values
    # float64 sums of int64 counts are exact (far below 2**53).
    ints = sums[nz].astype(np.int64).tolist()
    return dict(zip([values[i] for i in nz.tolist()], ints, strict=True)), True
