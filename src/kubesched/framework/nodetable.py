"""NodeTable: every node's scheduling state as per-node vectors (structure of arrays).

The scheduler cache keeps it current incrementally next to the ``NodeInfo``
objects of the per-node paths. Rows are stable slots (a deleted node's row is
reused); ``order`` is upstream's node-tree snapshot order (zones round-robin).

Resource axis: ``cpu`` (milli), ``memory``, ``ephemeral-storage``, ``pods``, then
scalar resources as first seen; the ``pods`` column counts pods in ``requested``
and is the capacity in ``allocatable``; ``free == allocatable - requested``
always. Every row change is logged (``rows_changed_since(seq)`` for per-row
caches); ``layout_generation`` bumps when the arrays are reallocated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, TypeVar

import numpy as np
import numpy.typing as npt

from kubesched.api.selectors import parse_int64_label
from kubesched.api.types import (
    CPU,
    EPHEMERAL_STORAGE,
    LABEL_REGION,
    LABEL_REGION_BETA,
    LABEL_ZONE,
    LABEL_ZONE_BETA,
    MEMORY,
    PODS,
    Node,
    Taint,
)
from kubesched.framework.rowlog import RowLog
from kubesched.framework.types import NodeInfo, PodInfo, Resource

IntArray = npt.NDArray[np.int64]
_A = TypeVar("_A", bound=npt.NDArray[Any])
BoolArray = npt.NDArray[np.bool_]

BASE_RESOURCES: Final = (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)
COL_CPU: Final = 0
COL_MEMORY: Final = 1
COL_EPHEMERAL: Final = 2
COL_PODS: Final = 3


def zone_key(labels: Mapping[str, str]) -> str:
    """Region and zone of a node joined as upstream's ``GetZoneKey`` ("" if neither)."""
    region = labels.get(LABEL_REGION) or labels.get(LABEL_REGION_BETA, "")
    zone = labels.get(LABEL_ZONE) or labels.get(LABEL_ZONE_BETA, "")
    if not region and not zone:
        return ""
    return region + ":\x00:" + zone


class LabelColumn:
    """One label key over all rows: ``codes[row]`` is the value's index in ``values``
    (-1 when the node lacks the label)."""

    __slots__ = ("_ints", "codes", "index", "values")

    def __init__(self, codes: npt.NDArray[np.int32], values: list[str]) -> None:
        self.codes = codes
        self.values = values
        self.index = {v: i for i, v in enumerate(values)}
        self._ints: tuple[IntArray, BoolArray] | None = None

    def has(self) -> BoolArray:
        return self.codes >= 0

    def isin(self, values: Iterable[str]) -> BoolArray:
        codes = [self.index[v] for v in values if v in self.index]
        if not codes:
            return np.zeros(len(self.codes), dtype=np.bool_)
        if len(codes) == 1:
            out: BoolArray = self.codes == codes[0]
            return out
        return np.isin(self.codes, codes).astype(np.bool_, copy=False)

    def as_ints(self) -> tuple[IntArray, BoolArray]:
        """Values parsed as int64 (Gt/Lt); the mask tells which rows parsed."""
        if self._ints is None:
            parsed = np.zeros(len(self.values), dtype=np.int64)
            ok = np.zeros(len(self.values), dtype=np.bool_)
            for i, v in enumerate(self.values):
                n = parse_int64_label(v)
                if n is not None:
                    parsed[i] = n
                    ok[i] = True
            has = self.codes >= 0
            safe = np.where(has, self.codes, 0)
            if len(self.values) == 0:
                vals = np.zeros(len(self.codes), dtype=np.int64)
                valid = np.zeros(len(self.codes), dtype=np.bool_)
            else:
                vals = parsed[safe]
                valid = has & ok[safe]
            self._ints = (vals, valid)
        return self._ints


class NodeTable:
    """Per-node vectors of the whole cluster; see the module docstring."""

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self.names: list[str] = [""] * capacity
        self.infos: list[NodeInfo | None] = [None] * capacity
        self.row_of: dict[str, int] = {}
        self._free: list[int] = list(range(capacity - 1, -1, -1))
        self.alive = np.zeros(capacity, dtype=np.bool_)
        self.resources: list[str] = list(BASE_RESOURCES)
        self.res_index: dict[str, int] = {r: i for i, r in enumerate(self.resources)}
        self.allocatable = np.zeros((capacity, len(self.resources)), dtype=np.int64)
        width = len(self.resources)
        self.requested: IntArray
        self.free: IntArray
        """``allocatable - requested``, maintained incrementally."""
        self.non_zero: IntArray
        self._pod_state: IntArray
        self._set_pod_state(
            np.zeros((capacity, width), dtype=np.int64),
            np.zeros((capacity, width), dtype=np.int64),
            np.zeros((capacity, 2), dtype=np.int64),
        )
        self.unschedulable = np.zeros(capacity, dtype=np.bool_)
        self.taint_sets: list[tuple[Taint, ...]] = [()]
        self._taint_set_ids: dict[tuple[Taint, ...], int] = {(): 0}
        self.taint_set = np.zeros(capacity, dtype=np.int32)
        self.has_ports = np.zeros(capacity, dtype=np.bool_)
        self._affinity_rows: dict[int, int] = {}
        """Row -> number of its pods with pod affinity or anti-affinity terms
        (``SpecFacts.has_affinity``), rows with none left out."""
        self.affinity_pods = 0
        """Pods with pod affinity or anti-affinity terms over every row: while 0,
        InterPodAffinity knows that no existing pod has terms without reading pods."""
        self.images: dict[str, dict[int, int]] = {}
        """Normalized image name -> {row: size in bytes}."""
        self.node_generation = 0
        """Bumped on any node add/update/remove (not on pod changes)."""
        self.pod_generation = 0
        """Bumped on any pod add/remove."""
        self._labels: dict[str, LabelColumn] = {}
        self._labels_generation = -1
        self._zones: dict[str, list[int]] = {}
        self._zone_of: list[str] = [""] * capacity
        self._order: IntArray | None = None
        self._order_names: list[str] | None = None
        self._names_snapshot: tuple[int, tuple[str, ...]] | None = None
        self._req_token = object()
        self._delta_token = object()
        """This table's key parts in ``SpecFacts.memo`` for ``request_vector`` and
        ``_pod_delta`` (with the axis width)."""
        self.layout_generation = 0
        """Bumped when the per-row arrays are reallocated (growth, a new column)."""
        self._changes = RowLog()
        self.row_answer_flushes: dict[tuple[str, str], int] = {}
        """(store, reason) -> flushes of the per-row answer stores reading this
        table's change log (``row_answers.py``)."""

    # ------------------------------------------------------------------ change log
    @property
    def change_seq(self) -> int:
        """How many row changes were logged so far (a cursor for ``rows_changed_since``)."""
        return self._changes.seq

    def rows_changed_since(self, seq: int) -> list[int] | None:
        """Rows changed since the cursor ``seq`` (possibly repeated, in order), or
        None when that part of the log was dropped (recompute everything)."""
        return self._changes.since(seq)

    def _row_changed(self, row: int) -> None:
        self._changes.add(row, self.capacity)

    # ------------------------------------------------------------------ sizes
    def __len__(self) -> int:
        return len(self.row_of)

    def _grow(self) -> None:
        old = self.capacity
        new = old * 2
        self.names.extend([""] * old)
        self.infos.extend([None] * old)
        self._zone_of.extend([""] * old)
        self._free.extend(range(new - 1, old - 1, -1))
        self.alive = _grow1(self.alive, new)
        self.unschedulable = _grow1(self.unschedulable, new)
        self.taint_set = _grow1(self.taint_set, new)
        self.has_ports = _grow1(self.has_ports, new)
        self.allocatable = _grow2(self.allocatable, new)
        self._set_pod_state(
            _grow2(self.requested, new), _grow2(self.free, new), _grow2(self.non_zero, new)
        )
        self.capacity = new
        self._labels_generation = -1
        self.layout_generation += 1

    def _set_pod_state(self, requested: IntArray, free: IntArray, non_zero: IntArray) -> None:
        """Keep ``requested``, ``free`` and ``non_zero`` as views of one matrix (a pod
        change is one vector addition)."""
        rows, w = requested.shape
        m = np.empty((rows, 2 * w + 2), dtype=np.int64)
        m[:, :w] = requested
        m[:, w : 2 * w] = free
        m[:, 2 * w :] = non_zero
        self._pod_state = m
        self.requested = m[:, :w]
        self.free = m[:, w : 2 * w]
        self.non_zero = m[:, 2 * w :]

    def resource_col(self, name: str) -> int:
        """Column of a resource, adding one (zero everywhere) when first seen."""
        col = self.res_index.get(name)
        if col is None:
            col = len(self.resources)
            self.resources.append(name)
            self.res_index[name] = col
            pad = np.zeros((self.capacity, 1), dtype=np.int64)
            self.allocatable = np.hstack([self.allocatable, pad])
            self._set_pod_state(
                np.hstack([self.requested, pad]), np.hstack([self.free, pad]), self.non_zero
            )
            self.layout_generation += 1
        return col

    # ------------------------------------------------------------------ vectors of a pod
    def request_vector(self, pi: PodInfo) -> IntArray:
        """The pod's effective request over the resource axis (pods column = 1)."""
        # Kept on the spec's facts, per table and axis width (columns are
        # append-only, so the width pins the mapping).
        memo = pi.facts.memo
        key = (self._req_token, len(self.resources))
        vec: IntArray | None = memo.get(key)  # type: ignore[assignment]
        if vec is None:
            vec = self._resource_row(pi.request)
            vec[COL_PODS] = 1
            vec.setflags(write=False)
            memo[(self._req_token, len(self.resources))] = vec
        return vec

    def _resource_row(self, r: Resource) -> IntArray:
        for name in r.scalar:
            self.resource_col(name)
        row = np.zeros(len(self.resources), dtype=np.int64)
        row[COL_CPU] = r.milli_cpu
        row[COL_MEMORY] = r.memory
        row[COL_EPHEMERAL] = r.ephemeral_storage
        row[COL_PODS] = r.allowed_pod_number
        for name, q in r.scalar.items():
            row[self.res_index[name]] = q
        return row

    # ------------------------------------------------------------------ nodes
    def add_node(self, info: NodeInfo) -> int:
        node = info.node
        assert node is not None
        if not self._free:
            self._grow()
        row = self._free.pop()
        self.names[row] = node.name
        self.infos[row] = info
        self.row_of[node.name] = row
        self.alive[row] = True
        self._pod_state[row] = 0
        self.affinity_pods -= self._affinity_rows.pop(row, 0)
        self._set_node_fields(row, node, info)
        for pi in info.pods:
            self.add_pod(row, pi)
        self._zone_of[row] = zone = zone_key(node.labels)
        self._zones.setdefault(zone, []).append(row)
        self._node_changed()
        self._row_changed(row)
        return row

    def update_node(self, info: NodeInfo) -> None:
        node = info.node
        assert node is not None
        row = self.row_of[node.name]
        self.infos[row] = info
        self._set_node_fields(row, node, info)
        zone = zone_key(node.labels)
        if zone != self._zone_of[row]:
            self._remove_from_zone(row)
            self._zone_of[row] = zone
            self._zones.setdefault(zone, []).append(row)
        self._node_changed()
        self._row_changed(row)

    def remove_node(self, name: str) -> None:
        row = self.row_of.pop(name)
        self._remove_from_zone(row)
        self._drop_images(row)
        self.names[row] = ""
        self.infos[row] = None
        self.alive[row] = False
        self.allocatable[row] = 0
        self._pod_state[row] = 0
        self.unschedulable[row] = False
        self.taint_set[row] = 0
        self.has_ports[row] = False
        self.affinity_pods -= self._affinity_rows.pop(row, 0)
        self._free.append(row)
        self._node_changed()
        self._row_changed(row)

    def _set_node_fields(self, row: int, node: Node, info: NodeInfo) -> None:
        self.allocatable[row] = 0
        alloc = self._resource_row(info.allocatable)
        self.allocatable[row, : len(alloc)] = alloc
        np.subtract(self.allocatable[row], self.requested[row], out=self.free[row])
        self.unschedulable[row] = node.unschedulable
        self.taint_set[row] = self._taint_id(node.taints)
        self._drop_images(row)
        for name, state in info.image_states.items():
            self.images.setdefault(name, {})[row] = state.size

    def _drop_images(self, row: int) -> None:
        for name in [n for n, rows in self.images.items() if row in rows]:
            rows = self.images[name]
            del rows[row]
            if not rows:
                del self.images[name]

    def _taint_id(self, taints: tuple[Taint, ...]) -> int:
        tid = self._taint_set_ids.get(taints)
        if tid is None:
            tid = len(self.taint_sets)
            self.taint_sets.append(taints)
            self._taint_set_ids[taints] = tid
        return tid

    def _remove_from_zone(self, row: int) -> None:
        zone = self._zone_of[row]
        rows = self._zones[zone]
        rows.remove(row)
        if not rows:
            del self._zones[zone]

    def _node_changed(self) -> None:
        self.node_generation += 1
        self._order = None
        self._order_names = None

    # ------------------------------------------------------------------ pods
    def add_pod(self, row: int, pi: PodInfo) -> None:
        self._apply_pod(row, pi, 1)

    def remove_pod(self, row: int, pi: PodInfo) -> None:
        self._apply_pod(row, pi, -1)

    def replace_pod(self, row: int, old: PodInfo, new: PodInfo) -> None:
        """``remove_pod(row, old)`` then ``add_pod(row, new)``; nothing but the pod
        generation changes when both share one spec (same requests and ports)."""
        if old.facts is new.facts:
            self.pod_generation += 1
            self._row_changed(row)  # the pod object changed (labels may differ)
            return
        self._apply_pod(row, old, -1)
        self._apply_pod(row, new, 1)

    def _pod_delta(self, pi: PodInfo) -> IntArray:
        """Adding the pod's delta to a ``_pod_state`` row (cached per spec and width)."""
        vec = self.request_vector(pi)
        w = len(self.resources)
        memo = pi.facts.memo
        key = (self._delta_token, w)
        delta: IntArray | None = memo.get(key)  # type: ignore[assignment]
        if delta is None:
            delta = np.zeros(2 * w + 2, dtype=np.int64)
            delta[: len(vec)] = vec
            delta[w : w + len(vec)] = -vec
            delta[2 * w] = pi.facts.non0_cpu
            delta[2 * w + 1] = pi.facts.non0_mem
            delta.setflags(write=False)
            memo[key] = delta
        return delta

    def _apply_pod(self, row: int, pi: PodInfo, sign: int) -> None:
        delta = self._pod_delta(pi)
        if sign > 0:
            self._pod_state[row] += delta
        else:
            self._pod_state[row] -= delta
        facts = pi.facts
        if facts.has_affinity:
            n = self._affinity_rows.get(row, 0) + sign
            if n:
                self._affinity_rows[row] = n
            else:
                del self._affinity_rows[row]
            self.affinity_pods += sign
        if facts.host_ports or self.has_ports[row]:
            info = self.infos[row]
            self.has_ports[row] = info is not None and len(info.used_ports) > 0
        self.pod_generation += 1
        self._row_changed(row)

    # ------------------------------------------------------------------ order
    @property
    def order(self) -> IntArray:
        """Rows in snapshot order: zones round-robin, insertion order within a zone."""
        if self._order is None:
            zones = list(self._zones.values())
            out: list[int] = []
            depth = 0
            remaining = len(self.row_of)
            while len(out) < remaining:
                for rows in zones:
                    if depth < len(rows):
                        out.append(rows[depth])
                depth += 1
            self._order = np.array(out, dtype=np.int64)
            self._order_names = [self.names[r] for r in out]
        return self._order

    def names_snapshot(self) -> tuple[str, ...]:
        """``names`` as an immutable tuple (rebuilt after node changes only): row ->
        node name as of now, safe to keep after the table changes."""
        snap = self._names_snapshot
        if snap is None or snap[0] != self.node_generation:
            snap = (self.node_generation, tuple(self.names))
            self._names_snapshot = snap
        return snap[1]

    @property
    def ordered_names(self) -> list[str]:
        if self._order_names is None:
            _ = self.order
        assert self._order_names is not None
        return self._order_names

    def ordered_infos(self) -> list[NodeInfo]:
        infos = self.infos
        return [i for i in (infos[r] for r in self.order.tolist()) if i is not None]

    # ------------------------------------------------------------------ labels
    def label(self, key: str) -> LabelColumn:
        """The column of one label key (built lazily, rebuilt after node changes)."""
        if self._labels_generation != self.node_generation:
            self._labels = {}
            self._labels_generation = self.node_generation
        col = self._labels.get(key)
        if col is None:
            codes = np.full(self.capacity, -1, dtype=np.int32)
            values: list[str] = []
            index: dict[str, int] = {}
            for name, row in self.row_of.items():
                info = self.infos[row]
                assert info is not None and info.node is not None, name
                v = info.node.labels.get(key)
                if v is None:
                    continue
                code = index.get(v)
                if code is None:
                    code = len(values)
                    values.append(v)
                    index[v] = code
                codes[row] = code
            col = LabelColumn(codes, values)
            self._labels[key] = col
        return col


def _grow1(a: _A, n: int) -> _A:
    out = np.zeros(n, dtype=a.dtype)
    out[: len(a)] = a
    return out  # type: ignore[return-value]


def _grow2(a: IntArray, n: int) -> IntArray:
    out = np.zeros((n, a.shape[1]), dtype=a.dtype)
    out[: len(a)] = a
    return out
