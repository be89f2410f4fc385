"""Scoring (runtime/scoring.py): the PreScore and Score points.

Re-expresses upstream's framework_test.go TestRunPreScorePlugins and
TestRunScorePlugins with the injected fake plugin (``tests/runtime/injected.py``),
plus the per-node / vectorised path switch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from kubesched.framework.config import (
    PRE_SCORE,
    SCORE,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeSet
from kubesched.framework.nodetable import IntArray
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.framework import ScoreError
from tests.builders import build_table, make_node
from tests.runtime.injected import (
    InjectedPlugin,
    P,
    fw_with,
    some_pod,
)
from tests.scheduler.harness import build_framework, instance_registry, profile

# --------------------------------------------------------------------------- PreScore / Score


@pytest.mark.parametrize(
    ("codes", "want_skipped", "want_error"),
    [
        pytest.param(
            {"success1": Code.SUCCESS, "success2": Code.SUCCESS},
            set(),
            None,
            id="TestRunPreScorePlugins/all PreScorePlugins returned success",
        ),
        pytest.param(
            {"success": Code.SUCCESS, "error": Code.ERROR},
            None,
            'running PreScore plugin "error": injected status',
            id="TestRunPreScorePlugins/one success, one non-success",
        ),
        pytest.param(
            {"skip": Code.SKIP, "error": Code.ERROR},
            None,
            'running PreScore plugin "error": injected status',
            id="TestRunPreScorePlugins/one skip, one non-success",
        ),
        pytest.param(
            {"skip1": Code.SKIP, "skip2": Code.SKIP, "skip3": Code.SKIP},
            {"skip1", "skip2", "skip3"},
            None,
            id="TestRunPreScorePlugins/all PreScore plugins returned skip",
        ),
        pytest.param(
            {
                "skip1": Code.SKIP,
                "success1": Code.SUCCESS,
                "skip2": Code.SKIP,
                "success2": Code.SUCCESS,
            },
            {"skip1", "skip2"},
            None,
            id="TestRunPreScorePlugins/some PreScore plugins returned skip",
        ),
    ],
)
def test_run_pre_score_plugins(
    codes: dict[str, Code], want_skipped: set[str] | None, want_error: str | None
) -> None:
    plugins = [P(name, pre_score_code=code) for name, code in codes.items()]
    fwk = fw_with(PRE_SCORE, plugins)
    state = CycleState()
    nodes = two_nodes()
    if want_error is not None:
        with pytest.raises(ScoreError) as exc:
            fwk.run_pre_score_plugins(state, some_pod(), nodes)
        assert str(exc.value) == want_error
    else:
        fwk.run_pre_score_plugins(state, some_pod(), nodes)
    if want_skipped is not None:
        assert state.skip_score_plugins == frozenset(want_skipped)


def two_nodes() -> NodeSet:
    table = build_table([make_node("node1").obj(), make_node("node2").obj()])
    return NodeSet(table, np.array([table.row_of["node1"], table.row_of["node2"]], dtype=np.int64))


S1 = "score-plugin-1"
SN1 = "score-with-normalize-plugin-1"
SN2 = "score-with-normalize-plugin-2"
DEFAULT_WEIGHTS = {S1: 1, SN1: 1, SN2: 2}


def run_scores(
    plugins: Sequence[InjectedPlugin],
    skipped: frozenset[str] | set[str] = frozenset(),
) -> tuple[list[int], dict[str, list[int]]]:
    prof = profile({SCORE: [(p.name, DEFAULT_WEIGHTS.get(p.name, 1)) for p in plugins]})
    fwk = build_framework(prof, instance_registry(*plugins))
    state = CycleState()
    state.skip_score_plugins = frozenset(skipped)
    total, per = fwk.run_score_plugins(state, some_pod(), two_nodes())
    return total.tolist(), {k: v.tolist() for k, v in per.items()}


@pytest.mark.parametrize(
    ("plugins", "skipped", "want_total", "want_per_plugin"),
    [
        pytest.param([], set(), [0, 0], {}, id="TestRunScorePlugins/no Score plugins"),
        pytest.param(
            [P(S1, score_value=1)],
            set(),
            [1, 1],
            {S1: [1, 1]},
            id="TestRunScorePlugins/single Score plugin",
        ),
        pytest.param(
            [P(SN1, score_value=10, normalize_to=5)],
            set(),
            [5, 5],
            {SN1: [5, 5]},
            id="TestRunScorePlugins/single ScoreWithNormalize plugin",
        ),
        pytest.param(
            [
                P(S1, score_value=1),
                P(SN1, score_value=3, normalize_to=4),
                P(SN2, score_value=4, normalize_to=5),
            ],
            set(),
            [15, 15],
            {S1: [1, 1], SN1: [4, 4], SN2: [10, 10]},
            id="TestRunScorePlugins/3 Score plugins, 2 NormalizeScore plugins (weight 2)",
        ),
        pytest.param(
            [P(S1, score_value=1), P(SN1, score_code=Code.ERROR)],
            {SN1},
            [1, 1],
            {S1: [1, 1]},
            id="TestRunScorePlugins/one success plugin, one skip plugin",
        ),
        pytest.param(
            [P(S1, score_code=Code.ERROR)],
            {S1},
            [0, 0],
            {},
            id="TestRunScorePlugins/all plugins are skipped in prescore",
        ),
        pytest.param(
            [P(S1, score_value=1)],
            {S1, "score-plugin-unknown"},
            [0, 0],
            {},
            id="TestRunScorePlugins/skipped prescore plugins outnumber score plugins",
        ),
    ],
)
def test_run_score_plugins(
    plugins: list[InjectedPlugin],
    skipped: set[str],
    want_total: list[int],
    want_per_plugin: dict[str, list[int]],
) -> None:
    total, per = run_scores(plugins, skipped)
    assert total == want_total
    assert per == want_per_plugin
    for p in plugins:
        if p.name in skipped:
            assert p.calls["score"] == 0


def test_score_weight_zero_means_one() -> None:
    """upstream NewFramework: a Score plugin configured without weight gets weight 1."""
    plugin = P("w0", score_value=7)
    fwk = build_framework(profile({SCORE: [("w0", 0)]}), instance_registry(plugin))
    total, _ = fwk.run_score_plugins(CycleState(), some_pod(), two_nodes())
    assert total.tolist() == [7, 7]


SCORE_FAILURES = [
    pytest.param(
        [P(S1), P(SN1, score_code=Code.ERROR, normalize_to=1)],
        f'running Score plugins: plugin "{SN1}" failed with: injected status',
        id="TestRunScorePlugins/score fails",
    ),
    pytest.param(
        [P(S1), P(SN1, normalize_to=1, normalize_code=Code.ERROR)],
        f'running Normalize on Score plugins: plugin "{SN1}" failed with: injected status',
        id="TestRunScorePlugins/normalize fails",
    ),
    pytest.param(
        [P(S1, score_value=101)],
        "applying score defaultWeights on Score plugins: "
        f'plugin "{S1}" returns an invalid score 101, it should in the range of [0, 100] '
        "after normalizing",
        id="TestRunScorePlugins/Score plugin return score greater than MaxNodeScore",
    ),
    pytest.param(
        [P(S1, score_value=-1)],
        "applying score defaultWeights on Score plugins: "
        f'plugin "{S1}" returns an invalid score -1, it should in the range of [0, 100] '
        "after normalizing",
        id="TestRunScorePlugins/Score plugin return score less than MinNodeScore",
    ),
    pytest.param(
        [P(SN1, normalize_to=101)],
        "applying score defaultWeights on Score plugins: "
        f'plugin "{SN1}" returns an invalid score 101, it should in the range of [0, 100] '
        "after normalizing",
        id="TestRunScorePlugins/ScoreWithNormalize plugin return score greater than MaxNodeScore",
    ),
    pytest.param(
        [P(SN1, normalize_to=-1)],
        "applying score defaultWeights on Score plugins: "
        f'plugin "{SN1}" returns an invalid score -1, it should in the range of [0, 100] '
        "after normalizing",
        id="TestRunScorePlugins/ScoreWithNormalize plugin return score less than MinNodeScore",
    ),
]


@pytest.mark.parametrize(("plugins", "upstream_message"), SCORE_FAILURES)
def test_score_failure_messages_match_upstream(
    plugins: list[InjectedPlugin], upstream_message: str
) -> None:
    with pytest.raises(ScoreError) as exc:
        run_scores(plugins)
    assert str(exc.value) == upstream_message


class VectorScored:
    """Per-node score 1, vector score 2: shows which path ran."""

    name = "VectorScored"

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        return 1, SUCCESS

    def score_extensions(self) -> None:
        return None

    def score_vector(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> IntArray:
        return np.full(len(nodes), 2, dtype=np.int64)


@pytest.mark.parametrize(("per_node", "want"), [(False, [2, 2]), (True, [1, 1])])
def test_per_node_selects_the_per_node_score_path(per_node: bool, want: list[int]) -> None:
    plugin = VectorScored()
    fwk = build_framework(profile({SCORE: ["VectorScored"]}), instance_registry(plugin))
    fwk.per_node = per_node
    total, _ = fwk.run_score_plugins(CycleState(), some_pod(), two_nodes())
    assert total.tolist() == want
