"""PodTopologySpread under ``Handle.per_node`` (``--exact``): PreFilter and PreScore
build their states node by node and no vectorised builder runs (a spy that
raises stands in for each), and every status and score equals the default
(vectorised) path's on random clusters."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.types import LabelSelector, TopologySpreadConstraint
from kubesched.framework.config import PodTopologySpreadArgs
from tests.builders import build_table
from tests.hypothesis_profiles import scaled
from tests.plugins.podtopologyspread.harness import LIST, SYSTEM, node, plugin, pod
from tests.plugins.podtopologyspread.test_properties import existing_st, incoming_st, nodes_st
from tests.plugins.vectorised_spies import count_vectorised, forbid_vectorised, run_points

PTS = ("PodTopologySpread",)


@settings(max_examples=scaled(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_per_node_runs_no_vectorised_builder_and_agrees(data: st.DataObject) -> None:
    nodes = data.draw(nodes_st())
    existing = data.draw(existing_st(nodes))
    incoming = data.draw(incoming_st())
    args: PodTopologySpreadArgs = data.draw(st.sampled_from((LIST, SYSTEM)))
    scored = data.draw(st.lists(st.sampled_from([n.name for n in nodes]), unique=True))
    table = build_table(nodes, existing)
    with pytest.MonkeyPatch.context() as mp:
        calls = forbid_vectorised(mp, PTS)
        got = run_points(plugin(table, args, exact=True), table, incoming, scored)
    assert calls == []
    assert run_points(plugin(table, args), table, incoming, scored) == got


def test_the_spies_see_the_default_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: without per_node the spied builders do run."""
    table = build_table([node("n1", zone="a"), node("n2", zone="b")], [pod("e", "n1", app="w")])
    spread = tuple(
        TopologySpreadConstraint(1, "zone", when, LabelSelector(match_labels={"app": "w"}))
        for when in ("DoNotSchedule", "ScheduleAnyway")
    )
    incoming = pod("p", app="w")
    incoming.spec = replace(incoming.spec, topology_spread_constraints=spread)
    calls = count_vectorised(monkeypatch, PTS)
    pre, _, pre_score, _ = run_points(plugin(table, LIST), table, incoming, ["n1", "n2"])
    assert pre.is_success() and pre_score.is_success()
    assert "PTS vector.build_pre_filter_state" in calls
    assert "PTS vector.build_pre_score_state" in calls
