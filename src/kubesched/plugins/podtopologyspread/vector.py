"""PodTopologySpread over a whole NodeTable: PreFilter / PreScore states from
per-row counts (``PodCountIndex``) and ``np.bincount``, Filter and Score as array
operations. Each agrees exactly with its per-node counterpart in ``filtering.py`` /
``scoring.py``; None when it cannot answer for the state (per-node path then).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

from kubesched.api.goformat import go_round_vec
from kubesched.api.types import LABEL_HOSTNAME, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.derive import Derived
from kubesched.framework.interfaces import NodeSet, Verdicts
from kubesched.framework.nodetable import BoolArray, IntArray, LabelColumn, NodeTable
from kubesched.framework.reads import DerivedFilterPlugin, Reads, selector_reads, term_value
from kubesched.framework.results import MAX_NODE_SCORE
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.podtopologyspread.common import (
    Constraint,
    required_affinity_matches,
    untolerated,
)
from kubesched.plugins.podtopologyspread.filtering import (
    LABEL_MISSING,
    NOT_MATCH,
    DomainCounts,
    PreFilterState,
)
from kubesched.plugins.podtopologyspread.podcounts import PodCountIndex
from kubesched.plugins.podtopologyspread.scoring import PreScoreState, topology_normalizing_weight

_FILTER_STATUSES: Final = (LABEL_MISSING, NOT_MATCH)


_EXCLUDED: Final = Status(Code.UNSCHEDULABLE, "excluded by the inclusion policy")


class _AffinityInclusion:
    """``common.required_affinity_matches`` as a derived filter (rows it rejects
    are excluded by ``nodeAffinityPolicy: Honor``)."""

    name = "PodTopologySpread/nodeAffinityPolicy"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        n = node.node
        ok = n is not None and required_affinity_matches(pod.pod.spec, n)
        return SUCCESS if ok else _EXCLUDED

    def filter_reads(self, state: CycleState, pod: PodInfo) -> Reads:
        """The labels and name the pod's ``nodeSelector`` and required node
        affinity compare; the latter two (kept in ``SpecFacts.memo``)."""
        memo = pod.facts.memo
        reads = memo.get(self)
        if not isinstance(reads, Reads):
            spec = pod.pod.spec
            aff = spec.affinity
            req = None if aff is None or aff.node_affinity is None else aff.node_affinity.required
            terms = () if req is None else req.terms
            fragment = (
                tuple(sorted(spec.node_selector.items())),
                None if req is None else tuple(term_value(t) for t in terms),
            )
            reads = memo[self] = selector_reads(terms, spec.node_selector, fragment)
        return reads


class _TaintInclusion:
    """``common.untolerated`` as a derived filter (rows it rejects are excluded by
    ``nodeTaintsPolicy: Honor``)."""

    name = "PodTopologySpread/nodeTaintsPolicy"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        n = node.node
        return _EXCLUDED if n is None or untolerated(pod.pod.spec, n) else SUCCESS

    def filter_reads(self, state: CycleState, pod: PodInfo) -> Reads:
        """The node's taints; the pod's tolerations."""
        return Reads(taints=True, fragment=pod.pod.spec.tolerations)


_AFFINITY: Final = _AffinityInclusion()
_TAINTS: Final = _TaintInclusion()
_NO_STATE: Final = CycleState()
"""The inclusion tests read no cycle state."""


class InclusionMasks:
    """The rows passing a constraint's inclusion policies, derived
    (``framework.derive``) from the per-node tests in ``common``."""

    __slots__ = ("_affinity", "_taints")

    def __init__(self) -> None:
        self._affinity = Derived()
        self._taints = Derived()

    def _passing(
        self, derived: Derived, test: DerivedFilterPlugin, table: NodeTable, pod: PodInfo
    ) -> BoolArray:
        """Rows ``test`` passes (``derived`` keeps its answers)."""
        v = derived.filter(test, _NO_STATE, pod, table)
        assert v is not None  # the tests never answer an Error
        ok: BoolArray = v.index < 0
        return ok

    def included(self, table: NodeTable, pod: PodInfo, c: Constraint) -> BoolArray | None:
        """Rows passing ``c``'s inclusion policies; None means every row."""
        mask: BoolArray | None = None
        if c.honors_affinity:
            mask = self._passing(self._affinity, _AFFINITY, table, pod)
        if c.honors_taints:
            ok = self._passing(self._taints, _TAINTS, table, pod)
            mask = ok if mask is None else mask & ok
        return mask


def _all_keys(table: NodeTable, cols: Sequence[LabelColumn]) -> BoolArray:
    """Rows having every topology key (live rows only: free slots have no labels)."""
    mask = np.ones(table.capacity, dtype=np.bool_)
    for col in cols:
        mask &= col.codes >= 0
    return mask


def _and(a: BoolArray, b: BoolArray | None) -> BoolArray:
    return a if b is None else a & b


# --------------------------------------------------------------------------- PreFilter


def build_pre_filter_state(
    pod: PodInfo,
    constraints: tuple[Constraint, ...],
    table: NodeTable,
    index: PodCountIndex,
    masks: InclusionMasks,
) -> PreFilterState:
    """``calPreFilterState`` over the table: domain slots are the label column's
    value codes."""
    cols = [table.label(c.topology_key) for c in constraints]
    base = _all_keys(table, cols)
    domains = []
    for c, col in zip(constraints, cols, strict=True):
        eligible = _and(base, masks.included(table, pod, c))
        rows = np.flatnonzero(eligible)
        codes = col.codes[rows]
        n = len(col.values)
        per_row = index.counts(table, pod.pod.namespace, c.selector)[rows]
        counts = np.bincount(codes, weights=per_row, minlength=n).astype(np.int64)
        present = np.bincount(codes, minlength=n) > 0
        domains.append(DomainCounts(col.values, col.index, counts, present, col))
    return PreFilterState(constraints, domains)


def filter_vector(s: PreFilterState, pod: Pod, table: NodeTable) -> Verdicts | None:
    """Filter over every row; None when the state's slots are not this table's codes."""
    if not s.constraints:
        return Verdicts.all_pass(table.capacity)
    index = np.full(table.capacity, -1, dtype=np.int32)
    pod_labels = pod.labels
    for c, d in zip(s.constraints, s.domains, strict=True):
        col = table.label(c.topology_key)
        if d.column is not col:
            return None
        codes = col.codes
        has = codes >= 0
        # Slot -1 (no label) reads the appended 0; such rows fail on the label anyway.
        per_row = np.append(d.counts, np.int64(0))[codes]
        self_match = 1 if c.selector.matches(pod_labels) else 0
        skewed = per_row + (self_match - d.global_min(c.min_domains)) > c.max_skew
        open_ = index < 0
        index[open_ & ~has] = 0
        index[open_ & has & skewed] = 1
    return Verdicts(index, _FILTER_STATUSES)


# --------------------------------------------------------------------------- PreScore / Score


def build_pre_score_state(
    pod: PodInfo,
    constraints: tuple[Constraint, ...],
    nodes: NodeSet,
    require_all: bool,
    index: PodCountIndex,
    masks: InclusionMasks,
) -> PreScoreState:
    """``PreScore`` over the table (``nodes`` are the filtered nodes)."""
    table = nodes.table
    rows = nodes.rows
    cols = [table.label(c.topology_key) for c in constraints]
    if require_all:
        base = _all_keys(table, cols)
        ignored_rows = ~base
        ignored_sel = ignored_rows[rows]
        names = table.names
        ignored = frozenset(names[r] for r in rows[ignored_sel].tolist())
        considered = rows[~ignored_sel]
    else:
        base = table.alive
        ignored_rows = np.zeros(table.capacity, dtype=np.bool_)
        ignored = frozenset()
        considered = rows
    domains: list[DomainCounts | None] = []
    weights: list[float] = []
    slot_codes: list[IntArray | None] = []
    for c, col in zip(constraints, cols, strict=True):
        if c.topology_key == LABEL_HOSTNAME:
            domains.append(None)
            slot_codes.append(None)
            weights.append(topology_normalizing_weight(len(considered)))
            continue
        values: Sequence[str] = col.values
        value_index = col.index
        codes: IntArray = col.codes.astype(np.int64)
        n = len(values)
        if not require_all:
            # A missing label reads as "" (upstream indexes the labels map), the same
            # domain as an explicit "" value.
            empty = value_index.get("")
            if empty is None:
                empty = n
                values = [*values, ""]
                value_index = {**value_index, "": n}
                n += 1
            codes[codes < 0] = empty
        present = np.bincount(codes[considered], minlength=n) > 0
        eligible = np.flatnonzero(_and(base, masks.included(table, pod, c)))
        per_row = index.counts(table, pod.pod.namespace, c.selector)[eligible]
        counts = np.bincount(codes[eligible], weights=per_row, minlength=n).astype(np.int64)
        d = DomainCounts(values, value_index, counts, present)
        domains.append(d)
        slot_codes.append(codes)
        weights.append(topology_normalizing_weight(d.n_domains))
    s = PreScoreState(constraints, require_all, ignored, domains, weights)
    s.table = table
    s.node_generation = table.node_generation
    s.codes = tuple(slot_codes)
    s.ignored_rows = ignored_rows
    return s


def score_vector(
    s: PreScoreState, pod: Pod, nodes: NodeSet, index: PodCountIndex
) -> IntArray | None:
    """Normalized scores of ``nodes``; None when the state was not built by
    ``build_pre_score_state`` for this table generation."""
    table = nodes.table
    if s.table is not table or s.node_generation != table.node_generation or s.ignored_rows is None:
        return None
    rows = nodes.rows
    score = np.zeros(len(rows), dtype=np.float64)
    for c, d, w, codes in zip(s.constraints, s.domains, s.weights, s.codes, strict=True):
        has = table.label(c.topology_key).codes[rows] >= 0
        if d is None:
            cnt = index.counts(table, pod.namespace, c.selector)[rows]
        else:
            assert codes is not None
            slots = codes[rows]
            # Rows without the label read an appended 0 (and are masked out below).
            n = len(d.counts)
            cnt = np.append(d.counts, np.int64(0))[np.where(slots >= 0, slots, n)]
        term = cnt.astype(np.float64) * w + float(c.max_skew - 1)
        score = score + np.where(has, term, 0.0)
    raw = go_round_vec(score)
    valid = ~s.ignored_rows[rows]
    out = np.zeros(len(rows), dtype=np.int64)
    if not valid.any():
        return out
    vals = raw[valid]
    lo = int(vals.min())
    hi = max(int(vals.max()), 0)
    if hi == 0:
        out[valid] = MAX_NODE_SCORE
    else:
        out[valid] = MAX_NODE_SCORE * (hi + lo - vals) // hi
    return out
