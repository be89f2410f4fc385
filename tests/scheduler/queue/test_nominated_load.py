"""The queue's incremental nominated load equals the plain computation from the
nominator's lookups (kubesched.framework.nominated), whatever the history."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.nodetable import NodeTable
from kubesched.framework.nominated import nominated_load
from kubesched.framework.results import NominatingInfo, NominatingMode
from kubesched.framework.snapshot import build_table
from kubesched.framework.types import PodInfo
from kubesched.scheduler.queue.nominated_load import NominatedLoad
from kubesched.scheduler.queue.nominator import Nominator
from tests.builders import make_node, make_pod
from tests.hypothesis_profiles import scaled

NODES = [make_node(f"n{i}").capacity(cpu="8", memory="8Gi", pods=10).obj() for i in range(4)]
PODS = [
    PodInfo(
        make_pod(f"p{i}")
        .uid(f"u{i}")
        .priority(i % 3 * 10)
        .req_map({"cpu": f"{i + 1}00m", **({"example.com/gpu": 1} if i % 4 == 0 else {})})
        .obj()
    )
    for i in range(8)
]


class _Lookups:
    def __init__(self, nominator: Nominator) -> None:
        self.n = nominator

    def nominated_node_names(self) -> list[str]:
        return [k for k, v in self.n.nominated_pods.items() if v]

    def nominated_pods_for_node(self, node: str) -> list[PodInfo]:
        return [self.n.infos[r.uid] for r in self.n.nominated_pods.get(node, ())]


def _pad(m: np.ndarray, width: int) -> np.ndarray:
    return np.pad(m, ((0, 0), (0, width - m.shape[1])))


ops = st.lists(
    st.tuples(
        st.sampled_from(["add", "delete", "query", "dense"]),
        st.integers(0, len(PODS) - 1),
        st.integers(0, len(NODES) - 1),
    ),
    max_size=40,
)


@settings(max_examples=scaled(150), deadline=None)
@given(ops)
def test_incremental_load_equals_plain_load(history: list[tuple[str, int, int]]) -> None:
    table = build_table(NODES)
    nominator = Nominator()
    index = NominatedLoad()
    for op, p, n in history:
        pi = PODS[p]
        if op == "add":
            nominator.add_nominated_pod(pi, NominatingInfo(f"n{n}", NominatingMode.OVERRIDE))
        elif op == "delete":
            nominator.delete_nominated_pod_if_exists(pi.pod)
        elif op == "dense":
            # The matrix form alone (the dry run's read): it brings the index up to
            # date, so a later query must not hand back an answer from before.
            _check_dense(index, nominator, pi, table)
        else:
            got_rows, got = index.query(nominator, pi, table)
            want_rows, want = nominated_load(_Lookups(nominator), pi, table)
            assert got_rows.tolist() == want_rows.tolist()
            width = max(got.shape[1], want.shape[1])
            assert np.array_equal(_pad(got, width), _pad(want, width))
            _check_dense(index, nominator, pi, table)


def _check_dense(index: NominatedLoad, nominator: Nominator, pi: PodInfo, table: NodeTable) -> None:
    dense = index.dense(nominator, pi, table)
    if dense is None:
        return
    # The matrix form over table slots: the same sums, zero elsewhere.
    want_rows, want = nominated_load(_Lookups(nominator), pi, table)
    width = max(dense.shape[1], want.shape[1])
    expect = np.zeros((dense.shape[0], width), dtype=np.int64)
    expect[want_rows] = _pad(want, width)
    assert np.array_equal(_pad(dense, width), expect)


def test_a_node_change_with_many_nominations_rebuilds_the_index() -> None:
    """A node change rebuilds the index from the nominator: with more nominations
    than its initial room (16), the rebuilt arrays must all be large enough, and
    the change log tells the rebuild apart (a new epoch)."""
    nodes = [make_node(f"n{i}").capacity(cpu="8", memory="8Gi", pods=110).obj() for i in range(4)]
    table = build_table(nodes)
    nominator = Nominator()
    index = NominatedLoad()
    pods = [
        PodInfo(make_pod(f"m{i}").uid(f"m{i}").priority(5).req(cpu="100m").obj()) for i in range(40)
    ]
    asking = PodInfo(make_pod("asking").uid("asking").priority(0).obj())
    for i, pi in enumerate(pods):
        nominator.add_nominated_pod(pi, NominatingInfo(f"n{i % 4}", NominatingMode.OVERRIDE))
        index.query(nominator, asking, table)
    epoch = index.epoch
    table.node_generation += 1  # what a node update does to the key
    got_rows, got = index.query(nominator, asking, table)
    want_rows, want = nominated_load(_Lookups(nominator), asking, table)
    assert index.epoch == epoch + 1
    assert got_rows.tolist() == want_rows.tolist()
    assert np.array_equal(got, want)


def test_a_query_after_a_dense_read_sees_the_nominations_it_applied() -> None:
    """``dense`` applies the nominator's log too: a later ``query`` for the same
    priority must not hand back its remembered answer from before (a stale one
    would hide the new nomination, and preemption would count on a free node)."""
    table = build_table(NODES)
    nominator = Nominator()
    index = NominatedLoad()

    def pod(name: str, priority: int, cpu: str) -> PodInfo:
        return PodInfo(make_pod(name).uid(name).priority(priority).req(cpu=cpu).obj())

    asking = pod("asking", 10, "1")
    nominator.add_nominated_pod(pod("low", 5, "1"), NominatingInfo("n0", NominatingMode.OVERRIDE))
    nominator.add_nominated_pod(pod("a", 10, "1"), NominatingInfo("n1", NominatingMode.OVERRIDE))
    rows, _ = index.query(nominator, asking, table)
    assert rows.tolist() == [table.row_of["n1"]]
    nominator.add_nominated_pod(pod("b", 10, "2"), NominatingInfo("n2", NominatingMode.OVERRIDE))
    # Not kept as a matrix for this pod (a lower-priority nomination does not
    # count), but the read brings the index up to date.
    assert index.dense(nominator, asking, table) is None
    rows, load = index.query(nominator, asking, table)
    assert rows.tolist() == [table.row_of["n1"], table.row_of["n2"]]
    assert load[:, table.res_index["cpu"]].tolist() == [1000, 2000]
