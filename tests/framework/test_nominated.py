"""The nominated-load index (framework/nominated.py) equals the plain sum over the
nominator's ``nominated_pods_for_node``, whatever the history of nominations,
for every form it answers in (``query``, ``query_rows``, ``dense``)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.interfaces import Nominator as NominatorPort
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.nominated import NominatedLoadIndex
from kubesched.framework.results import NominatingInfo, NominatingMode
from kubesched.framework.types import PodInfo
from kubesched.scheduler.queue.nominator import Nominator
from tests.builders import build_table, make_node, make_pod
from tests.fakes import FakeNominator
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
_BY_KEY = {pi.pod.key: pi for pi in PODS}


def plain_load(
    nominator: NominatorPort, pod: PodInfo, table: NodeTable, nodes: Iterable[str] | None = None
) -> tuple[IntArray, IntArray]:
    """The definition: (rows ascending, summed request vectors) of the pods
    ``nominated_pods_for_node`` lists with priority >= the pod's (not the pod
    itself), per node with any (``nodes``: only these)."""
    found: list[tuple[int, IntArray]] = []
    for name in nominator.nominated_node_names() if nodes is None else nodes:
        row = table.row_of.get(name)
        if row is None:
            continue
        for pi in nominator.nominated_pods_for_node(name):
            if pi.pod.priority >= pod.pod.priority and pi.pod.uid != pod.pod.uid:
                found.append((row, table.request_vector(pi)))
    rows = sorted({r for r, _ in found})
    out = np.zeros((len(rows), len(table.resources)), dtype=np.int64)
    for r, v in found:
        out[rows.index(r), : len(v)] += v
    return np.array(rows, dtype=np.int64), out


def _pad(m: np.ndarray, width: int) -> np.ndarray:
    return np.pad(m, ((0, 0), (0, width - m.shape[1])))


def _same(got: tuple[IntArray, IntArray], want: tuple[IntArray, IntArray]) -> None:
    assert got[0].tolist() == want[0].tolist()
    width = max(got[1].shape[1], want[1].shape[1])
    assert np.array_equal(_pad(got[1], width), _pad(want[1], width))


def _queue_nominator() -> Nominator:
    """The queue's nominator, resolving every pod to its queued PodInfo."""
    return Nominator(lookup=_BY_KEY.get)


ops = st.lists(
    st.tuples(
        st.sampled_from(["add", "delete", "query", "rows", "dense"]),
        st.integers(0, len(PODS) - 1),
        st.integers(0, len(NODES) - 1),
    ),
    max_size=40,
)


@settings(max_examples=scaled(150), deadline=None)
@given(ops)
def test_index_equals_plain_load(history: list[tuple[str, int, int]]) -> None:
    table = build_table(NODES)
    nominator = _queue_nominator()
    index = nominator.load_index()
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
        elif op == "rows":
            names = [f"n{n}", f"n{(n + 1) % len(NODES)}"]
            got = index.query_rows(pi, table, [table.row_of[x] for x in names])
            _same(got, plain_load(nominator, pi, table, names))
        else:
            _same(index.query(pi, table), plain_load(nominator, pi, table))
            _check_dense(index, nominator, pi, table)


def _check_dense(
    index: NominatedLoadIndex, nominator: NominatorPort, pi: PodInfo, table: NodeTable
) -> None:
    dense = index.dense(pi, table)
    if dense is None:
        return
    # The matrix form over table slots: the same sums, zero elsewhere.
    want_rows, want = plain_load(nominator, pi, table)
    width = max(dense.shape[1], want.shape[1])
    expect = np.zeros((dense.shape[0], width), dtype=np.int64)
    expect[want_rows] = _pad(want, width)
    assert np.array_equal(_pad(dense, width), expect)


def test_the_fake_nominator_keeps_its_index_equal_to_its_pods() -> None:
    """The test double feeds the same index: a replaced and a deleted nomination."""
    table = build_table(NODES)
    nominator = FakeNominator()
    asking = PodInfo(make_pod("asking").uid("asking").priority(0).obj())
    for i, pi in enumerate(PODS):
        nominator.nominate(pi, f"n{i % 4}")
        _same(nominator.load_index().query(asking, table), plain_load(nominator, asking, table))
    nominator.nominate(PODS[0], "n3")
    nominator.delete(PODS[1].pod.uid)
    _same(nominator.load_index().query(asking, table), plain_load(nominator, asking, table))


def test_a_node_change_with_many_nominations_rebuilds_the_index() -> None:
    """A node change rebuilds the index from its nominations: with more of them
    than its initial room (16), the rebuilt arrays must all be large enough, and
    the change log tells the rebuild apart (a new epoch)."""
    nodes = [make_node(f"n{i}").capacity(cpu="8", memory="8Gi", pods=110).obj() for i in range(4)]
    table = build_table(nodes)
    nominator = FakeNominator()
    index = nominator.load_index()
    pods = [
        PodInfo(make_pod(f"m{i}").uid(f"m{i}").priority(5).req(cpu="100m").obj()) for i in range(40)
    ]
    asking = PodInfo(make_pod("asking").uid("asking").priority(0).obj())
    for i, pi in enumerate(pods):
        nominator.nominate(pi, f"n{i % 4}")
        index.query(asking, table)
    epoch = index.epoch
    table.node_generation += 1  # what a node update does to the key
    got = index.query(asking, table)
    assert index.epoch == epoch + 1
    _same(got, plain_load(nominator, asking, table))


def test_another_table_rebuilds_the_index() -> None:
    """The index follows one table at a time: asked about another (equal
    generations, other rows), it rebuilds for it instead of answering with the
    first table's rows."""
    first = build_table(NODES)
    second = build_table(list(reversed(NODES)))
    nominator = FakeNominator()
    index = nominator.load_index()
    nominator.nominate(PODS[3], "n0")
    asking = PodInfo(make_pod("asking").uid("asking").priority(0).obj())
    assert index.query(asking, first)[0].tolist() == [first.row_of["n0"]]
    epoch = index.epoch
    assert index.query(asking, second)[0].tolist() == [second.row_of["n0"]]
    assert index.epoch == epoch + 1
    assert first.row_of["n0"] != second.row_of["n0"]


def test_a_query_after_a_dense_read_sees_the_nominations_it_applied() -> None:
    """``dense`` applies the changed nominations too: a later ``query`` for the same
    priority must not hand back its remembered answer from before (a stale one
    would hide the new nomination, and preemption would count on a free node)."""
    table = build_table(NODES)
    nominator = FakeNominator()
    index = nominator.load_index()

    def pod(name: str, priority: int, cpu: str) -> PodInfo:
        return PodInfo(make_pod(name).uid(name).priority(priority).req(cpu=cpu).obj())

    asking = pod("asking", 10, "1")
    nominator.nominate(pod("low", 5, "1"), "n0")
    nominator.nominate(pod("a", 10, "1"), "n1")
    rows, _ = index.query(asking, table)
    assert rows.tolist() == [table.row_of["n1"]]
    nominator.nominate(pod("b", 10, "2"), "n2")
    # Not kept as a matrix for this pod (a lower-priority nomination does not
    # count), but the read brings the index up to date.
    assert index.dense(asking, table) is None
    rows, load = index.query(asking, table)
    assert rows.tolist() == [table.row_of["n1"], table.row_of["n2"]]
    assert load[:, table.res_index["cpu"]].tolist() == [1000, 2000]
