"""PodTopologySpread's PreScore, Score and NormalizeScore for ScheduleAnyway
constraints (upstream podtopologyspread/scoring.go, v1.36), the exact path.

PreScore (given the nodes that passed Filter and the whole snapshot):
- ``requireAllTopologies`` is true unless the constraints are the *system*
  defaults; then every filtered node lacking a topology key is "ignored"
  (scores 0). With system defaults a node lacking the zone label is not
  ignored: it falls into the domain ``""`` (together with nodes whose label
  value is ``""``), which counts in the zone's normalizing weight but is
  never read (Score skips constraints whose key the node lacks).
- For a non-hostname constraint the domains are those of the non-ignored
  filtered nodes; their matching pods are counted over *all* nodes that have
  every key (when required) and pass the constraint's inclusion policies.
  Hostname constraints are counted per node at Score, from that node's pods
  alone and regardless of the inclusion policies.
- ``topologyNormalizingWeight = ln(size + 2)``, ``size`` = number of domains,
  or for hostname the number of non-ignored filtered nodes.

Score: ``round(sum over constraints the node has a key for of
count * weight + (maxSkew - 1))`` (Go's ``math.Round``: halves away from zero).
NormalizeScore: ignored nodes get 0; otherwise ``100 * (max + min - s) // max``
over the non-ignored scores (``max`` starts at 0, so all-zero scores give 100).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Final

from kubesched.api.goformat import go_round
from kubesched.api.types import LABEL_HOSTNAME, Pod
from kubesched.framework.nodetable import BoolArray, IntArray, NodeTable
from kubesched.framework.results import MAX_NODE_SCORE, NodeScore
from kubesched.framework.types import NodeInfo
from kubesched.plugins.podtopologyspread.common import (
    NAME,
    Constraint,
    count_pods_match,
    node_included,
    node_labels_match,
)
from kubesched.plugins.podtopologyspread.filtering import DomainCounts

PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME
INVALID_SCORE: Final = -1
_MAX_INT64: Final = 2**63 - 1


def topology_normalizing_weight(size: int) -> float:
    """``topologyNormalizingWeight``: ``ln(size + 2)``."""
    return math.log(size + 2)


class PreScoreState:
    """PreScore's result (immutable); ``domains[i]`` None for hostname. The vector
    builder adds ``table``, ``node_generation``, ``codes``, ``ignored_rows``."""

    __slots__ = (
        "codes",
        "constraints",
        "domains",
        "ignored",
        "ignored_rows",
        "node_generation",
        "require_all",
        "table",
        "weights",
    )

    def __init__(
        self,
        constraints: tuple[Constraint, ...],
        require_all: bool,
        ignored: frozenset[str],
        domains: Sequence[DomainCounts | None],
        weights: Sequence[float],
    ) -> None:
        self.constraints = constraints
        self.require_all = require_all
        self.ignored = ignored
        self.domains = tuple(domains)
        self.weights = tuple(weights)
        self.table: NodeTable | None = None
        self.node_generation = -1
        self.codes: tuple[IntArray | None, ...] = ()
        self.ignored_rows: BoolArray | None = None

    def clone(self) -> PreScoreState:
        return self


def build_pre_score_state(
    pod: Pod,
    constraints: tuple[Constraint, ...],
    filtered: Sequence[NodeInfo],
    all_infos: Iterable[NodeInfo],
    require_all: bool,
) -> PreScoreState:
    """``initPreScoreState`` + the counting loop of ``PreScore``, node by node."""
    ignored: set[str] = set()
    maps: list[dict[str, int] | None] = [
        None if c.topology_key == LABEL_HOSTNAME else {} for c in constraints
    ]
    for info in filtered:
        node = info.node
        assert node is not None
        if require_all and not node_labels_match(node.labels, constraints):
            ignored.add(node.name)
            continue
        for c, m in zip(constraints, maps, strict=True):
            if m is not None:
                m.setdefault(node.labels.get(c.topology_key, ""), 0)
    weights = [
        topology_normalizing_weight(len(filtered) - len(ignored) if m is None else len(m))
        for m in maps
    ]
    spec = pod.spec
    ns = pod.namespace
    for info in all_infos:
        node = info.node
        if node is None:
            continue
        if require_all and not node_labels_match(node.labels, constraints):
            continue
        for c, m in zip(constraints, maps, strict=True):
            if m is None or not node_included(c, spec, node):
                continue
            value = node.labels.get(c.topology_key, "")
            if value in m:
                m[value] += count_pods_match(info.pods, c.selector, ns)
    domains = [None if m is None else DomainCounts.from_dict(m) for m in maps]
    return PreScoreState(constraints, require_all, frozenset(ignored), domains, weights)


def score_node(s: PreScoreState, pod: Pod, info: NodeInfo) -> int:
    """The raw score of one node (0 for an ignored node)."""
    node = info.node
    assert node is not None
    if node.name in s.ignored:
        return 0
    score = 0.0
    for c, d, w in zip(s.constraints, s.domains, s.weights, strict=True):
        value = node.labels.get(c.topology_key)
        if value is None:
            continue
        if d is None:
            cnt = count_pods_match(info.pods, c.selector, pod.namespace)
        else:
            cnt = d.count(value)
        score += float(cnt) * w + float(c.max_skew - 1)
    return go_round(score)


def normalize_scores(s: PreScoreState, scores: list[NodeScore]) -> None:
    """``NormalizeScore`` in place: ignored nodes 0, the others reversed so that the
    node with the fewest matching pods gets ``MAX_NODE_SCORE``."""
    min_score = _MAX_INT64
    max_score = 0
    for ns in scores:
        if ns.name in s.ignored:
            ns.score = INVALID_SCORE
            continue
        min_score = min(min_score, ns.score)
        max_score = max(max_score, ns.score)
    for ns in scores:
        if ns.score == INVALID_SCORE:
            ns.score = 0
        elif max_score == 0:
            ns.score = MAX_NODE_SCORE
        else:
            # Non-negative operands: Go's truncating division is floor division.
            ns.score = MAX_NODE_SCORE * (max_score + min_score - ns.score) // max_score
