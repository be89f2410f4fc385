"""The vectorised scan in chunks and the deferred failure statuses (scheduler/schedule_one.py)
decide exactly as the per-node path on clusters large enough to be scanned in
several chunks.

The scan filters the rotated node order chunk by chunk and stops at the chunk
holding the last node it needs; the statuses of the nodes it rejected are kept
as arrays (``LazyNodeToStatus``) and written out only when read. Clusters of
hundreds of nodes where many nodes fail (too small, tainted, cordoned, full),
with a small ``percentageOfNodesToScore``, make the scan use several chunks;
every pod's outcome (chosen node, FitError text, per-node statuses in scan
order, evaluated nodes, per-plugin scores) and the rotating start index must
match the per-node path, pod after pod, as pods are bound.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from kubesched.api.types import NO_SCHEDULE, PREFER_NO_SCHEDULE, Node, Pod
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.results import NodeToStatus, reason_histogram
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.scheduler.cache import Cache
from kubesched.scheduler.schedule_one import LazyNodeToStatus
from tests.builders import make_node, make_pod
from tests.fakes import FakeNominator
from tests.scheduler.harness import same_outcome, vectorised_and_per_node


def _cluster(seed: int, n: int) -> list[Node]:
    rng = random.Random(seed)
    nodes = []
    for i in range(n):
        b = make_node(f"n{i:04d}").capacity(
            cpu=rng.choice(("100m", "1", "2", "4", "4", "4")),
            memory=rng.choice(("256Mi", "4Gi", "8Gi")),
            pods=rng.choice((1, 2, 110, 110)),
        )
        roll = rng.random()
        if roll < 0.1:
            b.taint("dedicated", "gpu", NO_SCHEDULE)
        elif roll < 0.15:
            b.taint("spot", "", PREFER_NO_SCHEDULE)
        elif roll < 0.2:
            b.unschedulable()
        nodes.append(b.obj())
    return nodes


def _pods(seed: int, count: int) -> list[Pod]:
    rng = random.Random(seed + 1)
    pods = []
    for i in range(count):
        b = make_pod(f"p{i:03d}").req(
            cpu=rng.choice(("100m", "500m", "1", "3")), memory=rng.choice(("128Mi", "1Gi"))
        )
        if rng.random() < 0.2:
            b.toleration("dedicated", "gpu", NO_SCHEDULE, "Equal")
        pods.append(b.obj())
    return pods


@pytest.mark.parametrize(
    ("seed", "n", "percentage"),
    [
        pytest.param(1, 400, 5, id="400 nodes, 5% to score: several chunks per scan"),
        pytest.param(2, 1200, 1, id="1200 nodes, 1% to score (the 100-node minimum)"),
        pytest.param(3, 300, 0, id="300 nodes, adaptive percentage: one chunk"),
    ],
)
def test_chunked_scan_decides_as_the_per_node_path(seed: int, n: int, percentage: int) -> None:
    cache = Cache()
    for node in _cluster(seed, n):
        cache.add_node(node)
    (alg_v, vec), (alg_e, exact) = vectorised_and_per_node(cache.table, FakeNominator(), percentage)
    for pod in _pods(seed, 40):
        same_outcome((alg_v, vec), (alg_e, exact), pod, cache)


def test_deferred_statuses_read_like_eager_ones() -> None:
    a = Status(Code.UNSCHEDULABLE, "a", plugin="P")
    b = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "b", plugin="Q")
    lazy = LazyNodeToStatus()
    eager = NodeToStatus()
    names = ("x", "y", "z", "w")
    lazy.defer(names, [2, 0], [1, 0], [a, b])
    eager.set("z", b)
    eager.set("x", a)
    assert len(lazy) == 2
    lazy.defer(names, [3], [0], [b])
    eager.set("w", b)
    assert len(lazy) == 3
    assert list(lazy) == list(eager)
    assert lazy.get("z") is b and lazy.get("y") is lazy.absent
    lazy.set("y", a)
    eager.set("y", a)
    assert list(lazy) == list(eager)
    assert lazy.nodes_for_status_code(list(names), Code.UNSCHEDULABLE) == ["x", "y"]


def _table_and_two_statuses(seed: int, n: int) -> tuple[NodeTable, tuple[str, ...], Status, Status]:
    """A table of ``_cluster(seed, n)``, its names, and two statuses of different
    plugins and codes."""
    cache = Cache()
    for node in _cluster(seed, n):
        cache.add_node(node)
    a = Status(Code.UNSCHEDULABLE, "Insufficient cpu", plugin="P")
    b = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had taint", "x", plugin="Q")
    return cache.table, cache.table.names_snapshot(), a, b


@pytest.mark.parametrize(
    "explicit_first",
    [
        pytest.param(False, id="only deferred entries: read off the arrays"),
        pytest.param(True, id="an explicit entry before the deferred ones"),
    ],
)
def test_deferred_statuses_count_and_select_like_eager_ones(explicit_first: bool) -> None:
    """The FitError histogram and preemption's potential nodes, read off the deferred
    arrays, are those of the eager dict (snapshot order, absent status for the rest)."""
    table, names, a, b = _table_and_two_statuses(5, 12)
    rows = table.order.tolist()
    lazy, eager = LazyNodeToStatus(), NodeToStatus()
    if explicit_first:
        lazy.set(names[rows[0]], b)
        eager.set(names[rows[0]], b)
    picked = rows[1:9]
    index = [0, 1, 0, 0, 1, 0, 0, 0]
    lazy.defer(names, picked, index, [a, b])
    for r, i in zip(picked, index, strict=True):
        eager.set(names[r], [a, b][i])
    for statuses in (lazy, eager):
        statuses.absent = Status(Code.UNSCHEDULABLE, "preemption: not helpful")
    want_hist = reason_histogram(eager, len(table))
    want_rows = [
        table.row_of[n]
        for n in eager.nodes_for_status_code(table.ordered_names, Code.UNSCHEDULABLE)
    ]
    assert lazy.rows_for_status_code(table, Code.UNSCHEDULABLE).tolist() == want_rows
    assert reason_histogram(lazy, len(table)) == want_hist
    assert sorted((s.message(), n) for s, n in lazy.status_counts()) == sorted(
        (s.message(), n) for s, n in eager.status_counts()
    )
    # Reading entry by entry afterwards still gives the eager dict, in order.
    assert list(lazy) == list(eager)


@pytest.mark.parametrize("seed", [pytest.param(s, id=f"seed {s}") for s in (11, 12, 13)])
def test_nominated_node_check_counts_the_node_s_other_nominated_pods(seed: int) -> None:
    """The check of a pod's nominated node (a one-row scan) reads that node's other
    nominated pods of equal or higher priority itself; outcomes are the per-node path's."""
    rng = random.Random(seed)
    cache = Cache()
    nodes = _cluster(seed, 40)
    for node in nodes:
        cache.add_node(node)
    nominator = FakeNominator()
    (alg_v, vec), (alg_e, exact) = vectorised_and_per_node(cache.table, nominator, 0)
    for i, pod in enumerate(_pods(seed, 30)):
        target = rng.choice(nodes).name
        pod.priority = rng.choice((0, 10, 100))
        pod.nominated_node_name = target
        for j in range(rng.randint(0, 3)):
            other = (
                make_pod(f"nom{i}-{j}")
                .uid(f"nom{i}-{j}")
                .priority(rng.choice((0, 10, 100)))
                .req(cpu=rng.choice(("500m", "1", "2")))
                .obj()
            )
            nominator.nominate(other, target)
        nominator.nominate(pod, target)  # its own nomination never counts
        same_outcome((alg_v, vec), (alg_e, exact), pod)


def test_a_spec_that_fitted_no_node_scans_in_one_chunk_and_decides_alike() -> None:
    """After a full scan found no node for a spec, the next pod of that spec filters
    the whole table in one chunk: outcomes stay the per-node path's, also once nodes
    free up and pods of that spec fit again."""
    rng = random.Random(5)
    cache = Cache()
    fillers: list[Pod] = []
    for i in range(400):
        node = make_node(f"n{i:04d}").capacity(cpu="1", memory="4Gi", pods=110).obj()
        cache.add_node(node)
        filler = make_pod(f"fill{i:04d}").req(cpu="600m", memory="128Mi").obj()
        filler.node_name = node.name
        cache.add_pod(filler)
        fillers.append(filler)
    (alg_v, vec), (alg_e, exact) = vectorised_and_per_node(cache.table, FakeNominator(), 5)
    template = make_pod("template").req(cpu="500m", memory="128Mi").obj()
    one_chunk = 0
    for i in range(30):
        if i in (6, 14, 22):
            # Free a few random nodes: pods of the spec fit there again.
            for filler in rng.sample(fillers, 3):
                if filler in fillers:
                    fillers.remove(filler)
                    cache.remove_pod(filler)
        one_chunk += alg_v._fitted_none is template_facts(template)
        pod = Pod(f"p{i:03d}", spec=template.spec)
        same_outcome((alg_v, vec), (alg_e, exact), pod, cache)
    assert one_chunk > 0, "no scan started in one chunk"


def template_facts(pod: Pod) -> object:
    return PodInfo(pod).facts


@pytest.mark.parametrize(
    ("codes", "code"),
    [
        pytest.param("aaaa", Code.UNSCHEDULABLE, id="every status has the code: every node"),
        pytest.param("abab", Code.UNSCHEDULABLE, id="one status differs: the matching nodes"),
        pytest.param("aaaa", Code.ERROR, id="no status has the code: none"),
    ],
)
def test_one_scan_over_every_node_selects_like_eager_ones(codes: str, code: Code) -> None:
    """A single deferred scan covering every node (a burst of preemptors that fit
    nowhere): preemption's potential nodes are those of the eager dict, in order."""
    table, names, a, b = _table_and_two_statuses(3, 7)
    scan = np.roll(table.order, 5)  # a rotated scan, as the cycle's
    index = [0 if codes[i % 4] == "a" else 1 for i in range(len(scan))]
    lazy, eager = LazyNodeToStatus(), NodeToStatus()
    lazy.defer(names, scan, index, [a, b])
    for r, i in zip(scan.tolist(), index, strict=True):
        eager.set(names[r], [a, b][i])
    want = [table.row_of[n] for n in eager.nodes_for_status_code(table.ordered_names, code)]
    assert lazy.rows_for_status_code(table, code).tolist() == want
