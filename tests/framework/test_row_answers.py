"""The per-row answer store (framework/row_answers.py): entries follow the change
logs of the table and of the nominated-load index, stale rows are recomputed
and fresh ones are not, and each flush is counted under its reason."""

from __future__ import annotations

import numpy as np

from kubesched.framework.nodetable import NodeTable
from kubesched.framework.nominated import NominatedLoadIndex
from kubesched.framework.row_answers import (
    EVICTED,
    LAYOUT,
    LOG_TRUNCATED,
    NEW_KEY,
    NODES,
    TOO_MANY_CHANGES,
    RowAnswers,
    RowEntry,
)
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.scheduler.metrics import row_answer_flushes
from tests.builders import build_table, make_node, make_pod


class _Pods(RowEntry):
    __slots__ = ("pods",)

    def __init__(self, pods: np.ndarray) -> None:
        self.pods = pods


class _PodCounts:
    """A cache of each row's pod count on the store, with a spy on the rows it
    computes: the shape of every port of the store."""

    def __init__(self, store: RowAnswers[_Pods]) -> None:
        self.store = store
        self.computed: list[int] = []

    def _count(self, table: NodeTable, row: int) -> int:
        self.computed.append(row)
        info = table.infos[row]
        return 0 if info is None else len(info.pods)

    def get(
        self, table: NodeTable, key: object = "k", index: NominatedLoadIndex | None = None
    ) -> np.ndarray:
        e, changed = self.store.lookup(key, table, index)
        if e is None:
            pods = np.array([self._count(table, r) for r in range(table.capacity)])
            e = self.store.put(key, table, _Pods(pods), index)
        for r in set(changed):
            e.pods[r] = self._count(table, r)
        return e.pods


def _table(n: int = 4) -> NodeTable:
    return build_table([make_node(f"n{i}").capacity(cpu="8", pods=10).obj() for i in range(n)])


def _pod(name: str, node: str = "") -> PodInfo:
    b = make_pod(name).uid(name).req_map({"cpu": "100m"})
    return PodInfo((b.node(node) if node else b).obj())


def _truth(table: NodeTable) -> list[int]:
    return [0 if i is None else len(i.pods) for i in table.infos]


def test_a_stale_row_is_recomputed_and_a_fresh_row_is_not() -> None:
    table = _table()
    cache = _PodCounts(RowAnswers("spy", 4))
    cache.get(table)
    cache.computed.clear()
    row = table.row_of["n2"]
    table.add_pod(row, _pod("a", "n2"))
    table.add_pod(row, _pod("b", "n2"))
    got = cache.get(table)
    assert cache.computed == [row]
    assert got.tolist() == _truth(table)
    cache.computed.clear()
    assert cache.get(table).tolist() == _truth(table)
    assert cache.computed == []


def test_each_logged_row_invalidates_that_row_only() -> None:
    table = _table(6)
    cache = _PodCounts(RowAnswers("spy", 4))
    cache.get(table)
    for names in (["n0"], ["n1", "n5"], ["n3", "n3", "n4"]):
        cache.computed.clear()
        for i, name in enumerate(names):
            table.add_pod(
                table.row_of[name],
                _pod(f"{name}-{len(cache.computed)}-{i}-{table.change_seq}", name),
            )
        got = cache.get(table)
        assert sorted(cache.computed) == sorted({table.row_of[n] for n in names})
        assert got.tolist() == _truth(table)


def test_nominated_index_changes_invalidate_their_rows() -> None:
    table = _table()
    index = NominatedLoadIndex()
    asker = _pod("asker")
    index.query(asker, table)
    cache = _PodCounts(RowAnswers("spy", 4))
    cache.get(table, index=index)
    cache.computed.clear()
    nominated = PodInfo(make_pod("nom").uid("nom").priority(100).req_map({"cpu": "1"}).obj())
    index.add(nominated, "n1")
    index.query(asker, table)  # brings the index up to date (logs row n1)
    cache.get(table, index=index)
    assert cache.computed == [table.row_of["n1"]]


def test_layout_change_flushes_and_recomputes_every_row() -> None:
    table = _table(2)
    store: RowAnswers[_Pods] = RowAnswers("spy", 4)
    cache = _PodCounts(store)
    cache.get(table)
    cap = table.capacity
    for i in range(cap + 1):  # past the capacity: the arrays grow
        table.add_node(NodeInfo(make_node(f"m{i}").capacity(cpu="1", pods=1).obj()))
    assert table.capacity > cap
    cache.computed.clear()
    got = cache.get(table)
    assert len(cache.computed) == table.capacity
    assert got.tolist() == _truth(table)
    assert table.row_answer_flushes[("spy", LAYOUT)] == 1
    other = _table(2)
    cache.get(other)  # another table: every entry goes
    assert other.row_answer_flushes[("spy", LAYOUT)] == 1


def test_node_changes_flush_stores_that_read_nodes() -> None:
    table = _table()
    reads_nodes = _PodCounts(RowAnswers("nodes", 4, nodes=True))
    pods_only = _PodCounts(RowAnswers("pods", 4))
    reads_nodes.get(table)
    pods_only.get(table)
    info = table.infos[table.row_of["n1"]]
    assert info is not None
    table.update_node(info)
    reads_nodes.computed.clear()
    pods_only.computed.clear()
    reads_nodes.get(table)
    pods_only.get(table)
    assert len(reads_nodes.computed) == table.capacity
    assert len(pods_only.computed) < table.capacity
    assert table.row_answer_flushes[("nodes", NODES)] == 1
    assert ("pods", NODES) not in table.row_answer_flushes


def test_too_many_changes_and_truncated_log_flush() -> None:
    table = _table(8)
    cache = _PodCounts(RowAnswers("spy", 4, too_many=table.capacity // 2))  # at most 2 rows
    cache.get(table)
    for i in range(3):
        table.add_pod(table.row_of[f"n{i}"], _pod(f"x{i}", f"n{i}"))
    cache.computed.clear()
    assert cache.get(table).tolist() == _truth(table)
    assert len(cache.computed) == table.capacity
    assert table.row_answer_flushes[("spy", TOO_MANY_CHANGES)] == 1
    # Lag far behind: the log drops the part the entry's cursor points into.
    big = _PodCounts(RowAnswers("lag", 4))
    big.get(table)
    row = table.row_of["n0"]
    pi = _pod("churn", "n0")
    for _ in range(5000):
        table.add_pod(row, pi)
        table.remove_pod(row, pi)
    big.computed.clear()
    assert big.get(table).tolist() == _truth(table)
    assert len(big.computed) == table.capacity
    assert table.row_answer_flushes[("lag", LOG_TRUNCATED)] == 1


def test_keys_are_bounded_eviction_and_new_keys_are_counted() -> None:
    table = _table()
    store: RowAnswers[_Pods] = RowAnswers("spy", 2)
    cache = _PodCounts(store)
    for key in ("a", "b", "c"):
        cache.get(table, key)
    assert len(store) == 2
    cache.computed.clear()
    cache.get(table, "b")  # kept
    assert cache.computed == []
    cache.get(table, "a")  # evicted first (oldest)
    assert len(cache.computed) == table.capacity
    assert table.row_answer_flushes[("spy", EVICTED)] == 2
    assert table.row_answer_flushes[("spy", NEW_KEY)] == 4
    assert row_answer_flushes(table)["spy"] == {EVICTED: 2, NEW_KEY: 4}


def test_lru_keeps_the_recently_used_key() -> None:
    table = _table()
    cache = _PodCounts(RowAnswers("spy", 2, lru=True))
    for key in ("a", "b", "a", "c"):
        cache.get(table, key)
    cache.computed.clear()
    cache.get(table, "a")
    assert cache.computed == []


def test_lru_order_follows_repeated_and_alternating_lookups() -> None:
    table = _table()
    cache = _PodCounts(RowAnswers("spy", 2, lru=True))
    a, b = ("a",), ("b",)  # key objects reused, as callers do
    for key in (a, a, b, a, a, ("c",)):  # b is the least recently used
        cache.get(table, key)
    cache.computed.clear()
    cache.get(table, a)
    assert cache.computed == []
    cache.get(table, b)
    assert len(cache.computed) == table.capacity
    assert table.row_answer_flushes[("spy", EVICTED)] == 2


def test_met_before_only_after_the_table_changed() -> None:
    table = _table()
    store: RowAnswers[_Pods] = RowAnswers("spy", 2)
    assert not store.met_before("k", table)
    assert not store.met_before("k", table)  # same table state: still a first meeting
    table.add_pod(table.row_of["n0"], _pod("p", "n0"))
    assert store.met_before("k", table)
