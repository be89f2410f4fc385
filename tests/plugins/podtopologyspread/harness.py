"""Shared helpers for the PodTopologySpread tests: builders in the shape of
upstream's test wrappers, and runners that execute every extension point on
both the exact (node-by-node) and the vector path and assert they agree."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from kubesched.api.types import (
    LabelSelector,
    LabelSelectorRequirement,
    Namespace,
    Node,
    OwnerReference,
    Pod,
    PodDisruptionBudget,
)
from kubesched.framework.config import LIST_DEFAULTING, PodTopologySpreadArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import Handle as FrameworkHandle
from kubesched.framework.interfaces import NodeSet
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.ports import ClusterReader
from kubesched.framework.results import NodeScore
from kubesched.framework.status import SUCCESS, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.podtopologyspread import PodTopologySpread
from kubesched.plugins.podtopologyspread.filtering import PRE_FILTER_STATE_KEY, PreFilterState
from kubesched.plugins.podtopologyspread.scoring import PRE_SCORE_STATE_KEY, PreScoreState
from tests.builders import build_table, make_node, make_pod
from tests.fakes import FakeHandle
from tests.plugins.fakes import table_infos
from tests.storage_fakes import FakeStorage

FOO = LabelSelector(match_expressions=(LabelSelectorRequirement("foo", "Exists"),))
BAR = LabelSelector(match_expressions=(LabelSelectorRequirement("bar", "Exists"),))
LIST = PodTopologySpreadArgs(defaulting_type=LIST_DEFAULTING)
SYSTEM = PodTopologySpreadArgs()


# --------------------------------------------------------------------------- builders


def node(name: str, *, hostname: bool = False, taint: bool = False, **labels: str) -> Node:
    """A node with these labels (and ``kubernetes.io/hostname`` only if asked:
    upstream's test nodes carry exactly the labels they list)."""
    return node_with(name, labels, hostname=hostname, taint=taint)


def node_with(
    name: str, labels: Mapping[str, str], *, hostname: bool = False, taint: bool = False
) -> Node:
    b = make_node(name)
    if not hostname:
        b.no_hostname_label()
    b.labels(dict(labels))
    if taint:
        # upstream's ``taints``: node.kubernetes.io/unschedulable:NoSchedule
        b.taint("node.kubernetes.io/unschedulable")
    return b.obj()


def pod(
    name: str, on: str = "", ns: str = "default", terminating: bool = False, **labels: str
) -> Pod:
    b = make_pod(name, ns).labels(**labels)
    if on:
        b.node(on)
    if terminating:
        b.terminating(1)
    return b.obj()


def rs_owned(p: Pod, rs: str = "rs1") -> Pod:
    p.owner_references = (OwnerReference("apps/v1", "ReplicaSet", rs, rs, True),)
    return p


class SelectorReader:
    """A ClusterReader that also knows the selectors of some ReplicaSets."""

    def __init__(self, selectors: Mapping[str, LabelSelector]) -> None:
        self.selectors = dict(selectors)

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        return None

    def pdbs(self) -> Sequence[PodDisruptionBudget]:
        return ()

    def namespace(self, name: str) -> Namespace | None:
        return None

    def storage(self) -> FakeStorage:
        return FakeStorage()

    def workload_selector(self, namespace: str, ref: OwnerReference) -> LabelSelector | None:
        return self.selectors.get(ref.name)


class Handle(FakeHandle):
    def __init__(self, table: NodeTable, reader: ClusterReader | None = None) -> None:
        super().__init__(table)
        self._reader = reader

    @property
    def reader(self) -> ClusterReader:
        return self._reader if self._reader is not None else super().reader


def plugin(
    table: NodeTable,
    args: PodTopologySpreadArgs | None = LIST,
    reader: ClusterReader | None = None,
    exact: bool = False,
) -> PodTopologySpread:
    handle = Handle(table, reader)
    handle.per_node = exact
    return PodTopologySpread(args, cast(FrameworkHandle, handle))


# --------------------------------------------------------------------------- runners


@dataclass
class Run:
    """One pod on one cluster, through both paths."""

    table: NodeTable
    pod: PodInfo
    exact: PodTopologySpread
    vec: PodTopologySpread
    exact_state: CycleState
    vec_state: CycleState
    status: Status

    def pre_filter_state(self) -> PreFilterState:
        s = self.vec_state.read(PRE_FILTER_STATE_KEY)
        assert isinstance(s, PreFilterState)
        return s

    def info(self, name: str) -> NodeInfo:
        info = self.table.infos[self.table.row_of[name]]
        assert info is not None
        return info


def domains_of(s: PreFilterState) -> list[dict[str, int]]:
    return [d.as_dict() for d in s.domains]


def mins_of(s: PreFilterState) -> list[int]:
    return [d.min_match for d in s.domains]


def assert_same_pre_filter_states(a: PreFilterState, b: PreFilterState) -> None:
    assert domains_of(a) == domains_of(b)
    assert mins_of(a) == mins_of(b)
    assert [d.n_domains for d in a.domains] == [d.n_domains for d in b.domains]
    for x, y in zip(a.constraints, b.constraints, strict=True):
        assert (x.max_skew, x.topology_key, x.selector.key, x.min_domains) == (
            y.max_skew,
            y.topology_key,
            y.selector.key,
            y.min_domains,
        )
        assert (x.node_affinity_policy, x.node_taints_policy) == (
            y.node_affinity_policy,
            y.node_taints_policy,
        )


def pre_filter(
    incoming: Pod,
    nodes: Sequence[Node],
    existing: Sequence[Pod] = (),
    args: PodTopologySpreadArgs | None = LIST,
    reader: ClusterReader | None = None,
) -> Run:
    """PreFilter on both paths; asserts equal statuses and equal states."""
    table = build_table(nodes, existing)
    pi = PodInfo(incoming)
    ex = plugin(table, args, reader, exact=True)
    ve = plugin(table, args, reader)
    s1, s2 = CycleState(), CycleState()
    _, st1 = ex.pre_filter(s1, pi, table)
    _, st2 = ve.pre_filter(s2, pi, table)
    assert st1 == st2 and st1.code == st2.code
    if st1.is_success():
        a = s1.read(PRE_FILTER_STATE_KEY)
        b = s2.read(PRE_FILTER_STATE_KEY)
        assert isinstance(a, PreFilterState) and isinstance(b, PreFilterState)
        assert_same_pre_filter_states(a, b)
    return Run(table, pi, ex, ve, s1, s2, st1)


def filter_all(run: Run, state: str = "both") -> dict[str, Status]:
    """Filter of every node: exact Filter on the exact state and on the vector
    state, and the vector Filter; asserts all three agree."""
    out: dict[str, Status] = {}
    v = run.vec.filter_vector(run.vec_state, run.pod, run.table)
    assert v is not None
    for info in table_infos(run.table):
        a = run.exact.filter(run.exact_state, run.pod, info)
        b = run.vec.filter(run.vec_state, run.pod, info)
        i = int(v.index[run.table.row_of[info.name]])
        c = SUCCESS if i < 0 else v.statuses[i]
        assert a == b == c, f"{info.name}: exact {a}, exact-on-vector-state {b}, vector {c}"
        assert a.code == b.code == c.code
        out[info.name] = a
    return out


def scores(
    incoming: Pod,
    nodes: Sequence[Node],
    failed: Sequence[Node] = (),
    existing: Sequence[Pod] = (),
    args: PodTopologySpreadArgs | None = SYSTEM,
    reader: ClusterReader | None = None,
) -> tuple[Status, dict[str, int], tuple[PreScoreState, PreScoreState] | None]:
    """PreScore + Score + NormalizeScore on the filtered ``nodes`` (``failed``
    nodes exist but did not pass Filter), on both paths; asserts they agree
    and returns (PreScore status, final scores, (exact state, vector state))."""
    table = build_table([*nodes, *failed], existing)
    pi = PodInfo(incoming)
    names = [n.name for n in nodes]
    infos = [table.infos[table.row_of[n]] for n in names]
    rows = np.array([table.row_of[n] for n in names], dtype=np.int64)
    results: list[Any] = []
    for exact in (True, False):
        p = plugin(table, args, reader, exact=exact)
        st = CycleState()
        ns = NodeSet(table, rows, [i for i in infos if i is not None])
        pre = p.pre_score(st, pi, ns)
        if not pre.is_success():
            results.append((pre, {}, None))
            continue
        state = st.read(PRE_SCORE_STATE_KEY)
        assert isinstance(state, PreScoreState)
        lst = []
        for info in ns.infos:
            sc, s = p.score(st, pi, info)
            assert s.is_success()
            lst.append(NodeScore(info.name, sc))
        assert p.normalize_score(st, pi, lst).is_success()
        got = {x.name: x.score for x in lst}
        if not exact:  # the runtime calls no vectorised form under per_node
            v = p.score_vector(st, pi, ns)
            assert v is not None
            assert v.dtype == np.int64
            assert dict(zip(names, v.tolist(), strict=True)) == got
        results.append((pre, got, state))
    (pre1, got1, state1), (pre2, got2, state2) = results
    assert pre1 == pre2 and pre1.code == pre2.code
    assert got1 == got2
    if state1 is None:
        return pre1, got1, None
    assert_same_pre_score_states(state1, state2)
    return pre1, got1, (state1, state2)


def pre_score_domains(s: PreScoreState) -> list[dict[str, int]]:
    """``TopologyValueToPodCounts`` ({} for hostname constraints)."""
    return [{} if d is None else d.as_dict() for d in s.domains]


def assert_same_pre_score_states(a: PreScoreState, b: PreScoreState) -> None:
    assert a.ignored == b.ignored
    assert pre_score_domains(a) == pre_score_domains(b)
    assert a.weights == b.weights
    assert a.require_all == b.require_all
