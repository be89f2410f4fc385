"""The nominated-node overrides' per-row answers (scheduler/overrides.py
``OverrideRows``, used by schedule_one.py ``_nominated_overrides``) decide exactly
as the per-node path.

Pods of one spec asking about nominated nodes whose summed requests did not
change reuse the earlier what-if answers; binding pods onto a nominated node,
changing the nominations, or changing a node (a taint) must change the answer
exactly as the per-node two-pass path does.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from kubesched.api.types import NO_SCHEDULE, Node, Pod
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.nominated import NominatedLoadIndex
from kubesched.framework.types import PodInfo
from kubesched.scheduler.cache import Cache
from kubesched.scheduler.overrides import OverrideRows
from tests.builders import make_node, make_pod
from tests.fakes import FakeNominator
from tests.scheduler.harness import same_outcome, vectorised_and_per_node


class _TrackedOnlyIndex(NominatedLoadIndex):
    """An index that never hands out its dense matrix: the algorithm then takes
    ``answer`` (the pods of a scan that do not all count)."""

    def dense(self, pod: PodInfo, table: NodeTable) -> IntArray | None:
        super().dense(pod, table)  # the sync a real read does
        return None


def _nominator(kind: str) -> FakeNominator:
    return FakeNominator(_TrackedOnlyIndex() if kind == "tracked" else None)


by_nominator_kind = pytest.mark.parametrize(
    "kind",
    [
        pytest.param("tracked", id="changed rows found from the change logs"),
        pytest.param("dense", id="row -> override array kept from the change logs"),
    ],
)
"""Each way ``OverrideRows`` finds the rows a long scan asks about again (the
nominated-load index decides which one the algorithm takes)."""


@by_nominator_kind
@pytest.mark.parametrize(
    ("seed", "n"),
    [
        pytest.param(21, 150, id="150 nodes, nominations persisting across many cycles"),
        pytest.param(22, 400, id="400 nodes, several chunks per scan"),
    ],
)
def test_pods_of_one_spec_reuse_override_answers_as_the_exact_path_decides(
    seed: int, n: int, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    cache = Cache()
    nodes: list[Node] = []
    for i in range(n):
        node = make_node(f"n{i:04d}").capacity(cpu="2", memory="4Gi", pods=110).obj()
        nodes.append(node)
        cache.add_node(node)
    nominator = _nominator(kind)
    (alg_v, vec), (alg_e, exact) = vectorised_and_per_node(cache.table, nominator, 5)
    asked = [0, 0]  # rows asked about through OverrideRows, rows it sent to the filters
    method = {"tracked": "answer", "dense": "answer_dense"}[kind]
    answer, what_if = getattr(OverrideRows, method), vec.run_filter_what_if

    def counting_answer(*args: Any) -> Any:
        # answer: the rows; answer_dense: the rows holding load.
        asked[0] += int(np.count_nonzero(args[6])) if kind == "dense" else len(args[4])
        return answer(*args)

    def counting_what_if(*args: Any) -> Any:
        asked[1] += len(args[2])
        return what_if(*args)

    monkeypatch.setattr(OverrideRows, method, counting_answer)
    monkeypatch.setattr(vec, "run_filter_what_if", counting_what_if)
    # One PodSpec object for every measured pod: they share their spec facts.
    template = make_pod("template").req(cpu="500m", memory="256Mi").obj()
    noms = 0
    for i in range(120):
        if i % 15 == 0:
            # A few high-priority nominations (1.5 CPU) on random nodes.
            for _ in range(rng.randint(1, 4)):
                other = (
                    make_pod(f"nom{noms}")
                    .uid(f"nom{noms}")
                    .priority(10)
                    .req(cpu="1500m", memory="256Mi")
                    .obj()
                )
                noms += 1
                nominator.nominate(other, rng.choice(nodes).name)
        if i % 40 == 39:
            # A node update: taint a nominated node (static filters change).
            name = rng.choice(nominator.nominated_node_names())
            old = next(x for x in nodes if x.name == name)
            new = (
                make_node(name)
                .capacity(cpu="2", memory="4Gi", pods=110)
                .taint("dedicated", "x", NO_SCHEDULE)
                .obj()
            )
            cache.update_node(old, new)
            nodes[nodes.index(old)] = new
        pod = Pod(f"p{i:03d}", spec=template.spec, priority=rng.choice((0, 0, 10)))
        same_outcome((alg_v, vec), (alg_e, exact), pod, cache)
    # Kept answers were used (otherwise this test checks nothing new).
    assert asked[0] > 0
    assert asked[1] < asked[0]


def test_a_short_scan_sees_a_nomination_removed_since_the_last_cycle() -> None:
    """A scan of at most ``_SHORT_SCAN`` rows asks the index about its rows only
    and finds changed rows from the change logs (``OverrideRows.answer``):
    its answers must still follow a nomination removed between two pods of one
    spec (a stale kept answer would keep rejecting n0)."""
    cache = Cache()
    for i in range(2):
        cache.add_node(make_node(f"n{i}").capacity(cpu="2", memory="4Gi", pods=110).obj())
    nominator = FakeNominator()
    small = make_pod("a").uid("a").priority(10).req(cpu="500m").obj()
    big = make_pod("b").uid("b").priority(10).req(cpu="1500m").obj()
    nominator.nominate(small, "n0")
    nominator.nominate(big, "n0")
    nominator.nominate(make_pod("c").uid("c").priority(10).req(cpu="1600m").obj(), "n1")
    vector, exact = vectorised_and_per_node(cache.table, nominator, 5)
    template = make_pod("t").req(cpu="500m").obj()
    first = same_outcome(vector, exact, Pod("p0", uid="p0", spec=template.spec))
    assert first[0] == "fit"
    nominator.delete(big.uid)
    second = same_outcome(vector, exact, Pod("p1", uid="p1", spec=template.spec))
    assert second[:2] == ("ok", "n0")


@by_nominator_kind
@pytest.mark.parametrize("seed", [31, 32, 33])
def test_rows_that_change_while_holding_nominations_are_asked_again(kind: str, seed: int) -> None:
    """Every row is scanned (fewer nodes than the minimum to find), and rows keep
    changing while they hold nominated pods: a second nomination lands on a
    nominated node, one of two is removed, the last one is removed, or a pod
    binds onto a nominated node. A kept answer that missed any of these would
    pass or reject a node the per-node path decides otherwise."""
    rng = random.Random(seed)
    cache = Cache()
    for i in range(40):
        cache.add_node(make_node(f"n{i:02d}").capacity(cpu="4", memory="8Gi", pods=110).obj())
        used = rng.choice(("0", "500m", "1", "2"))
        cache.add_pod(make_pod(f"base{i}").req(cpu=used).node(f"n{i:02d}").obj())
    nominator = _nominator(kind)
    vector, exact = vectorised_and_per_node(cache.table, nominator, 5)
    template = make_pod("t").req(cpu="1500m", memory="1Gi").obj()
    live: list[tuple[Pod, str]] = []
    outcomes = set()
    for i in range(150):
        if live and rng.random() < 0.4:
            gone, _ = live.pop(rng.randrange(len(live)))
            nominator.delete(gone.uid)
        else:
            # Nominations crowd onto a few nodes, so rows gain a second one.
            node = f"n{rng.randrange(8):02d}"
            nom = make_pod(f"nom{i}").uid(f"nom{i}").priority(10).req(cpu="1").obj()
            nominator.nominate(nom, node)
            live.append((nom, node))
        pod = Pod(f"p{i:03d}", uid=f"p{i:03d}", spec=template.spec, priority=rng.choice((0, 10)))
        got = same_outcome(vector, exact, pod, cache if rng.random() < 0.3 else None)
        outcomes.add(got[0])
    assert "ok" in outcomes


@pytest.mark.parametrize(
    "n",
    [
        pytest.param(2, id="short scan (answer)"),
        pytest.param(12, id="long scan (answer / answer_dense)"),
    ],
)
@by_nominator_kind
def test_pods_of_one_spec_with_other_node_names_get_their_own_override_answers(
    n: int, kind: str
) -> None:
    """The kept per-row answers also key on ``spec.nodeName``: NodeName reads it
    and it is not part of the spec, so a pod of the same spec naming another
    node must not reuse the answers of the first (found by the generic paths
    test, tests/runtime/test_paths_agree.py)."""
    cache = Cache()
    for i in range(n):
        cache.add_node(make_node(f"n{i}").capacity(cpu="2", memory="4Gi", pods=110).obj())
    nominator = _nominator(kind)
    # Every node holds a nominated pod that counts: every row is overridden.
    for i in range(n):
        nom = make_pod(f"nom{i}").uid(f"nom{i}").priority(10).req(cpu="500m").obj()
        nominator.nominate(nom, f"n{i}")
    vector, exact = vectorised_and_per_node(cache.table, nominator, 5)
    template = make_pod("t").req(cpu="500m").obj()
    for name, node in (("p0", "n0"), ("p1", "n1")):
        pod = Pod(name, uid=name, spec=template.spec, node_name=node)
        got = same_outcome(vector, exact, pod)
        assert got[:2] == ("ok", node)
