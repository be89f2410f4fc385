"""Builders, a handle with namespaces, and runners for the InterPodAffinity tests.

``run_filter`` / ``run_score`` run the plugin's per-node Filter / Score on the
vectorised PreFilter / PreScore state and assert its vector forms agree on every
node (``tests.plugins.fakes.check_filter`` / ``check_score``), then run the
plugin again under ``Handle.per_node`` (states built pod by pod) and assert the
same statuses and scores, so every table case is checked on all paths.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from kubesched.api.types import (
    Affinity,
    LabelSelector,
    LabelSelectorRequirement,
    Namespace,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodSpec,
    WeightedPodAffinityTerm,
)
from kubesched.framework.config import InterPodAffinityArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import Handle as HandleProtocol
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.ports import ClusterReader
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.interpodaffinity import InterPodAffinity
from tests.builders import build_table
from tests.fakes import FakeHandle, FakeReader
from tests.plugins.fakes import check_filter, check_score, table_infos

# The namespaces of upstream's scoring_test.go (`namespaces`), plus NS1 of
# TestRequiredAffinityMultipleNodes.
NAMESPACES: dict[str, Mapping[str, str]] = {
    "subteam1.team1": {"team": "team1"},
    "subteam2.team1": {"team": "team1"},
    "subteam1.team2": {"team": "team2"},
    "subteam2.team2": {"team": "team2"},
    "NS1": {},
}


# --------------------------------------------------------------------------- selectors


def sel_in(key: str, *values: str) -> LabelSelector:
    return LabelSelector(match_expressions=(LabelSelectorRequirement(key, "In", values),))


def sel_not_in(key: str, *values: str) -> LabelSelector:
    return LabelSelector(match_expressions=(LabelSelectorRequirement(key, "NotIn", values),))


def sel_exists(key: str) -> LabelSelector:
    return LabelSelector(match_expressions=(LabelSelectorRequirement(key, "Exists"),))


def sel_exprs(*reqs: tuple[str, str, tuple[str, ...]]) -> LabelSelector:
    return LabelSelector(
        match_expressions=tuple(LabelSelectorRequirement(k, op, v) for k, op, v in reqs)
    )


def term(
    selector: LabelSelector | None,
    topology_key: str,
    namespaces: Sequence[str] = (),
    ns_selector: LabelSelector | None = None,
) -> PodAffinityTerm:
    return PodAffinityTerm(selector, topology_key, tuple(namespaces), ns_selector)


def wterm(weight: int, t: PodAffinityTerm) -> WeightedPodAffinityTerm:
    return WeightedPodAffinityTerm(weight, t)


def affinity(
    required: Sequence[PodAffinityTerm] = (),
    anti: Sequence[PodAffinityTerm] = (),
    preferred: Sequence[WeightedPodAffinityTerm] = (),
    preferred_anti: Sequence[WeightedPodAffinityTerm] = (),
) -> Affinity:
    pa = PodAffinity(tuple(required), tuple(preferred)) if required or preferred else None
    paa = PodAffinity(tuple(anti), tuple(preferred_anti)) if anti or preferred_anti else None
    return Affinity(pod_affinity=pa, pod_anti_affinity=paa)


def pod(
    name: str = "p",
    namespace: str = "default",
    labels: Mapping[str, str] | None = None,
    node: str = "",
    aff: Affinity | None = None,
    uid: str = "",
    nominated: str = "",
) -> Pod:
    return Pod(
        name,
        namespace,
        uid=uid,
        labels=dict(labels or {}),
        spec=PodSpec(affinity=aff),
        node_name=node,
        nominated_node_name=nominated,
    )


def node(name: str, **labels: str) -> Node:
    return Node(name, labels=labels)


def node_with(name: str, labels: Mapping[str, str]) -> Node:
    return Node(name, labels=dict(labels))


# --------------------------------------------------------------------------- handle


class NamespaceReader(FakeReader):
    def __init__(self, namespaces: Mapping[str, Mapping[str, str]]) -> None:
        super().__init__()
        self.namespaces = {n: Namespace(n, dict(lbl)) for n, lbl in namespaces.items()}

    def namespace(self, name: str) -> Namespace | None:
        return self.namespaces.get(name)


class Handle(FakeHandle):
    def __init__(
        self, table: NodeTable, namespaces: Mapping[str, Mapping[str, str]] | None = None
    ) -> None:
        super().__init__(table)
        self._reader = NamespaceReader(NAMESPACES if namespaces is None else namespaces)

    @property
    def reader(self) -> ClusterReader:
        return self._reader


def make_plugin(
    table: NodeTable,
    args: InterPodAffinityArgs | None = None,
    namespaces: Mapping[str, Mapping[str, str]] | None = None,
    per_node: bool = False,
) -> InterPodAffinity:
    handle = Handle(table, namespaces)
    handle.per_node = per_node
    return InterPodAffinity(args, cast(HandleProtocol, handle))


def _per_node_filter(
    incoming: Pod, table: NodeTable, namespaces: Mapping[str, Mapping[str, str]] | None
) -> tuple[Status, dict[str, Status]]:
    """PreFilter and Filter under ``Handle.per_node`` (no index, no vector form)."""
    plugin = make_plugin(table, namespaces=namespaces, per_node=True)
    state = CycleState()
    pi = PodInfo(incoming)
    _, status = plugin.pre_filter(state, pi, table)
    if not status.is_success():
        return status, {}
    return status, {i.name: plugin.filter(state, pi, i) for i in table_infos(table)}


def fake_handle() -> HandleProtocol:
    """A handle without tables or namespaces (FakeHandle implements what plugins use)."""
    return cast(HandleProtocol, FakeHandle())


# --------------------------------------------------------------------------- runners


def run_filter(
    incoming: Pod,
    pods: Sequence[Pod],
    nodes: Sequence[Node],
    namespaces: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[Status, dict[str, Status]]:
    """(PreFilter status, Filter status by node) on both paths; no Filter statuses
    unless PreFilter succeeded."""
    table = build_table(nodes, pods)
    plugin = make_plugin(table, namespaces=namespaces)
    state = CycleState()
    pi = PodInfo(incoming)
    result, status = plugin.pre_filter(state, pi, table)
    assert result is None
    got: dict[str, Status] = {}
    if status.is_success():
        got = check_filter(plugin, state, pi, table)
    per_node = _per_node_filter(incoming, table, namespaces)
    assert per_node == (status, got)
    assert [s.code for s in per_node[1].values()] == [s.code for s in got.values()]
    return status, got


def run_score(
    incoming: Pod,
    pods: Sequence[Pod],
    nodes: Sequence[Node],
    args: InterPodAffinityArgs | None = None,
    namespaces: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[Status, dict[str, int]]:
    """(PreScore status, normalized scores by node) on both paths."""
    table = build_table(nodes, pods)
    plugin = make_plugin(table, args, namespaces)
    got = check_score(plugin, CycleState(), PodInfo(incoming), table)
    # The per-node PreScore state gives the same scores (check_score also reads
    # the vector form over it, which the runtime would not call under per_node).
    per_node = make_plugin(table, args, namespaces, per_node=True)
    assert check_score(per_node, CycleState(), PodInfo(incoming), table) == got
    return got
