"""The vectorised answers of static plugins, derived from their per-node code.

A static plugin declares what its per-node ``filter`` / ``score`` reads of a node
(``framework.reads``); ``node_groups`` groups the live rows equal on those columns,
the plugin's own code runs once per group on a representative row and the answer
is spread to the group, so the per-node code stays the only definition.

``Derived`` keeps one plugin's answers per ``Reads`` while the table's nodes do
not change (``NodeTable.node_generation``); answers of a pod-dependent ``Reads``
(host ports) are never kept. A group answering Error, or a failing score, makes
the derived form answer None so the per-node path reports it. Normalisation is
the plugin's ``normalize_score`` on one score per group present (see
``DerivedScorePlugin.score_reads``).
"""

from __future__ import annotations

from typing import Final

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeSet, Verdicts
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.reads import (
    Columns,
    DerivedFilterPlugin,
    DerivedScorePlugin,
    LabelRead,
    Reads,
)
from kubesched.framework.results import NodeScore
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo

MAX_ENTRIES: Final = 256
"""A ``Derived`` drops all its answers of a kind beyond this many distinct ``Reads``
(a workload sees a handful of pod shapes; the bound only caps memory)."""


# --------------------------------------------------------------------------- groups


class NodeGroups:
    """The live rows grouped by node columns: ``group_of_row[row]`` (free slots:
    ``len(representatives)``), ``representatives[g]`` the first row of group g."""

    __slots__ = ("group_of_row", "representatives")

    def __init__(self, group_of_row: IntArray, representatives: list[int]) -> None:
        self.group_of_row = group_of_row
        self.representatives = representatives

    def __len__(self) -> int:
        return len(self.representatives)


def _label_codes(table: NodeTable, read: LabelRead) -> IntArray:
    """-1 without the label; with ``read.values``: a code per class of values (another
    value, or one of the sorted ``values``) combined with the value's place among
    the sorted ``bounds`` once parsed as int64 (not parsed, below / equal to each
    bound); without ``read.values``: the label's value code."""
    col = table.label(read.key)
    codes = col.codes.astype(np.int64)
    if read.values is None:
        return codes
    lut = np.zeros(len(col.values) + 1, dtype=np.int64)
    lut[-1] = -1  # code -1 (no label) indexes the last entry
    for i, v in enumerate(sorted(read.values)):
        c = col.index.get(v)
        if c is not None:
            lut[c] = i + 1
    out: IntArray = lut[codes]
    if read.bounds:
        bounds = np.array(sorted(read.bounds), dtype=np.int64)
        ints, parsed = col.as_ints()
        place = np.searchsorted(bounds, ints)
        equal = bounds[np.minimum(place, len(bounds) - 1)] == ints
        side = np.where(parsed, 2 * place + equal + 1, 0)
        out = np.where(out < 0, -1, out * (2 * len(bounds) + 2) + side)
    return out


def _name_entries(table: NodeTable, names: frozenset[str]) -> dict[int, int]:
    """Row -> the index of its node's name among the sorted ``names`` and "" (rows
    named otherwise are left out)."""
    out: dict[int, int] = {}
    for i, n in enumerate(sorted(names | {""})):
        row = table.row_of.get(n)
        if row is not None:
            out[row] = i
    return out


def _image_entries(table: NodeTable, image: str) -> dict[int, int]:
    """Row -> a code per distinct (size, num_nodes) of the image (rows without it
    are left out)."""
    out: dict[int, int] = {}
    seen: dict[tuple[int, int], int] = {}
    infos = table.infos
    for row in table.images.get(image, {}):
        info = infos[row]
        st = info.image_states.get(image) if info is not None else None
        key = (-1, -1) if st is None else (st.size, st.num_nodes)
        out[row] = seen.setdefault(key, len(seen))
    return out


def _sparse_columns(table: NodeTable, reads: Reads) -> list[dict[int, int]]:
    """The declared columns that are -1 on most rows (name, images, host ports), as
    row -> code for the other rows."""
    cols: list[dict[int, int]] = []
    if reads.names is not None:
        cols.append(_name_entries(table, reads.names))
    cols.extend(_image_entries(table, image) for image in reads.images)
    if reads.host_ports:
        # Port sets are not interned: rows using host ports are each their own group.
        cols.append({r: r for r in np.flatnonzero(table.has_ports).tolist()})
    return cols


def _dense_columns(table: NodeTable, reads: Reads) -> list[IntArray]:
    cols: list[IntArray] = []
    if reads.taints:
        cols.append(table.taint_set.astype(np.int64))
    if reads.unschedulable:
        cols.append(table.unschedulable.astype(np.int64))
    cols.extend(_label_codes(table, lr) for lr in reads.labels)
    return cols


def _spread(table: NodeTable, entries: dict[int, int]) -> IntArray:
    out = np.full(table.capacity, -1, dtype=np.int64)
    if entries:
        out[np.fromiter(entries, np.int64, len(entries))] = list(entries.values())
    return out


def _dense_limit(n: int) -> int:
    """Keys below this are ranked with ``np.bincount`` (linear), larger ones sorted."""
    return 4 * n + 64


def _compress(key: IntArray, bound: int) -> tuple[IntArray, int]:
    """``key`` (values in [0, bound)) renumbered 0.. in value order, and the number
    of distinct values."""
    if bound <= _dense_limit(len(key)):
        present = np.bincount(key, minlength=bound) > 0
        if present.all():
            return key, bound
        rank = np.cumsum(present) - 1
        out: IntArray = rank[key]
        return out, int(rank[-1]) + 1
    values, inverse = np.unique(key, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64, copy=False), len(values)


def node_groups(table: NodeTable, reads: Reads, live: IntArray | None = None) -> NodeGroups:
    """Group the live rows (``live``: ``np.flatnonzero(table.alive)`` if known) by the
    columns ``reads`` declares, in column-value order."""
    if live is None:
        live = np.flatnonzero(table.alive)
    n = len(live)
    if n == 0:
        return NodeGroups(np.zeros(table.capacity, dtype=np.int64), [])
    dense = _dense_columns(table, reads)
    sparse = _sparse_columns(table, reads)
    if not dense:
        return _sparse_groups(table, live, sparse)
    key = np.zeros(n, dtype=np.int64)
    bound = 1
    for col in dense + [_spread(table, entries) for entries in sparse]:
        c = col[live] + 1  # >= 0
        radix = int(c.max()) + 1
        # key < bound <= max(n, dense limit) here, so this cannot overflow int64.
        key = key * radix + c
        bound *= radix
        if bound > _dense_limit(n):
            key, bound = _compress(key, bound)
    key, count = _compress(key, bound)
    first = np.full(count, n, dtype=np.int64)
    np.minimum.at(first, key, np.arange(n, dtype=np.int64))
    group_of_row = np.full(table.capacity, count, dtype=np.int64)
    group_of_row[live] = key
    group_of_row.setflags(write=False)
    return NodeGroups(group_of_row, live[first].tolist())


def _sparse_groups(table: NodeTable, live: IntArray, cols: list[dict[int, int]]) -> NodeGroups:
    """``node_groups`` when every column is sparse: the rows without a code form
    group 0."""
    special = sorted(r for r in set[int]().union(*cols) if table.alive[r])
    keys = [tuple(col.get(r, -1) for col in cols) for r in special]
    default = len(live) > len(special)
    gid = {k: i + default for i, k in enumerate(sorted(set(keys)))}
    count = len(gid) + default
    group_of_row = np.where(table.alive, 0, count).astype(np.int64)
    reps = [-1] * count
    if default:
        taken = set(special)
        reps[0] = next(r for r in live[: len(special) + 1].tolist() if r not in taken)
    for r, k in zip(special, keys, strict=True):
        g = gid[k]
        group_of_row[r] = g
        if reps[g] < 0:
            reps[g] = r
    group_of_row.setflags(write=False)
    return NodeGroups(group_of_row, reps)


def _representative_infos(table: NodeTable, groups: NodeGroups) -> list[NodeInfo]:
    infos = table.infos
    out: list[NodeInfo] = []
    for row in groups.representatives:
        info = infos[row]
        assert info is not None, row
        out.append(info)
    return out


# --------------------------------------------------------------------------- answers


def derive_filter(
    plugin: DerivedFilterPlugin,
    state: CycleState,
    pod: PodInfo,
    table: NodeTable,
    groups: NodeGroups,
) -> Verdicts | None:
    """The plugin's ``filter`` once per group, spread to every row; None when some
    group's answer is neither success nor a rejection (an Error)."""
    statuses: list[Status] = []
    position: dict[Status, int] = {}
    index_of_group = np.full(len(groups) + 1, -1, dtype=np.int32)
    for g, info in enumerate(_representative_infos(table, groups)):
        s = plugin.filter(state, pod, info)
        if s.code == Code.SUCCESS:
            continue
        if not s.is_rejected():
            return None
        i = position.get(s)
        if i is None:
            i = position[s] = len(statuses)
            statuses.append(s)
        index_of_group[g] = i
    if not statuses:
        return Verdicts.all_pass(table.capacity)
    index = index_of_group[groups.group_of_row]
    index.setflags(write=False)
    return Verdicts(index, tuple(statuses))


def derive_raw_scores(
    plugin: DerivedScorePlugin,
    state: CycleState,
    pod: PodInfo,
    table: NodeTable,
    groups: NodeGroups,
) -> IntArray | None:
    """The plugin's raw ``score`` per group, plus a trailing 0 for free slots; None
    when some group's score fails."""
    raw = np.zeros(len(groups) + 1, dtype=np.int64)
    for g, info in enumerate(_representative_infos(table, groups)):
        score, s = plugin.score(state, pod, info)
        if s.code != Code.SUCCESS:
            return None
        raw[g] = score
    raw.setflags(write=False)
    return raw


def _normalize(
    plugin: DerivedScorePlugin, state: CycleState, pod: PodInfo, raw: list[int]
) -> list[int] | None:
    """The plugin's ``normalize_score`` over one score per group (raw as is without
    score extensions); None when it fails."""
    ext = plugin.score_extensions()
    if ext is None:
        return raw
    scores = [NodeScore("", v) for v in raw]
    if ext.normalize_score(state, pod, scores).code != Code.SUCCESS:
        return None
    return [x.score for x in scores]


class _ScoreEntry:
    """One ``Reads``' raw scores per group, and (once ``checked``) its ``slots``."""

    __slots__ = ("checked", "groups", "kept", "raw", "slots")

    def __init__(self, groups: NodeGroups, raw: IntArray | None, kept: bool) -> None:
        self.groups = groups
        self.raw = raw
        self.kept = kept
        """False for a pod-dependent ``Reads`` (derived for this call only)."""
        self.checked = False
        self.slots: IntArray | None = None


class Derived:
    """One static plugin's derived answers, kept per ``Reads`` for one table at one
    node generation. It serves one plugin object (answers depend on its args)."""

    __slots__ = ("_filters", "_generation", "_groups", "_live", "_scores", "_table")

    def __init__(self) -> None:
        self._table: NodeTable | None = None
        self._generation = -1
        self._groups: dict[Columns, NodeGroups] = {}
        self._live: IntArray | None = None
        """The table's live rows (computed on first need after a sync)."""
        self._filters: dict[Reads, Verdicts | None] = {}
        self._scores: dict[Reads, _ScoreEntry] = {}

    def _sync(self, table: NodeTable) -> None:
        """Drop every kept answer unless they are for ``table`` as it is now."""
        if self._table is not table or self._generation != table.node_generation:
            self._table = table
            self._generation = table.node_generation
            self._groups = {}
            self._live = None
            self._filters = {}
            self._scores = {}

    def groups(self, table: NodeTable, reads: Reads) -> NodeGroups:
        """``node_groups(table, reads)``, kept unless ``reads`` is pod-dependent."""
        if reads.host_ports:
            return node_groups(table, reads)
        self._sync(table)
        key = reads.columns
        got = self._groups.get(key)
        if got is None:
            if len(self._groups) >= MAX_ENTRIES:
                self._groups = {}
            if self._live is None:
                self._live = np.flatnonzero(table.alive)
            got = self._groups[key] = node_groups(table, reads, self._live)
        return got

    # ------------------------------------------------------------------ filter
    def filter(
        self, plugin: DerivedFilterPlugin, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> Verdicts | None:
        """Verdicts over every table row (a shared read-only index), equal to the
        plugin's ``filter`` on each live row; None when not static for this pod."""
        reads = plugin.filter_reads(state, pod)
        if reads is None:
            return None
        if reads.host_ports:
            return derive_filter(plugin, state, pod, table, node_groups(table, reads))
        self._sync(table)
        filters = self._filters
        if reads in filters:
            return filters[reads]
        v = derive_filter(plugin, state, pod, table, self.groups(table, reads))
        if len(filters) >= MAX_ENTRIES:
            filters = self._filters = {}
        filters[reads] = v
        return v

    # ------------------------------------------------------------------ score
    def _score_entry(
        self, plugin: DerivedScorePlugin, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> _ScoreEntry | None:
        reads = plugin.score_reads(state, pod)
        if reads is None:
            return None
        if reads.host_ports:
            groups = node_groups(table, reads)
            return _ScoreEntry(groups, derive_raw_scores(plugin, state, pod, table, groups), False)
        self._sync(table)
        entries = self._scores
        e = entries.get(reads)
        if e is None:
            groups = self.groups(table, reads)
            e = _ScoreEntry(groups, derive_raw_scores(plugin, state, pod, table, groups), True)
            if len(entries) >= MAX_ENTRIES:
                entries = self._scores = {}
            entries[reads] = e
        return e

    def scores(
        self, plugin: DerivedScorePlugin, state: CycleState, pod: PodInfo, nodes: NodeSet
    ) -> IntArray | None:
        """Final scores of ``nodes`` (per-node ``score`` then ``normalize_score``);
        None when not static for the pod or a score fails."""
        e = self._score_entry(plugin, state, pod, nodes.table)
        if e is None or e.raw is None:
            return None
        g = e.groups.group_of_row[nodes.rows]
        if plugin.score_extensions() is None:
            out: IntArray = e.raw[g]
            return out
        present = np.zeros(len(e.raw), dtype=np.bool_)
        present[g] = True
        idx = np.flatnonzero(present)
        got = _normalize(plugin, state, pod, e.raw[idx].tolist())
        if got is None:
            return None
        final = np.zeros(len(e.raw), dtype=np.int64)
        final[idx] = got
        return final[g]

    def slots(
        self, plugin: DerivedScorePlugin, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> IntArray | None:
        """Final scores of every slot when independent of which nodes are scored, else
        None (``SlotScorePlugin`` contract)."""
        e = self._score_entry(plugin, state, pod, table)
        if e is None or e.raw is None or not e.kept:
            return None
        if not e.checked:
            e.checked = True
            raw, live = e.raw, e.raw[:-1]
            if plugin.score_extensions() is None:
                e.slots = raw[e.groups.group_of_row]
            elif len(live) and live[live.argmax()] == live[live.argmin()]:
                got = _normalize(plugin, state, pod, [int(live[0])])
                if got is not None:
                    e.slots = np.full(table.capacity, got[0], dtype=np.int64)
            if e.slots is not None:
                e.slots.setflags(write=False)
        return e.slots
