"""Run the noderesources plugins through both paths (per node and vector) at once.

Every helper asserts that the vector path agrees with the per-node path before
returning the per-node result, so each table test also checks the two paths.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from kubesched.api.goformat import MANY, ONE, Num
from kubesched.api.types import Container, Node, Pod, PodSpec
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeSet
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.noderesources import BalancedAllocation, Fit
from tests.builders import build_table, parse_resource_list, rows_named

ScorePlugin = Fit | BalancedAllocation
Res = dict[str, str | int]

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_IO_A = "kubernetes.io/something"
K8S_IO_B = "subdomain.kubernetes.io/something"
HUGEPAGES_A = "hugepages-2Mi"


def resource_pod(
    name: str,
    *containers: Res,
    init: Sequence[Res] = (),
    sidecars: Sequence[Res] = (),
    overhead: Res | None = None,
    pod_level: Res | None = None,
    node: str = "",
) -> Pod:
    """A pod with one container per dict of requests (like upstream's
    newResourcePod / newResourceInitPod / newResourceOverheadPod); ``sidecars``
    are init containers with ``restartPolicy: Always``, placed first."""
    spec = PodSpec(
        containers=tuple(
            Container(f"c{i}", requests=parse_resource_list(r)) for i, r in enumerate(containers)
        ),
        init_containers=tuple(
            Container(f"s{i}", requests=parse_resource_list(r), restart_policy="Always")
            for i, r in enumerate(sidecars)
        )
        + tuple(Container(f"i{i}", requests=parse_resource_list(r)) for i, r in enumerate(init)),
        overhead=parse_resource_list(overhead) if overhead else {},
        resources=parse_resource_list(pod_level) if pod_level else {},
    )
    return Pod(name, spec=spec, node_name=node, phase="Running" if node else "Pending")


def node_with(name: str, allocatable: Res) -> Node:
    return Node(name, allocatable=parse_resource_list(allocatable))


def node_set(table: NodeTable, names: Sequence[str]) -> NodeSet:
    return NodeSet(table, rows_named(table, names))


def filter_both(
    plugin: Fit, pod: Pod, nodes: Sequence[Node], pods: Sequence[Pod] = ()
) -> list[Status]:
    """PreFilter, then Filter on every node both ways; the per-node statuses."""
    table = build_table(nodes, pods)
    pi = PodInfo(pod)
    state = CycleState()
    _, st = plugin.pre_filter(state, pi, table)
    assert st.is_success()
    rows = rows_named(table, [n.name for n in nodes]).tolist()
    exact = [plugin.filter(state, pi, _info(table, r)) for r in rows]
    verdicts = plugin.filter_vector(state, pi, table)
    assert verdicts is not None
    vector = [
        Status(Code.SUCCESS) if verdicts.index[r] < 0 else verdicts.statuses[verdicts.index[r]]
        for r in rows
    ]
    assert vector == exact
    return exact


def filter_node(plugin: Fit, pod: Pod, node: NodeInfo) -> Status:
    """PreFilter, then Filter on one NodeInfo (per-node path only)."""
    pi = PodInfo(pod)
    state = CycleState()
    plugin.pre_filter(state, pi, NodeTable())
    return plugin.filter(state, pi, node)


def score_both(
    plugin: ScorePlugin,
    pod: Pod,
    nodes: Sequence[Node],
    pods: Sequence[Pod] = (),
    run_pre_score: bool = True,
) -> list[int]:
    """(PreScore,) then Score on every node both ways; the per-node scores."""
    table = build_table(nodes, pods)
    ns = node_set(table, [n.name for n in nodes])
    pi = PodInfo(pod)
    state = CycleState()
    if run_pre_score:
        assert plugin.pre_score(state, pi, ns).is_success()
    exact: list[int] = []
    for r in ns.rows.tolist():
        s, st = plugin.score(state, pi, _info(table, r))
        assert st.is_success(), st
        exact.append(s)
    vector = plugin.score_vector(state, pi, ns)
    assert vector is not None
    assert vector.dtype == np.int64
    assert vector.tolist() == exact
    return exact


def _info(table: NodeTable, row: int) -> NodeInfo:
    info = table.infos[row]
    assert info is not None
    return info


def cap_node(name: str, res: Res | None = None) -> Node:
    """Upstream st.MakeNode().Name(name).Capacity(res): allocatable = res plus pods: 32."""
    return node_with(name, {"pods": 32, **(res or {})})


def req_pod(name: str, *containers: Res, node: str = "") -> Pod:
    """Upstream st.MakePod().Req(c1).Req(c2)...: one container per requests map
    (``Container()`` with no requests is ``{}``)."""
    return resource_pod(name, *containers, node=node)


def one_and_many(formula: Callable[..., Num], *args: int | Sequence[int]) -> int:
    """``formula(xp, *args)`` (a formula over ``Ops``) for one node (``ONE``, Python
    ints) and as a one-element vector (``MANY``: each int, and each int of a list,
    as an int64 array); asserts both agree and returns the first."""

    def arrays(a: int | Sequence[int]) -> object:
        if isinstance(a, int):
            return np.array([a], dtype=np.int64)
        return [np.array([x], dtype=np.int64) for x in a]

    one = formula(ONE, *args)
    many = formula(MANY, *(arrays(a) for a in args))
    assert isinstance(one, int)
    assert np.asarray(many).dtype == np.int64
    assert np.asarray(many).tolist() == [one]
    return one
