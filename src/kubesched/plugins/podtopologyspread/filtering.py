"""PodTopologySpread's PreFilter state, its AddPod/RemovePod updates and the
per-node Filter (upstream podtopologyspread/filtering.go, v1.36).

PreFilter state, per DoNotSchedule constraint (``DomainCounts``): the number
of matching pods in every *eligible* domain (``TpValueToMatchNum``) and the
global minimum over those domains. A node contributes to a constraint when it
has every constraint's topology key and passes the constraint's inclusion
policies (nodeAffinityPolicy Honor: the pod's nodeSelector and required node
affinity match it; nodeTaintsPolicy Honor: it has no untolerated
NoSchedule/NoExecute taint). Terminating pods and pods of other namespaces
are not counted.

Filter, constraint by constraint in order:
- the node lacks the topology key: UnschedulableAndUnresolvable
  ``ERR_REASON_NODE_LABEL_NOT_MATCH``;
- ``matchNum + selfMatch - minMatch > maxSkew``: Unschedulable
  ``ERR_REASON_CONSTRAINTS_NOT_MATCH`` (so preemption may fix it), where
  ``minMatch`` is 0 while fewer than ``minDomains`` domains are eligible.

The global minimum. v1.36 keeps two "critical paths" per constraint and
reads the first; upstream master replaced them by the exact minimum kept with
a histogram of domain counts. Both give the same minimum for every sequence
of AddPod/RemovePod on one node's copy of the state — the only sequences
upstream runs (preemption and the nominated-pods pass each clone the state
per node) — so kubesched keeps the exact minimum, which also stays right for
arbitrary sequences.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

import numpy as np

from kubesched.api.types import Node, Pod
from kubesched.framework.nodetable import BoolArray, IntArray, LabelColumn
from kubesched.framework.status import SUCCESS, Status, unresolvable, unschedulable
from kubesched.framework.types import NodeInfo
from kubesched.plugins.podtopologyspread.common import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    MAX_INT32,
    NAME,
    Constraint,
    count_pods_match,
    node_included,
    node_labels_match,
)

PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME

LABEL_MISSING: Final = unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
NOT_MATCH: Final = unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)


class DomainCounts:
    """Matching pods per topology domain of one constraint.

    Domains are slots: ``values[slot]`` is the domain's topology value,
    ``index`` maps values to slots, ``counts[slot]`` the matching pods and
    ``present[slot]`` whether the domain is eligible (a key of upstream's
    ``TpValueToMatchNum``; non-eligible slots count 0). The vector path builds
    slots equal to a table ``LabelColumn``'s value codes and records that
    ``column``; ``values`` and ``index`` are then shared with it, so they are
    never mutated in place (an update that adds a domain copies them).
    """

    __slots__ = (
        "_hist",
        "column",
        "counts",
        "index",
        "min_match",
        "n_domains",
        "present",
        "values",
    )

    def __init__(
        self,
        values: Sequence[str],
        index: Mapping[str, int],
        counts: IntArray,
        present: BoolArray,
        column: LabelColumn | None = None,
    ) -> None:
        self.values = values
        self.index = index
        self.counts = counts
        self.present = present
        self.column = column
        self.n_domains = int(np.count_nonzero(present))
        self.min_match = int(counts[present].min()) if self.n_domains else MAX_INT32
        self._hist: dict[int, int] | None = None

    @classmethod
    def from_dict(cls, by_value: Mapping[str, int]) -> DomainCounts:
        values = list(by_value)
        counts = np.fromiter(by_value.values(), dtype=np.int64, count=len(values))
        return cls(values, {v: i for i, v in enumerate(values)}, counts, np.ones(len(values), bool))

    # ------------------------------------------------------------------ reads
    def count(self, value: str) -> int:
        """Matching pods of the domain (0 if it is not eligible)."""
        slot = self.index.get(value)
        return 0 if slot is None else int(self.counts[slot])

    def global_min(self, min_domains: int) -> int:
        """``minMatchNum``: the minimum over eligible domains, or 0 while there are
        fewer than ``min_domains`` of them."""
        return 0 if self.n_domains < min_domains else self.min_match

    def as_dict(self) -> dict[str, int]:
        """Upstream's ``TpValueToMatchNum[i]`` (for tests and debugging)."""
        present = self.present
        counts = self.counts
        return {v: int(counts[i]) for v, i in self.index.items() if present[i]}

    # ------------------------------------------------------------------ updates
    def _histogram(self) -> dict[int, int]:
        if self._hist is None:
            vals, freq = np.unique(self.counts[self.present], return_counts=True)
            self._hist = dict(zip(vals.tolist(), freq.tolist(), strict=True))
        return self._hist

    def clone(self) -> DomainCounts:
        c = DomainCounts.__new__(DomainCounts)
        c.values = self.values
        c.index = self.index
        c.counts = self.counts.copy()
        c.present = self.present.copy()
        c.column = self.column
        c.n_domains = self.n_domains
        c.min_match = self.min_match
        # Build the histogram once on the original so that clones share its cost.
        c._hist = dict(self._histogram())
        return c

    def update(self, value: str, delta: int) -> None:
        """Add ``delta`` matching pods to the domain ``value`` (AddPod / RemovePod).
        A domain not eligible before becomes eligible, as a Go map entry would."""
        hist = self._histogram()
        slot = self.index.get(value)
        if slot is None:
            slot = len(self.values)
            self.values = [*self.values, value]
            self.index = {**self.index, value: slot}
            self.counts = np.append(self.counts, np.int64(0))
            self.present = np.append(self.present, False)
            self.column = None
        old = int(self.counts[slot])
        new = old + delta
        self.counts[slot] = new
        if not self.present[slot]:
            self.present[slot] = True
            self.n_domains += 1
            hist[new] = hist.get(new, 0) + 1
            self.min_match = min(self.min_match, new)
            return
        left = hist[old] - 1
        if left:
            hist[old] = left
        else:
            del hist[old]
        hist[new] = hist.get(new, 0) + 1
        if new < self.min_match:
            self.min_match = new
        elif old == self.min_match and left == 0:
            self.min_match = min(hist)


class PreFilterState:
    """What PreFilter computes for Filter: the DoNotSchedule constraints and their
    domain counts. Cloned for every dry run; clones share the constraints."""

    __slots__ = ("constraints", "domains")

    def __init__(self, constraints: tuple[Constraint, ...], domains: Sequence[DomainCounts]):
        self.constraints = constraints
        self.domains = list(domains)

    def clone(self) -> PreFilterState:
        return PreFilterState(self.constraints, [d.clone() for d in self.domains])


def build_pre_filter_state(
    pod: Pod, constraints: tuple[Constraint, ...], infos: Iterable[NodeInfo]
) -> PreFilterState:
    """``calPreFilterState`` node by node, as upstream (the exact path)."""
    maps: list[dict[str, int]] = [{} for _ in constraints]
    spec = pod.spec
    ns = pod.namespace
    for info in infos:
        node = info.node
        if node is None or not node_labels_match(node.labels, constraints):
            continue
        for c, m in zip(constraints, maps, strict=True):
            if not node_included(c, spec, node):
                continue
            v = node.labels[c.topology_key]
            m[v] = m.get(v, 0) + count_pods_match(info.pods, c.selector, ns)
    return PreFilterState(constraints, [DomainCounts.from_dict(m) for m in maps])


def filter_node(s: PreFilterState, pod: Pod, info: NodeInfo) -> Status:
    """Filter for one node: Success, UnschedulableAndUnresolvable
    ``LABEL_MISSING`` or Unschedulable ``NOT_MATCH``."""
    node = info.node
    assert node is not None
    labels = node.labels
    pod_labels = pod.labels
    for c, d in zip(s.constraints, s.domains, strict=True):
        value = labels.get(c.topology_key)
        if value is None:
            return LABEL_MISSING
        self_match = 1 if c.selector.matches(pod_labels) else 0
        if d.count(value) + self_match - d.global_min(c.min_domains) > c.max_skew:
            return NOT_MATCH
    return SUCCESS


def update_with_pod(
    s: PreFilterState, updated: Pod, preemptor: Pod, node: Node | None, delta: int
) -> None:
    """``updateWithPod``: count ``updated`` in (delta=1) or out of (delta=-1) its
    node's domains. As upstream it checks namespace, topology keys, the
    selector and the inclusion policies, but not whether ``updated`` is
    terminating, and an empty selector (which counts nothing in PreFilter)
    matches every pod here."""
    if updated.namespace != preemptor.namespace or node is None:
        return
    labels = node.labels
    if not node_labels_match(labels, s.constraints):
        return
    spec = preemptor.spec
    for c, d in zip(s.constraints, s.domains, strict=True):
        if not c.selector.matches(updated.labels):
            continue
        if not node_included(c, spec, node):
            continue
        d.update(labels[c.topology_key], delta)
