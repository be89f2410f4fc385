"""PreFilter and PreScore Skip without reading pods while no existing pod has terms.

``NodeTable.affinity_pods`` counts the pods with pod affinity or anti-affinity
terms; while it is 0 a pod without (required / preferred) terms is skipped
without bringing the plugin's pod index up to date. The index must catch up
as soon as a pod with terms appears, whatever happened in between.
"""

from __future__ import annotations

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeSet
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.types import PodInfo
from kubesched.scheduler.cache import Cache
from tests.plugins.interpodaffinity.helpers import (
    affinity,
    make_plugin,
    node,
    pod,
    sel_in,
    term,
    wterm,
)


def _counts(table: NodeTable) -> int:
    """The pods with terms, counted the slow way."""
    return sum(
        len(info.pods_with_affinity) for info in table.infos if info is not None and info.node
    )


@pytest.mark.parametrize(
    "remove_node",
    [
        pytest.param(False, id="anti-affinity pod removed: skipped again"),
        pytest.param(True, id="node holding the anti-affinity pod removed: skipped again"),
    ],
)
def test_pod_without_terms_is_skipped_until_an_anti_affinity_pod_appears(
    remove_node: bool,
) -> None:
    cache = Cache()
    nodes = [node("a", zone="z1"), node("b", zone="z2")]
    for n in nodes:
        cache.add_node(n)
    table = cache.table
    plugin = make_plugin(table)
    plain = PodInfo(pod("plain", labels={"app": "x"}))

    def pre_filter_code() -> object:
        return plugin.pre_filter(CycleState(), plain, table)[1].code

    skip = pre_filter_code()
    assert table.affinity_pods == 0
    # Pods without terms come and go: still skipped, counter stays 0.
    for i in range(3):
        cache.add_pod(pod(f"w{i}", labels={"app": "x"}, node="a", uid=f"w{i}"))
        assert pre_filter_code() == skip
    assert table.affinity_pods == 0 == _counts(table)
    # An existing pod with required anti-affinity against app=x on zone: the plain
    # pod must now be read against it (success, with its existing counts).
    anti = pod(
        "anti",
        node="b",
        uid="anti",
        aff=affinity(anti=[term(sel_in("app", "x"), "zone")]),
    )
    cache.add_pod(anti)
    assert table.affinity_pods == 1 == _counts(table)
    cs = CycleState()
    _, st = plugin.pre_filter(cs, plain, table)
    assert st.is_success()
    v = plugin.filter_vector(cs, plain, table)
    assert v is not None
    assert v.index[table.row_of["b"]] >= 0  # rejected: the existing pod's anti-affinity
    assert v.index[table.row_of["a"]] == -1
    if remove_node:
        cache.remove_node(nodes[1])
    else:
        cache.remove_pod(anti)
    assert table.affinity_pods == 0 == _counts(table)
    assert pre_filter_code() == skip


def test_pre_score_skips_without_terms_and_scores_once_a_pod_has_preferred_terms() -> None:
    cache = Cache()
    for n in (node("a", zone="z1"), node("b", zone="z2")):
        cache.add_node(n)
    table = cache.table
    plugin = make_plugin(table)
    plain = PodInfo(pod("plain", labels={"app": "x"}))
    nodes = NodeSet(table, table.order)
    assert plugin.pre_score(CycleState(), plain, nodes).is_skip()
    cache.add_pod(
        pod(
            "pref",
            node="a",
            uid="pref",
            aff=affinity(preferred=[wterm(5, term(sel_in("app", "x"), "zone"))]),
        )
    )
    assert table.affinity_pods == 1
    cs = CycleState()
    assert plugin.pre_score(cs, plain, nodes).is_success()
    scores = plugin.score_vector(cs, plain, nodes)
    assert scores is not None
    by_node = dict(zip((table.names[r] for r in nodes.rows), scores.tolist(), strict=True))
    assert by_node["a"] > by_node["b"]
