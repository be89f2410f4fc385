"""InterPodAffinity PreFilter, its AddPod / RemovePod extensions, and the exact Filter
(upstream interpodaffinity/filtering.go, v1.36).

PreFilter counts per topology pair (key, value): ``existing_anti`` (existing
pods' required anti-affinity terms matching the pod, at the term's key on their
node), ``affinity`` (pods matching *all* the pod's required affinity terms, once
per term) and ``anti`` (pods matching each required anti-affinity term). Skip
when the pod has no required terms and no existing anti-affinity matches it;
UnschedulableAndUnresolvable ``parsing pod: ...`` on unparsable terms.

Filter, in order: (1) affinity — every term's key on the node and a matching pod
in each term's domain, unless no pod anywhere matches and the pod matches its own
terms -> UnschedulableAndUnresolvable ``ERR_REASON_AFFINITY_RULES_NOT_MATCH``;
(2) anti-affinity -> Unschedulable ``ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH``;
(3) existing pods' anti-affinity -> Unschedulable
``ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH`` (so preemption may remove
them; AddPod / RemovePod keep the counts exact). Without PreFilter state Filter,
AddPod and RemovePod return Error ``error reading "PreFilterInterPodAffinity"
from cycleState: not found``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np

from kubesched.api.types import Node, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SKIP, Status, error, unresolvable, unschedulable
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.interpodaffinity.counts import TopologyCounts, values_from_rows
from kubesched.plugins.interpodaffinity.index import LabelGroup, PodIndex, gather
from kubesched.plugins.interpodaffinity.terms import (
    EMPTY_LABELS,
    AffinityTerm,
    NamespaceResolver,
    PodTerms,
    matches,
    matches_all_resolved,
    matches_resolved,
    pod_terms,
)

NAME: Final = "InterPodAffinity"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH: Final = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
ERR_REASON_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod anti-affinity rules"

AFFINITY_MISMATCH: Final = unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
ANTI_AFFINITY_MISMATCH: Final = unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
EXISTING_ANTI_AFFINITY_MISMATCH: Final = unschedulable(
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
)
NO_STATE: Final = error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')


class PreFilterState:
    """What PreFilter computed; ``clone`` copies the counts, shares the rest."""

    __slots__ = (
        "affinity",
        "anti",
        "existing_anti",
        "ns_labels",
        "pod",
        "resolver",
        "self_match",
        "terms",
        "vector_cache",
    )

    def __init__(
        self,
        pod: Pod,
        terms: PodTerms,
        resolver: NamespaceResolver,
        ns_labels: Mapping[str, str],
        existing_anti: TopologyCounts,
        affinity: TopologyCounts,
        anti: TopologyCounts,
    ) -> None:
        self.pod = pod
        self.terms = terms
        self.resolver = resolver
        self.ns_labels = ns_labels
        self.existing_anti = existing_anti
        self.affinity = affinity
        self.anti = anti
        # The pod matches all its own (resolved) affinity terms: the "first pod of a
        # group" exception of satisfyPodAffinity.
        self.self_match = matches_all_resolved(
            terms.required_affinity, pod.namespace, pod.labels, resolver
        )
        self.vector_cache: object = None
        """Owned by the vector path (verdicts for a table); dropped on any update."""

    def clone(self) -> PreFilterState:
        c = PreFilterState.__new__(PreFilterState)
        c.pod = self.pod
        c.terms = self.terms
        c.resolver = self.resolver
        c.ns_labels = self.ns_labels
        c.self_match = self.self_match
        c.existing_anti = self.existing_anti.clone()
        c.affinity = self.affinity.clone()
        c.anti = self.anti.clone()
        c.vector_cache = None
        return c

    def update_with_pod(self, other: Pod, node: Node, multiplier: int) -> None:
        """Count ``other`` on ``node`` in (+1) or out (-1), as upstream updateWithPod."""
        self.vector_cache = None
        labels = node.labels
        for t in pod_terms(other).required_anti:
            if matches(t, self.pod, self.ns_labels):
                _update(self.existing_anti, labels, t, multiplier)
        aff = self.terms.required_affinity
        if aff and matches_all_resolved(aff, other.namespace, other.labels, self.resolver):
            for t in aff:
                _update(self.affinity, labels, t, multiplier)
        for t in self.terms.required_anti:
            if matches_resolved(t, other.namespace, other.labels, self.resolver):
                _update(self.anti, labels, t, multiplier)


def _update(counts: TopologyCounts, labels: Mapping[str, str], t: AffinityTerm, m: int) -> None:
    value = labels.get(t.topology_key)
    if value is not None:
        counts.add(t.topology_key, value, m)


def read_state(state: CycleState) -> PreFilterState | None:
    s = state.get(PRE_FILTER_STATE_KEY)
    return s if isinstance(s, PreFilterState) else None


# --------------------------------------------------------------------------- PreFilter


def compute_pre_filter(
    index: PodIndex | None, table: NodeTable, pod: Pod, resolver: NamespaceResolver
) -> tuple[PreFilterState | None, Status | None]:
    """(state, None) on success; (None, status) for Skip or a parse failure. Counts
    from ``index`` (vectorised) or, with None, per node as upstream: equal."""
    terms = pod_terms(pod)
    if terms.errors:
        return None, unresolvable(f"parsing pod: {terms.error_message()}")
    if not terms.has_required and table.affinity_pods == 0:
        # No existing pod has any terms: Skip without reading a pod.
        return None, SKIP
    ns_labels = resolver.labels(pod.namespace) or EMPTY_LABELS
    affinity = TopologyCounts()
    anti = TopologyCounts()
    if index is None:
        infos = table.ordered_infos()
        existing = existing_anti_counts_per_node(infos, pod, ns_labels)
        if terms.has_required:
            incoming_counts_per_node(infos, terms, resolver, affinity, anti)
    else:
        index.sync(table)
        existing = _existing_anti_counts(index, table, pod, ns_labels)
        if terms.has_required:
            _incoming_counts(index, table, terms, resolver, affinity, anti)
    if not terms.has_required and len(existing) == 0:
        return None, SKIP
    return PreFilterState(pod, terms, resolver, ns_labels, existing, affinity, anti), None


def _existing_anti_counts(
    index: PodIndex, table: NodeTable, pod: Pod, ns_labels: Mapping[str, str]
) -> TopologyCounts:
    """Upstream getExistingAntiAffinityCounts over the spec groups with required
    anti-affinity (nodes without the term's key contribute nothing)."""
    out = TopologyCounts()
    by_key: dict[str, list[tuple[int, int]]] = {}
    for sg in index.anti_groups.values():
        for t in sg.terms.required_anti:
            if matches(t, pod, ns_labels):
                # One count per matching term per pod: a group matching twice on
                # one key adds its rows twice.
                by_key.setdefault(t.topology_key, []).extend(sg.rows.items())
    for key, items in by_key.items():
        _merge_items(out, table, key, items)
    return out


def _merge_items(
    out: TopologyCounts, table: NodeTable, key: str, items: list[tuple[int, int]]
) -> None:
    rows = np.fromiter((r for r, _ in items), dtype=np.int64, count=len(items))
    counts = np.fromiter((c for _, c in items), dtype=np.int64, count=len(items))
    values, _ = values_from_rows(table, key, rows, counts)
    out.merge_values(key, values)


def _incoming_counts(
    index: PodIndex,
    table: NodeTable,
    terms: PodTerms,
    resolver: NamespaceResolver,
    affinity: TopologyCounts,
    anti: TopologyCounts,
) -> None:
    """Upstream getIncomingAffinityAntiAffinityCounts over the label groups."""
    aff = terms.required_affinity
    anti_terms = terms.required_anti
    aff_groups: list[LabelGroup] = []
    anti_groups: list[list[LabelGroup]] = [[] for _ in anti_terms]
    for lg in index.label_groups.values():
        ns, labels = lg.namespace, lg.labels
        if aff and matches_all_resolved(aff, ns, labels, resolver):
            aff_groups.append(lg)
        for i, t in enumerate(anti_terms):
            if matches_resolved(t, ns, labels, resolver):
                anti_groups[i].append(lg)
    if aff_groups:
        rows, counts = gather(aff_groups)
        for t in aff:
            values, _ = values_from_rows(table, t.topology_key, rows, counts)
            affinity.merge_values(t.topology_key, values)
    for t, groups in zip(anti_terms, anti_groups, strict=True):
        if groups:
            rows, counts = gather(groups)
            values, _ = values_from_rows(table, t.topology_key, rows, counts)
            anti.merge_values(t.topology_key, values)


def existing_anti_counts_per_node(
    infos: Sequence[NodeInfo], pod: Pod, ns_labels: Mapping[str, str]
) -> TopologyCounts:
    """Upstream getExistingAntiAffinityCounts, node by node: each required
    anti-affinity term of an existing pod that matches ``pod`` counts once at
    the value of its key on the existing pod's node."""
    out = TopologyCounts()
    for info in infos:
        node = info.node
        if node is None:
            continue
        for existing in info.pods_with_required_anti_affinity:
            for t in pod_terms(existing.pod).required_anti:
                if matches(t, pod, ns_labels):
                    _update(out, node.labels, t, 1)
    return out


def incoming_counts_per_node(
    infos: Sequence[NodeInfo],
    terms: PodTerms,
    resolver: NamespaceResolver,
    affinity: TopologyCounts,
    anti: TopologyCounts,
) -> None:
    """Upstream getIncomingAffinityAntiAffinityCounts, node by node and pod by pod:
    a pod matching all required affinity terms counts once per term; a pod
    matching a required anti-affinity term counts once for that term."""
    aff = terms.required_affinity
    anti_terms = terms.required_anti
    for info in infos:
        node = info.node
        if node is None:
            continue
        labels = node.labels
        for existing in info.pods:
            p = existing.pod
            if aff and matches_all_resolved(aff, p.namespace, p.labels, resolver):
                for t in aff:
                    _update(affinity, labels, t, 1)
            for t in anti_terms:
                if matches_resolved(t, p.namespace, p.labels, resolver):
                    _update(anti, labels, t, 1)


# --------------------------------------------------------------------------- Filter


def satisfy_pod_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    """Upstream satisfyPodAffinity on a node's labels."""
    pods_exist = True
    for t in state.terms.required_affinity:
        value = labels.get(t.topology_key)
        if value is None:
            # Every topology key must be on the node.
            return False
        if state.affinity.get(t.topology_key, value) <= 0:
            pods_exist = False
    if not pods_exist:
        # The first pod of a group that has affinity to itself may go anywhere
        # (that carries the keys) when no pod in the cluster matches yet.
        return len(state.affinity) == 0 and state.self_match
    return True


def satisfy_pod_anti_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    """Upstream satisfyPodAntiAffinity on a node's labels."""
    if len(state.anti) > 0:
        for t in state.terms.required_anti:
            value = labels.get(t.topology_key)
            if value is not None and state.anti.get(t.topology_key, value) > 0:
                return False
    return True


def satisfy_existing_pods_anti_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    """Upstream satisfyExistingPodsAntiAffinity: any label pair of the node counted."""
    existing = state.existing_anti
    if len(existing) > 0:
        for key, value in labels.items():
            if existing.get(key, value) > 0:
                return False
    return True


def filter_node(state: PreFilterState, node: Node) -> Status | None:
    """The rejection for this node, or None when it passes."""
    labels = node.labels
    if not satisfy_pod_affinity(state, labels):
        return AFFINITY_MISMATCH
    if not satisfy_pod_anti_affinity(state, labels):
        return ANTI_AFFINITY_MISMATCH
    if not satisfy_existing_pods_anti_affinity(state, labels):
        return EXISTING_ANTI_AFFINITY_MISMATCH
    return None


def update_state(
    state: CycleState, to_change: PodInfo, node: Node | None, multiplier: int
) -> Status | None:
    """AddPod (+1) / RemovePod (-1); an Error status when PreFilter left no state."""
    s = read_state(state)
    if s is None:
        return NO_STATE
    assert node is not None
    s.update_with_pod(to_change.pod, node, multiplier)
    return None
