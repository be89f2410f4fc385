"""InterPodAffinity PreScore, Score and NormalizeScore (upstream
interpodaffinity/scoring.go, v1.36).

PreScore sums weights per topology pair over existing pods
(``processExistingPod``), at the term's key on the existing pod's node: the
pod's preferred (anti-)affinity terms matching it ``±weight``; its required
affinity terms matching the pod ``+hardPodAffinityWeight`` (when > 0); its
preferred (anti-)affinity terms matching the pod ``±weight``.

PreScore: Skip (``ignorePreferredTermsOfExistingPods`` and no preferred terms, or
nothing matched), Error ``failed to parse pod: ...``. Score: Error without state.
NormalizeScore maps ``[min, max]`` to ``[0, 100]`` in float64, truncated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np

from kubesched.api.types import Node, Pod
from kubesched.framework.config import InterPodAffinityArgs
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.results import MAX_NODE_SCORE, NodeScore
from kubesched.framework.status import SKIP, Status, error
from kubesched.framework.types import NodeInfo
from kubesched.plugins.interpodaffinity.counts import values_from_rows
from kubesched.plugins.interpodaffinity.filtering import NAME
from kubesched.plugins.interpodaffinity.index import LabelGroup, PodIndex, SpecGroup, gather
from kubesched.plugins.interpodaffinity.terms import (
    EMPTY_LABELS,
    AffinityTerm,
    NamespaceResolver,
    matches,
    matches_resolved,
    pod_terms,
)

PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME
NO_STATE: Final = error(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')


class PreScoreState:
    """Upstream ``scoreMap``: key -> value -> summed weight (a key matched is present
    even if it sums to 0). Immutable after PreScore."""

    __slots__ = ("raw_cache", "scores")

    def __init__(self, scores: dict[str, dict[str, int]]) -> None:
        self.scores = scores
        self.raw_cache: tuple[NodeTable, int, IntArray] | None = None

    def clone(self) -> PreScoreState:
        return self


def has_preferred_terms(pod: Pod) -> bool:
    """The pod lists any preferred pod affinity or anti-affinity term."""
    aff = pod.spec.affinity
    if aff is None:
        return False
    pa, paa = aff.pod_affinity, aff.pod_anti_affinity
    return bool((pa is not None and pa.preferred) or (paa is not None and paa.preferred))


class _Sums:
    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self.scores: dict[str, dict[str, int]] = {}

    def add(self, key: str, groups: list[LabelGroup] | list[SpecGroup], weight: int) -> None:
        rows, counts = gather(groups)
        values, touched = values_from_rows(self.table, key, rows, counts * weight)
        if not touched:
            return
        d = self.scores.setdefault(key, {})
        for v, c in values.items():
            d[v] = d.get(v, 0) + c


def compute_pre_score(
    index: PodIndex | None,
    table: NodeTable,
    pod: Pod,
    args: InterPodAffinityArgs,
    resolver: NamespaceResolver,
) -> tuple[PreScoreState | None, Status | None]:
    """(state, None), else (None, Skip or Error); sums from ``index`` or, with None,
    :func:`pre_score_per_node`."""
    has_constraints = has_preferred_terms(pod)
    if args.ignore_preferred_terms_of_existing_pods and not has_constraints:
        return None, SKIP
    terms = pod_terms(pod)
    if terms.errors:
        # Normally caught by PreFilter already.
        return None, error(f"failed to parse pod: {terms.error_message()}")
    if not has_constraints and table.affinity_pods == 0:
        # No existing pod has terms (no spec groups): nothing would be summed.
        return None, SKIP
    ns_labels = resolver.labels(pod.namespace) or EMPTY_LABELS
    if index is None:
        scores = pre_score_per_node(
            table.ordered_infos(), pod, args, resolver, ns_labels, has_constraints
        )
        return (PreScoreState(scores), None) if scores else (None, SKIP)
    index.sync(table)
    sums = _Sums(table)
    if has_constraints:
        groups = list(index.label_groups.values())
        for wt in terms.preferred_affinity:
            sums.add(wt.term.topology_key, _matching(groups, wt.term, resolver), wt.weight)
        for wt in terms.preferred_anti:
            sums.add(wt.term.topology_key, _matching(groups, wt.term, resolver), -wt.weight)
    hard = args.hard_pod_affinity_weight
    for sg in index.spec_groups.values():
        t = sg.terms
        if hard > 0:
            for term in t.required_affinity:
                if matches(term, pod, ns_labels):
                    sums.add(term.topology_key, [sg], hard)
        for wt in t.preferred_affinity:
            if matches(wt.term, pod, ns_labels):
                sums.add(wt.term.topology_key, [sg], wt.weight)
        for wt in t.preferred_anti:
            if matches(wt.term, pod, ns_labels):
                sums.add(wt.term.topology_key, [sg], -wt.weight)
    if not sums.scores:
        return None, SKIP
    return PreScoreState(sums.scores), None


def pre_score_per_node(
    infos: Sequence[NodeInfo],
    pod: Pod,
    args: InterPodAffinityArgs,
    resolver: NamespaceResolver,
    ns_labels: Mapping[str, str],
    has_constraints: bool,
) -> dict[str, dict[str, int]]:
    """Upstream PreScore's loop over all nodes (every pod when the incoming pod has
    preferred terms, else those with affinity): the score map."""
    terms = pod_terms(pod)
    hard = args.hard_pod_affinity_weight
    scores: dict[str, dict[str, int]] = {}

    def add(t: AffinityTerm, weight: int, labels: Mapping[str, str]) -> None:
        value = labels.get(t.topology_key)
        if value is not None:
            d = scores.setdefault(t.topology_key, {})
            d[value] = d.get(value, 0) + weight

    for info in infos:
        node = info.node
        if node is None or not node.labels:
            continue
        labels = node.labels
        for existing in info.pods if has_constraints else info.pods_with_affinity:
            p = existing.pod
            for wt in terms.preferred_affinity:
                if matches_resolved(wt.term, p.namespace, p.labels, resolver):
                    add(wt.term, wt.weight, labels)
            for wt in terms.preferred_anti:
                if matches_resolved(wt.term, p.namespace, p.labels, resolver):
                    add(wt.term, -wt.weight, labels)
            their = pod_terms(p)
            if hard > 0:
                for t in their.required_affinity:
                    if matches(t, pod, ns_labels):
                        add(t, hard, labels)
            for wt in their.preferred_affinity:
                if matches(wt.term, pod, ns_labels):
                    add(wt.term, wt.weight, labels)
            for wt in their.preferred_anti:
                if matches(wt.term, pod, ns_labels):
                    add(wt.term, -wt.weight, labels)
    return scores


def _matching(
    groups: list[LabelGroup], term: AffinityTerm, resolver: NamespaceResolver
) -> list[LabelGroup]:
    return [g for g in groups if matches_resolved(term, g.namespace, g.labels, resolver)]


def score_node(state: PreScoreState, node: Node) -> int:
    """Upstream Score: the sums of the node's values of every scored key."""
    labels = node.labels
    total = 0
    for key, values in state.scores.items():
        v = labels.get(key)
        if v is not None:
            total += values.get(v, 0)
    return total


def normalize(state: PreScoreState, scores: list[NodeScore]) -> None:
    """Upstream NormalizeScore: min-max to [0, MaxNodeScore] in float64, truncated."""
    if not state.scores or not scores:
        return
    lo = min(s.score for s in scores)
    hi = max(s.score for s in scores)
    diff = hi - lo
    for s in scores:
        f = 0.0
        if diff > 0:
            # Go: float64(MaxNodeScore) * (float64(score-min) / float64(diff)).
            f = float(MAX_NODE_SCORE) * (float(s.score - lo) / float(diff))
        s.score = int(f)


def normalize_vector(raw: IntArray) -> IntArray:
    """:func:`normalize` over a vector of raw scores (state known non-empty)."""
    if len(raw) == 0:
        return raw
    lo = int(raw.min())
    diff = int(raw.max()) - lo
    if diff <= 0:
        return np.zeros(len(raw), dtype=np.int64)
    frac = (raw - lo).astype(np.float64) / np.float64(diff)
    out: IntArray = (np.float64(MAX_NODE_SCORE) * frac).astype(np.int64)
    return out
