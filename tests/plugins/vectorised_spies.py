"""Spies on the vectorised builders of PodTopologySpread and InterPodAffinity.

``forbid_vectorised(monkeypatch)`` replaces every builder of their vectorised
states and forms (the ``PodCountIndex`` / ``PodIndex`` reads, the table-wide
state builders, the vector Filter / Score forms) with a function that records
its name and raises. The tests of ``Handle.per_node`` install it and then assert
that the returned list stayed empty: the runtime may turn a plugin's exception
into an Error status, so a raise alone could go unnoticed.
``count_vectorised`` only records (the control: without per_node they run).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

from kubesched.api.types import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    FilterPlugin,
    NodeSet,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
)
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.results import NodeScore
from kubesched.framework.status import SKIP, Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.interpodaffinity import filtering as ipa_filtering
from kubesched.plugins.interpodaffinity import plugin as ipa_plugin
from kubesched.plugins.interpodaffinity import scoring as ipa_scoring
from kubesched.plugins.interpodaffinity import vector as ipa_vector
from kubesched.plugins.interpodaffinity.index import PodIndex
from kubesched.plugins.podtopologyspread import vector as pts_vector
from kubesched.plugins.podtopologyspread.podcounts import PodCountIndex
from tests.plugins.fakes import table_infos

# (owner, attribute, name reported)
_PTS: list[tuple[object, str, str]] = [
    (pts_vector, "build_pre_filter_state", "PTS vector.build_pre_filter_state"),
    (pts_vector, "build_pre_score_state", "PTS vector.build_pre_score_state"),
    (pts_vector, "filter_vector", "PTS vector.filter_vector"),
    (pts_vector, "score_vector", "PTS vector.score_vector"),
    (pts_vector.InclusionMasks, "included", "PTS InclusionMasks.included"),
    (PodCountIndex, "counts", "PTS PodCountIndex.counts"),
]
_IPA: list[tuple[object, str, str]] = [
    (PodIndex, "sync", "IPA PodIndex.sync"),
    (ipa_filtering, "values_from_rows", "IPA filtering.values_from_rows"),
    (ipa_filtering, "gather", "IPA filtering.gather"),
    (ipa_scoring, "values_from_rows", "IPA scoring.values_from_rows"),
    (ipa_scoring, "gather", "IPA scoring.gather"),
    (ipa_plugin, "filter_verdicts", "IPA vector.filter_verdicts"),
    (ipa_plugin, "raw_scores", "IPA vector.raw_scores"),
    (ipa_vector, "per_row", "IPA counts.per_row"),
]
SPIED = {"PodTopologySpread": _PTS, "InterPodAffinity": _IPA}


class VectorisedCalled(AssertionError):
    """A vectorised builder ran."""


def _install(monkeypatch: pytest.MonkeyPatch, plugins: tuple[str, ...], raising: bool) -> list[str]:
    calls: list[str] = []
    for plugin in plugins:
        for owner, attr, name in SPIED[plugin]:
            original = getattr(owner, attr)
            monkeypatch.setattr(owner, attr, _spy(name, original, calls, raising))
    return calls


def _spy(
    name: str, original: Callable[..., object], calls: list[str], raising: bool
) -> Callable[..., object]:
    def spy(*args: object, **kwargs: object) -> object:
        calls.append(name)
        if raising:
            raise VectorisedCalled(name)
        return original(*args, **kwargs)

    return spy


def forbid_vectorised(
    monkeypatch: pytest.MonkeyPatch,
    plugins: tuple[str, ...] = ("PodTopologySpread", "InterPodAffinity"),
) -> list[str]:
    """Make the builders record and raise; returns the list of calls."""
    return _install(monkeypatch, plugins, raising=True)


def count_vectorised(
    monkeypatch: pytest.MonkeyPatch,
    plugins: tuple[str, ...] = ("PodTopologySpread", "InterPodAffinity"),
) -> list[str]:
    """Make the builders record and run; returns the list of calls."""
    return _install(monkeypatch, plugins, raising=False)


def run_points(
    plugin: object, table: NodeTable, pod: Pod, scored: Sequence[str]
) -> tuple[Status, dict[str, Status], Status, dict[str, int]]:
    """PreFilter, Filter on every node, PreScore / Score / NormalizeScore on the
    ``scored`` nodes, through the per-node methods only (as the runtime calls a
    plugin under per_node): (PreFilter status, Filter statuses, PreScore status,
    final scores). Filter statuses and scores are empty after a non-Success."""
    assert isinstance(plugin, PreFilterPlugin) and isinstance(plugin, FilterPlugin)
    assert isinstance(plugin, PreScorePlugin) and isinstance(plugin, ScorePlugin)
    pi = PodInfo(pod)
    state = CycleState()
    _, pre = plugin.pre_filter(state, pi, table)
    verdicts: dict[str, Status] = {}
    if pre.is_success():
        verdicts = {i.name: plugin.filter(state, pi, i) for i in table_infos(table)}
    infos = [i for i in table_infos(table) if i.name in scored]
    nodes = NodeSet(table, np.array([table.row_of[i.name] for i in infos], dtype=np.int64), infos)
    state = CycleState()
    pre_score = plugin.pre_score(state, pi, nodes) if infos else SKIP
    scores: dict[str, int] = {}
    if pre_score.is_success():
        got = []
        for info in infos:
            score, status = plugin.score(state, pi, info)
            assert status.is_success(), status
            got.append(NodeScore(info.name, score))
        ext = plugin.score_extensions()
        assert ext is not None
        assert ext.normalize_score(state, pi, got).is_success()
        scores = {s.name: s.score for s in got}
    return pre, verdicts, pre_score, scores
