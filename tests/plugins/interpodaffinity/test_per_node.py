"""InterPodAffinity under ``Handle.per_node`` (``--exact``): PreFilter and PreScore
walk the nodes' pods as upstream and neither the ``PodIndex`` nor any vectorised
builder runs (a spy that raises stands in for each); every status and score
equals the default (vectorised) path's on random clusters."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.config import InterPodAffinityArgs
from tests.builders import build_table
from tests.hypothesis_profiles import scaled
from tests.plugins.interpodaffinity.helpers import (
    affinity,
    make_plugin,
    node,
    pod,
    sel_in,
    term,
    wterm,
)
from tests.plugins.interpodaffinity.test_properties import NAMESPACES, Cluster, clusters
from tests.plugins.vectorised_spies import count_vectorised, forbid_vectorised, run_points

IPA = ("InterPodAffinity",)


@settings(max_examples=scaled(150), deadline=None)
@given(clusters(), st.integers(0, 3), st.booleans(), st.data())
def test_per_node_runs_no_vectorised_builder_and_agrees(
    c: Cluster, hard: int, ignore: bool, data: st.DataObject
) -> None:
    table = build_table(c.nodes, c.pods)
    args = InterPodAffinityArgs(hard, ignore)
    scored = data.draw(st.lists(st.sampled_from([n.name for n in c.nodes]), unique=True))
    with pytest.MonkeyPatch.context() as mp:
        calls = forbid_vectorised(mp, IPA)
        per_node = make_plugin(table, args, NAMESPACES, per_node=True)
        got = run_points(per_node, table, c.incoming, scored)
    assert calls == []
    assert run_points(make_plugin(table, args, NAMESPACES), table, c.incoming, scored) == got


def test_the_spies_see_the_default_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: without per_node the spied builders do run."""
    nodes = [node("n1", zone="a"), node("n2", zone="b")]
    anti = term(sel_in("app", "w"), "zone")
    existing = pod("e", labels={"app": "w"}, node="n1", aff=affinity(anti=[anti]))
    incoming = pod("p", labels={"app": "w"}, aff=affinity(anti=[anti], preferred=[wterm(5, anti)]))
    table = build_table(nodes, [existing])
    calls = count_vectorised(monkeypatch, IPA)
    pre, verdicts, pre_score, _ = run_points(make_plugin(table), table, incoming, ["n1", "n2"])
    assert pre.is_success() and pre_score.is_success()
    assert not verdicts["n1"].is_success() and verdicts["n2"].is_success()
    assert "IPA PodIndex.sync" in calls
