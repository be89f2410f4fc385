"""PodTopologySpread's PreFilter state, its AddPod/RemovePod updates and the
per-node Filter (upstream podtopologyspread/filtering.go, v1.36).

PreFilter state per DoNotSchedule constraint (``DomainCounts``): matching pods in
every eligible domain (``TpValueToMatchNum``) and their minimum. A node counts
when it has every constraint's key and passes the inclusion policies (affinity
Honor: nodeSelector / required affinity match; taints Honor: no untolerated
NoSchedule/NoExecute taint); terminating and other-namespace pods do not.

Filter, constraint by constraint in order:
- the node lacks the topology key: UnschedulableAndUnresolvable
  ``ERR_REASON_NODE_LABEL_NOT_MATCH``;
- ``matchNum + selfMatch - minMatch > maxSkew``: Unschedulable
  ``ERR_REASON_CONSTRAINTS_NOT_MATCH`` (so preemption may fix it), where
  ``minMatch`` is 0 while fewer than ``minDomains`` domains are eligible.

The minimum is exact (as upstream master); v1.36's two "critical paths" give the
same on every AddPod/RemovePod sequence upstream runs (one node's clone).
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
    """Matching pods per domain slot of one constraint: ``values[slot]``, ``index``
    (value -> slot), ``counts[slot]``, ``present[slot]`` (eligible). The vector
    path shares ``values`` / ``index`` with a table ``LabelColumn`` (``column``):
    never mutated in place."""

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
    """``updateWithPod`` (delta ±1): as upstream it skips no terminating pod, and an
    empty selector matches every pod here."""
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
