"""The pods of a NodeTable grouped the way InterPodAffinity reads them.

Terms are matched once per group of pods, not pod by pod as upstream, and the
groups' per-row counts summed per topology value with numpy: **label groups**
(namespace, labels) hold every pod (matched by the incoming pod's terms), **spec
groups** (spec, namespace) the pods with affinity (``pods_with_affinity``, their
terms matched against the incoming pod). The counts are the multiset upstream
iterates, so the sums are equal. :meth:`PodIndex.sync` re-reads changed rows only.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from itertools import chain
from typing import Final

import numpy as np

from kubesched.api.types import PodSpec
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.interpodaffinity.terms import PodTerms, pod_terms

LabelKey = tuple[str, frozenset[tuple[str, str]]]
_EXTRA_KEY: Final = "InterPodAffinity/labels"
_EMPTY: Final[IntArray] = np.zeros(0, dtype=np.int64)


class LabelGroup:
    """Pods with one namespace and one label set: row -> number of such pods."""

    __slots__ = ("key", "labels", "namespace", "rows", "serial")

    def __init__(self, serial: int, key: LabelKey, labels: Mapping[str, str]) -> None:
        self.serial = serial
        self.key = key
        self.namespace = key[0]
        self.labels = labels
        self.rows: dict[int, int] = {}


class SpecGroup:
    """Pods with affinity sharing one spec object and namespace: row -> count."""

    __slots__ = ("namespace", "rows", "serial", "spec", "terms")

    def __init__(self, serial: int, spec: PodSpec, namespace: str, terms: PodTerms) -> None:
        self.serial = serial
        self.spec = spec  # keeps id(spec) of the group key valid while the group lives
        self.namespace = namespace
        self.terms = terms
        self.rows: dict[int, int] = {}


def label_key(pi: PodInfo) -> LabelKey:
    """(namespace, labels) of a pod, cached on its PodInfo (a PodInfo's pod never
    changes: an update creates a new PodInfo)."""
    key = pi.extra.get(_EXTRA_KEY)
    if key is None:
        pod = pi.pod
        key = (pod.namespace, frozenset(pod.labels.items()))
        pi.extra[_EXTRA_KEY] = key
    return key  # type: ignore[return-value]


class _RowState:
    """The groups one row contributes to (so that a refresh can take them back)."""

    __slots__ = ("label_groups", "spec_groups")

    def __init__(self, label_groups: list[LabelGroup], spec_groups: list[SpecGroup]) -> None:
        self.label_groups = label_groups
        self.spec_groups = spec_groups


class PodIndex:
    """Label groups and spec groups of one NodeTable; see the module docstring."""

    def __init__(self) -> None:
        self._table: weakref.ref[NodeTable] | None = None
        self._node_generation = -1
        self._pod_generation = -1
        self._rows: dict[int, _RowState] = {}
        self._alive: list[int] = []
        self._alive_arr: IntArray = _EMPTY
        self._seen = np.zeros(0, dtype=np.int64)
        """NodeInfo generation last read, per table slot (-1: none)."""
        self._serial = 0
        self._seq = 0
        """The table's change-log cursor at the last sync."""
        self.label_groups: dict[LabelKey, LabelGroup] = {}
        self.spec_groups: dict[tuple[int, str], SpecGroup] = {}
        self.anti_groups: dict[int, SpecGroup] = {}
        """Spec groups whose pods have required anti-affinity terms, by serial."""

    # ------------------------------------------------------------------ sync
    def sync(self, table: NodeTable) -> None:
        """Bring the groups up to date with ``table`` (once per cycle) from its
        change log (after node changes: every live row's generation)."""
        if self._table is None or self._table() is not table:
            self._reset(table)
        elif (
            table.pod_generation == self._pod_generation
            and table.node_generation == self._node_generation
        ):
            return
        infos = table.infos
        if table.node_generation != self._node_generation:
            self._nodes_changed(table)
            changed_rows: list[int] | None = None
        else:
            changed_rows = table.rows_changed_since(self._seq)
        if changed_rows is not None:
            # The table's change log names the rows whose pods changed.
            for row in dict.fromkeys(changed_rows):
                info = infos[row] if row < len(infos) else None
                if info is None or self._seen[row] == info.generation:
                    continue
                self._refresh(row, info)
                self._seen[row] = info.generation
        else:
            alive = self._alive
            gens = np.fromiter(
                (infos[r].generation for r in alive),  # type: ignore[union-attr]
                dtype=np.int64,
                count=len(alive),
            )
            changed = np.flatnonzero(gens != self._seen[self._alive_arr])
            for i in changed.tolist():
                row = alive[i]
                info = infos[row]
                assert info is not None
                self._refresh(row, info)
            self._seen[self._alive_arr] = gens
        self._seq = table.change_seq
        self._pod_generation = table.pod_generation
        self._node_generation = table.node_generation

    def _nodes_changed(self, table: NodeTable) -> None:
        self._alive = list(table.row_of.values())
        self._alive_arr = np.array(self._alive, dtype=np.int64)
        if len(self._seen) != table.capacity:
            seen = np.full(table.capacity, -1, dtype=np.int64)
            n = min(len(self._seen), table.capacity)
            seen[:n] = self._seen[:n]
            self._seen = seen
        live = set(self._alive)
        for row in [r for r in self._rows if r not in live]:
            self._drop(row)
            self._seen[row] = -1

    def _reset(self, table: NodeTable) -> None:
        self._table = weakref.ref(table)
        self._rows = {}
        self._seen = np.full(table.capacity, -1, dtype=np.int64)
        self._node_generation = -1
        self.label_groups = {}
        self.spec_groups = {}
        self.anti_groups = {}

    def _next_serial(self) -> int:
        self._serial += 1
        return self._serial

    def _drop(self, row: int) -> None:
        st = self._rows.pop(row)
        for lg in st.label_groups:
            del lg.rows[row]
            if not lg.rows:
                del self.label_groups[lg.key]
        for sg in st.spec_groups:
            del sg.rows[row]
            if not sg.rows:
                del self.spec_groups[(id(sg.spec), sg.namespace)]
                self.anti_groups.pop(sg.serial, None)

    def _refresh(self, row: int, info: NodeInfo) -> None:
        if row in self._rows:
            self._drop(row)
        label_counts: dict[LabelKey, int] = {}
        first: dict[LabelKey, PodInfo] = {}
        for pi in info.pods:
            k = label_key(pi)
            n = label_counts.get(k)
            if n is None:
                label_counts[k] = 1
                first[k] = pi
            else:
                label_counts[k] = n + 1
        lgs: list[LabelGroup] = []
        for k, n in label_counts.items():
            lg = self.label_groups.get(k)
            if lg is None:
                pod = first[k].pod
                lg = LabelGroup(self._next_serial(), k, dict(pod.labels))
                self.label_groups[k] = lg
            lg.rows[row] = n
            lgs.append(lg)
        spec_counts: dict[tuple[int, str], int] = {}
        spec_first: dict[tuple[int, str], PodInfo] = {}
        for pi in info.pods_with_affinity:
            sk = (id(pi.pod.spec), pi.pod.namespace)
            n = spec_counts.get(sk)
            if n is None:
                spec_counts[sk] = 1
                spec_first[sk] = pi
            else:
                spec_counts[sk] = n + 1
        sgs: list[SpecGroup] = []
        for sk, n in spec_counts.items():
            sg = self.spec_groups.get(sk)
            if sg is None:
                pod = spec_first[sk].pod
                sg = SpecGroup(self._next_serial(), pod.spec, pod.namespace, pod_terms(pod))
                self.spec_groups[sk] = sg
                if sg.terms.required_anti:
                    self.anti_groups[sg.serial] = sg
            sg.rows[row] = n
            sgs.append(sg)
        self._rows[row] = _RowState(lgs, sgs)


def gather(groups: Iterable[LabelGroup | SpecGroup]) -> tuple[IntArray, IntArray]:
    """(rows, pod counts) of all these groups, concatenated (rows may repeat)."""
    dicts = [g.rows for g in groups]
    if not dicts:
        return _EMPTY, _EMPTY
    n = sum(len(d) for d in dicts)
    rows = np.fromiter(chain.from_iterable(dicts), dtype=np.int64, count=n)
    counts = np.fromiter(chain.from_iterable(d.values() for d in dicts), dtype=np.int64, count=n)
    return rows, counts
