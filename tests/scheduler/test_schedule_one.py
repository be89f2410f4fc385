"""The scheduling algorithm of one cycle (scheduler/schedule_one.py) and FitError's message.

Re-expresses upstream's pkg/scheduler/schedule_one_test.go cases
(TestNumFeasibleNodesToFind, TestFairEvaluationForNodes,
TestPreferNominatedNodeFilterCallCounts, TestSchedulerSchedulePod's PreFilter
cases, TestFindFitAllError / TestFindFitSomeError) and
pkg/scheduler/framework/types_test.go TestFitError_Error, then checks with
hypothesis that the vectorised filter path and the per-node path
(``Framework.per_node``) decide identically on large random clusters (scans
of several chunks that stop early; small clusters with every plugin's inputs
are the generic paths test's, tests/runtime/test_paths_agree.py, which uses
``feasible_sig`` and ``outcome`` from here).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.types import (
    LABEL_ZONE,
    NO_EXECUTE,
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    Node,
    NodeSelectorRequirement,
    Pod,
    Taint,
)
from kubesched.framework.config import FILTER, PRE_SCORE, SCORE
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import Nominator, Plugin
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.results import Diagnosis, FitError, NodeToStatus, PreFilterResult
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.runtime.framework import Framework, ScoreError
from kubesched.scheduler.cache import Cache
from kubesched.scheduler.registry import in_tree_registry
from kubesched.scheduler.schedule_one import (
    NoNodesAvailable,
    ScheduleOne,
    ScheduleResult,
    SchedulingError,
    num_feasible_nodes_to_find,
    select_host,
)
from tests.builders import build_table, make_node, make_pod
from tests.fakes import FakeNominator
from tests.hypothesis_profiles import scaled
from tests.scheduler.harness import (
    ERR_REASON_FAKE,
    EqualPrioritizer,
    ExplodingScore,
    FakeFilter,
    FakePreFilter,
    FakePreFilterAndFilter,
    MatchFilter,
    NodeScorePlugin,
    TrueFilter,
    VectorFakeFilter,
    VectorTrueFilter,
    build_framework,
    fake_profile,
    in_tree_profile,
    instance_registry,
    profile,
)

U = Code.UNSCHEDULABLE
UAU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def table_of(*names: str) -> NodeTable:
    return build_table([make_node(n).obj() for n in names])


def row_names(fwk: Framework, rows: np.ndarray) -> list[str]:
    return [fwk.table.names[int(r)] for r in rows]


def explicit(d: Diagnosis) -> dict[str, tuple[Code, tuple[str, ...], str]]:
    return {n: (s.code, s.reasons, s.plugin) for n, s in d.node_to_status}


# --------------------------------------------------------------------------- numFeasibleNodesToFind


@pytest.mark.parametrize(
    ("percentage", "num_all_nodes", "want"),
    [
        pytest.param(0, 10, 10, id="TestNumFeasibleNodesToFind/not set, nodes not more than 50"),
        pytest.param(40, 10, 10, id="TestNumFeasibleNodesToFind/set 40, nodes not more than 50"),
        pytest.param(0, 1000, 420, id="TestNumFeasibleNodesToFind/not set, more than 50"),
        pytest.param(40, 1000, 400, id="TestNumFeasibleNodesToFind/set 40, more than 50"),
        pytest.param(0, 6000, 300, id="TestNumFeasibleNodesToFind/not set, more than 50*125"),
        pytest.param(40, 6000, 2400, id="TestNumFeasibleNodesToFind/set 40, more than 50*125"),
        pytest.param(0, 99, 99, id="fewer than 100 nodes: all of them"),
        pytest.param(0, 100, 100, id="100 nodes: 50% is below the minimum of 100"),
        pytest.param(0, 500, 230, id="R3.5 example: 500 nodes, 46%"),
        pytest.param(0, 5000, 500, id="R3.5 example: 5000 nodes, 10%"),
        pytest.param(0, 15000, 750, id="R3.5 example: 15000 nodes, floor of 5%"),
        pytest.param(1, 5000, 100, id="a tiny percentage still finds 100"),
        pytest.param(100, 5000, 5000, id="100 percent: every node"),
    ],
)
def test_num_feasible_nodes_to_find(percentage: int, num_all_nodes: int, want: int) -> None:
    assert num_feasible_nodes_to_find(percentage, num_all_nodes) == want


# --------------------------------------------------------------------------- rotation


@pytest.mark.parametrize("vector", [False, True], ids=["per-node", "vectorised"])
def test_fair_evaluation_for_nodes(vector: bool) -> None:
    """TestFairEvaluationForNodes: 500 nodes, 30% -> 150 per cycle, and the start
    index advances by the nodes processed, modulo all nodes."""
    num_all = 500
    table = table_of(*(str(i) for i in range(num_all)))
    filt = VectorTrueFilter() if vector else TrueFilter()
    fwk = build_framework(
        fake_profile(filters=["TrueFilter"], score=["EqualPrioritizerPlugin"]),
        instance_registry(filt, EqualPrioritizer()),
        table=table,
    )
    alg = ScheduleOne(percentage_of_nodes_to_score=30)
    to_find = num_feasible_nodes_to_find(30, num_all)
    assert to_find == 150
    for i in range(2 * (num_all // to_find + 1)):
        feasible, _ = alg.find_nodes_that_fit_pod(fwk, CycleState(), make_pod("p").info())
        assert len(feasible) == to_find
        assert alg.next_start_node_index == (i + 1) * to_find % num_all
        want_first = str(i * to_find % num_all)
        assert row_names(fwk, feasible)[0] == want_first


@pytest.mark.parametrize(
    ("global_pct", "profile_pct", "want"),
    [
        pytest.param(30, None, 150, id="the global percentage applies when the profile has none"),
        pytest.param(10, 30, 150, id="the profile percentage wins over the global one"),
        pytest.param(30, 0, 230, id="a profile percentage of 0 means adaptive (46% of 500)"),
    ],
)
def test_profile_percentage_of_nodes_to_score(
    global_pct: int, profile_pct: int | None, want: int
) -> None:
    table = table_of(*(f"n{i}" for i in range(500)))
    fwk = build_framework(
        fake_profile(
            filters=["TrueFilter"], score=["EqualPrioritizerPlugin"], percentage=profile_pct
        ),
        instance_registry(VectorTrueFilter(), EqualPrioritizer()),
        table=table,
    )
    feasible, _ = ScheduleOne(global_pct).find_nodes_that_fit_pod(
        fwk, CycleState(), make_pod("p").info()
    )
    assert len(feasible) == want


@pytest.mark.parametrize("vector", [False, True], ids=["per-node", "vectorised"])
def test_start_index_advances_by_feasible_and_failed_nodes(vector: bool) -> None:
    """Without Score plugins one feasible node is enough; the nodes that failed on
    the way count as processed."""
    table = table_of("n1", "n2", "n3", "n4", "n5")
    filt = (VectorFakeFilter if vector else FakeFilter)({"n1": U, "n2": U})
    fwk = build_framework(
        fake_profile(filters=["FakeFilter"]), instance_registry(filt), table=table
    )
    alg = ScheduleOne()
    # Upstream (parallelism 1) stops at the first feasible node beyond the one it
    # needs: from n5 it records n1 and n2 as failures before reaching n3.
    steps = [("n3", 3, 3), ("n4", 1, 4), ("n5", 3, 2), ("n3", 1, 3)]
    for want_host, want_evaluated, want_next in steps:
        result = alg.schedule_pod(fwk, CycleState(), make_pod("p").info())
        assert (result.suggested_host, result.evaluated_nodes, result.feasible_nodes) == (
            want_host,
            want_evaluated,
            1,
        )
        assert alg.next_start_node_index == want_next


@pytest.mark.parametrize("vector", [False, True], ids=["per-node", "vectorised"])
def test_scan_continues_until_one_feasible_node_too_many(vector: bool) -> None:
    table = table_of("n1", "n2", "n3", "n4")
    filt = (VectorFakeFilter if vector else FakeFilter)({"n2": U, "n4": U})
    fwk = build_framework(
        fake_profile(filters=["FakeFilter"]), instance_registry(filt), table=table
    )
    alg = ScheduleOne()
    result = alg.schedule_pod(fwk, CycleState(), make_pod("p").info())
    # n1 fits (1 of 1 wanted), n2 fails and is recorded, n3 fits -> cancel, discarded.
    assert (result.suggested_host, result.evaluated_nodes) == ("n1", 2)
    assert alg.next_start_node_index == 2


@pytest.mark.parametrize("vector", [False, True], ids=["per-node", "vectorised"])
def test_rotation_over_a_pre_filter_result(vector: bool) -> None:
    """The start index rotates within the narrowed list and advances modulo all nodes;
    nodes outside the PreFilterResult are absent with UAU
    ``node(s) didn't satisfy plugin(s) [P]``. (Upstream walks the narrowed set in
    Go map order; kubesched in snapshot order.)"""
    table = table_of("n1", "n2", "n3", "n4", "n5", "n6")
    pre = FakePreFilter("P", PreFilterResult(frozenset({"n2", "n4", "n6"})))
    filt = VectorTrueFilter() if vector else TrueFilter()
    fwk = build_framework(
        fake_profile(pre_filter=["P"], filters=["TrueFilter"]),
        instance_registry(pre, filt),
        table=table,
    )
    alg = ScheduleOne()
    for want_host, want_next in [("n2", 1), ("n4", 2), ("n6", 3), ("n2", 4), ("n4", 5)]:
        feasible, diag = alg.find_nodes_that_fit_pod(fwk, CycleState(), make_pod("p").info())
        assert row_names(fwk, feasible) == [want_host]
        assert alg.next_start_node_index == want_next
        assert (diag.node_to_status.absent.code, diag.node_to_status.absent.reasons) == (
            UAU,
            ("node(s) didn't satisfy plugin(s) [P]",),
        )


# --------------------------------------------------------------------------- nominated node


@dataclass
class NominatedCase:
    nnn: str
    failing: dict[str, Code]
    want_calls: int
    want_hosts: set[str]


@pytest.mark.parametrize("vector", [False, True], ids=["per-node", "vectorised"])
@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            NominatedCase("node1", {}, 1, {"node1"}),
            id="TestPreferNominatedNodeFilterCallCounts/pod has the nominated node set, "
            "filter is called only once",
        ),
        pytest.param(
            NominatedCase("", {}, 3, {"node1", "node2", "node3"}),
            id="TestPreferNominatedNodeFilterCallCounts/pod without the nominated pod, "
            "filter is called for each node",
        ),
        pytest.param(
            NominatedCase("node1", {"node1": U}, 4, {"node2", "node3"}),
            id="TestPreferNominatedNodeFilterCallCounts/nominated pod cannot pass the filter, "
            "filter is called for each node",
        ),
        pytest.param(
            NominatedCase("ghost", {}, 3, {"node1", "node2", "node3"}),
            id="a nominated node missing from the snapshot: full scan",
        ),
    ],
)
def test_prefer_nominated_node(case: NominatedCase, vector: bool) -> None:
    # Per-node Filter calls are counted on the exact runner; the vector twin must
    # reach the same decision without them.
    filt = (VectorFakeFilter if vector else FakeFilter)(case.failing)
    fwk = build_framework(
        fake_profile(filters=["FakeFilter"], score=["EqualPrioritizerPlugin"]),
        instance_registry(filt, EqualPrioritizer()),
        table=table_of("node1", "node2", "node3"),
    )
    pod = make_pod("p").uid("p").priority(1000).nominated(case.nnn).info()
    result = ScheduleOne().schedule_pod(fwk, CycleState(), pod)
    assert result.suggested_host in case.want_hosts
    if not vector:
        assert sum(filt.calls.values()) == case.want_calls


def test_nominated_node_passing_is_taken_without_scoring_or_rotation() -> None:
    table = table_of("node1", "node2", "node3")
    fwk = build_framework(
        fake_profile(filters=["TrueFilter"], score=["ExplodingScore"]),
        instance_registry(TrueFilter(), ExplodingScore()),
        table=table,
    )
    alg = ScheduleOne()
    alg.next_start_node_index = 2
    result = alg.schedule_pod(fwk, CycleState(), make_pod("p").nominated("node1").info())
    assert result == ScheduleResult("node1", 1, 1)
    assert alg.next_start_node_index == 2


def test_nominated_node_wins_over_a_better_scored_node() -> None:
    table = table_of("node1", "node2")
    fwk = build_framework(
        fake_profile(filters=["TrueFilter"], score=["NodeScore"]),
        instance_registry(TrueFilter(), NodeScorePlugin({"node2": 100})),
        table=table,
    )
    pod = make_pod("p").nominated("node1").info()
    assert ScheduleOne().schedule_pod(fwk, CycleState(), pod).suggested_host == "node1"
    plain = make_pod("q").info()
    assert ScheduleOne().schedule_pod(fwk, CycleState(), plain).suggested_host == "node2"


def test_nominated_node_is_tried_even_outside_the_pre_filter_result() -> None:
    """upstream evaluateNominatedNode runs before the PreFilterResult narrows the nodes."""
    table = table_of("node1", "node2")
    pre = FakePreFilter("P", PreFilterResult(frozenset({"node2"})))
    fwk = build_framework(
        fake_profile(pre_filter=["P"], filters=["TrueFilter"]),
        instance_registry(pre, TrueFilter()),
        table=table,
    )
    pod = make_pod("p").nominated("node1").info()
    assert ScheduleOne().schedule_pod(fwk, CycleState(), pod).suggested_host == "node1"


@pytest.mark.parametrize("vector", [False, True], ids=["per-node", "vectorised"])
def test_failed_nominated_node_keeps_its_status_and_counts_as_processed(vector: bool) -> None:
    table = table_of("node1", "node2", "node3")
    filt = (VectorFakeFilter if vector else FakeFilter)({"node3": U})
    fwk = build_framework(
        fake_profile(filters=["FakeFilter"]), instance_registry(filt), table=table
    )
    alg = ScheduleOne()
    pod = make_pod("p").nominated("node3").info()
    feasible, diag = alg.find_nodes_that_fit_pod(fwk, CycleState(), pod)
    assert row_names(fwk, feasible) == ["node1"]
    assert explicit(diag) == {"node3": (U, ("injecting failure for pod p",), "FakeFilter")}
    # 1 feasible + 1 status (recorded by the nominated-node pass), as upstream.
    assert alg.next_start_node_index == 2


# --------------------------------------------------------------------------- PreFilter cases


def three_nodes() -> NodeTable:
    return table_of("node1", "node2", "node3")


def schedule(fwk: Framework, pod_name: str = "test-prefilter") -> ScheduleResult:
    return ScheduleOne().schedule_pod(fwk, CycleState(), make_pod(pod_name).uid(pod_name).info())


def fit_error(fwk: Framework, pod_name: str = "test-prefilter") -> FitError:
    with pytest.raises(FitError) as exc:
        schedule(fwk, pod_name)
    return exc.value


def test_pre_filter_unresolvable_status() -> None:
    """TestSchedulerSchedulePod/test prefilter plugin returning Unschedulable status."""
    pre = FakePreFilter("FakePreFilter", None, Status(UAU, "injected unschedulable status"))
    fwk = build_framework(
        fake_profile(pre_filter=["FakePreFilter"]), instance_registry(pre), table=table_of("1", "2")
    )
    err = fit_error(fwk)
    d = err.diagnosis
    assert str(err) == "0/2 nodes are available: injected unschedulable status."
    assert explicit(d) == {}
    absent = d.node_to_status.absent
    assert (absent.code, absent.reasons, absent.plugin) == (
        UAU,
        ("injected unschedulable status",),
        "FakePreFilter",
    )
    assert d.pre_filter_msg == "injected unschedulable status"
    assert d.unschedulable_plugins == {"FakePreFilter"}


def test_pre_filter_error_status() -> None:
    """TestSchedulerSchedulePod/test prefilter plugin returning error status."""
    pre = FakePreFilter("FakePreFilter", None, Status(Code.ERROR, "injected error status"))
    fwk = build_framework(
        fake_profile(pre_filter=["FakePreFilter"]), instance_registry(pre), table=table_of("1", "2")
    )
    with pytest.raises(SchedulingError) as exc:
        schedule(fwk)
    assert str(exc.value) == 'running PreFilter plugin "FakePreFilter": injected error status'


def prefilters(
    *plugins: FakePreFilter, table: NodeTable, filters: Sequence[Plugin] = ()
) -> Framework:
    return build_framework(
        fake_profile(pre_filter=[p.name for p in plugins], filters=[f.name for f in filters]),
        instance_registry(*plugins, *filters),
        table=table,
    )


def test_pre_filter_returning_a_node() -> None:
    """TestSchedulerSchedulePod/test prefilter plugin returning node."""
    fwk = prefilters(
        FakePreFilter("FakePreFilter1"),
        FakePreFilter("FakePreFilter2", PreFilterResult(frozenset({"node2"}))),
        FakePreFilter("FakePreFilter3", PreFilterResult(frozenset({"node1", "node2"}))),
        table=three_nodes(),
    )
    result = schedule(fwk)
    assert (result.suggested_host, result.evaluated_nodes) == ("node2", 1)


@pytest.mark.parametrize(
    ("make_fwk", "want_message", "want_absent", "want_explicit"),
    [
        pytest.param(
            lambda: prefilters(
                FakePreFilter("FakePreFilter1"),
                FakePreFilter("FakePreFilter2", PreFilterResult(frozenset({"node2"}))),
                FakePreFilter("FakePreFilter3", PreFilterResult(frozenset({"node1"}))),
                table=three_nodes(),
            ),
            "0/3 nodes are available: node(s) didn't satisfy plugin(s) "
            "[FakePreFilter2 FakePreFilter3] simultaneously.",
            "node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] simultaneously",
            {},
            id="TestSchedulerSchedulePod/test prefilter plugin returning non-intersecting nodes",
        ),
        pytest.param(
            lambda: prefilters(
                FakePreFilter("FakePreFilter1"),
                FakePreFilter("FakePreFilter2", PreFilterResult(frozenset())),
                table=table_of("node1"),
            ),
            "0/1 nodes are available: node(s) didn't satisfy plugin FakePreFilter2.",
            "node(s) didn't satisfy plugin FakePreFilter2",
            {},
            id="TestSchedulerSchedulePod/test prefilter plugin returning empty node set",
        ),
        pytest.param(
            lambda: prefilters(
                FakePreFilter("FakePreFilter", PreFilterResult(frozenset({"node2"}))),
                table=table_of("node1", "node2"),
                filters=[FakeFilter({"node2": U})],
            ),
            "0/2 nodes are available: 1 injecting failure for pod test-prefilter, "
            "1 node(s) didn't satisfy plugin(s) [FakePreFilter].",
            "node(s) didn't satisfy plugin(s) [FakePreFilter]",
            {"node2": (U, ("injecting failure for pod test-prefilter",), "FakeFilter")},
            id="TestSchedulerSchedulePod/test some nodes are filtered out by prefilter plugin "
            "and other are filtered out by filter plugin",
        ),
        pytest.param(
            lambda: prefilters(
                FakePreFilter("FakePreFilter", PreFilterResult(frozenset({"invalid-node"}))),
                table=table_of("1", "2"),
                filters=[TrueFilter()],
            ),
            "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [FakePreFilter].",
            "node(s) didn't satisfy plugin(s) [FakePreFilter]",
            {},
            id="TestSchedulerSchedulePod/test prefilter plugin returned an invalid node",
        ),
    ],
)
def test_pre_filter_result_fit_errors(
    make_fwk: Callable[[], Framework],
    want_message: str,
    want_absent: str,
    want_explicit: dict[str, tuple[Code, tuple[str, ...], str]],
) -> None:
    err = fit_error(make_fwk())
    assert str(err) == want_message
    absent = err.diagnosis.node_to_status.absent
    assert (absent.code, absent.reasons) == (UAU, (want_absent,))
    assert explicit(err.diagnosis) == want_explicit


@pytest.mark.parametrize(
    ("make_fwk", "want"),
    [
        pytest.param(
            lambda: prefilters(
                FakePreFilter("FakePreFilter1"),
                FakePreFilter("FakePreFilter2", PreFilterResult(frozenset({"node2"}))),
                FakePreFilter("FakePreFilter3", PreFilterResult(frozenset({"node1"}))),
                table=three_nodes(),
            ),
            {"FakePreFilter2", "FakePreFilter3"},
            id="TestSchedulerSchedulePod/test prefilter plugin returning non-intersecting nodes",
        ),
        pytest.param(
            lambda: prefilters(
                FakePreFilter("FakePreFilter1"),
                FakePreFilter("FakePreFilter2", PreFilterResult(frozenset())),
                table=table_of("node1"),
            ),
            {"FakePreFilter2"},
            id="TestSchedulerSchedulePod/test prefilter plugin returning empty node set",
        ),
        pytest.param(
            lambda: prefilters(
                FakePreFilter("FakePreFilter", PreFilterResult(frozenset({"node2"}))),
                table=table_of("node1", "node2"),
                filters=[FakeFilter({"node2": U})],
            ),
            {"FakePreFilter", "FakeFilter"},
            id="TestSchedulerSchedulePod/test some nodes are filtered out by prefilter plugin "
            "and other are filtered out by filter plugin",
        ),
        pytest.param(
            lambda: prefilters(
                FakePreFilter("FakePreFilter", PreFilterResult(frozenset({"invalid-node"}))),
                table=table_of("1", "2"),
                filters=[TrueFilter()],
            ),
            {"FakePreFilter"},
            id="TestSchedulerSchedulePod/test prefilter plugin returned an invalid node",
        ),
    ],
)
def test_pre_filter_result_plugins_are_unschedulable_plugins(
    make_fwk: Callable[[], Framework], want: set[str]
) -> None:
    err = fit_error(make_fwk())
    assert err.diagnosis.unschedulable_plugins == want


def test_pre_filter_skip_skips_the_filter() -> None:
    """TestSchedulerSchedulePod/test prefilter plugin returning skip."""
    skipper = FakePreFilterAndFilter("FakeFilter2", None, Status(Code.SKIP))
    fwk = build_framework(
        fake_profile(
            pre_filter=["FakePreFilter1", "FakeFilter2"],
            filters=["FakeFilter1", "FakeFilter2"],
            score=["EqualPrioritizerPlugin"],
        ),
        instance_registry(
            FakePreFilter("FakePreFilter1"),
            FakeFilter({"node1": U}, name="FakeFilter1"),
            skipper,
            EqualPrioritizer(),
        ),
        table=three_nodes(),
    )
    result = schedule(fwk)
    assert result.suggested_host in {"node2", "node3"}
    assert result.evaluated_nodes == 3


@pytest.mark.parametrize(
    ("pre", "want_hosts"),
    [
        pytest.param(
            FakePreFilter("FakePreFilter", PreFilterResult(frozenset({"node1", "node2"}))),
            {"node1", "node2"},
            id="TestSchedulerSchedulePod/test no score plugin, prefilter plugin returning 2 nodes",
        ),
        pytest.param(
            FakePreFilter("FakePreFilter"),
            {"node1", "node2", "node3"},
            id="TestSchedulerSchedulePod/test without score plugin no extra nodes are evaluated",
        ),
    ],
)
def test_without_score_plugins_one_node_is_evaluated(
    pre: FakePreFilter, want_hosts: set[str]
) -> None:
    fwk = prefilters(pre, table=three_nodes(), filters=[TrueFilter()])
    result = schedule(fwk)
    assert result.suggested_host in want_hosts
    assert result.evaluated_nodes == 1


class SkippedScorer:
    """PreScore says Skip; Score must then not run (TestSchedulerSchedulePod/test all
    prescore plugins return skip)."""

    name = "FakePreScoreAndScorePlugin"

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: object) -> Status:
        return Status(Code.SKIP, "fake skip")

    def score(self, state: CycleState, pod: PodInfo, node: object) -> tuple[int, Status]:
        return 0, Status(Code.ERROR, "this score function shouldn't be executed")

    def score_extensions(self) -> None:
        return None


def test_all_pre_score_plugins_skip() -> None:
    prof = profile(
        {
            FILTER: ["TrueFilter"],
            PRE_SCORE: ["FakePreScoreAndScorePlugin"],
            SCORE: ["FakePreScoreAndScorePlugin"],
        }
    )
    fwk = build_framework(
        prof, instance_registry(TrueFilter(), SkippedScorer()), table=table_of("node1", "node2")
    )
    assert ScheduleOne().schedule_pod(
        fwk, CycleState(), make_pod("ignore").info()
    ).suggested_host in {
        "node1",
        "node2",
    }


@pytest.mark.parametrize("vector", [False, True], ids=["per-node", "vectorised"])
def test_find_fit_all_error(vector: bool) -> None:
    """TestFindFitAllError: every node fails MatchFilter."""
    fwk = build_framework(
        fake_profile(filters=["TrueFilter", "MatchFilter"]),
        instance_registry(VectorTrueFilter() if vector else TrueFilter(), MatchFilter()),
        table=table_of("3", "2", "1"),
    )
    _, diag = ScheduleOne().find_nodes_that_fit_pod(fwk, CycleState(), make_pod("").info())
    assert explicit(diag) == dict.fromkeys(("1", "2", "3"), (U, (ERR_REASON_FAKE,), "MatchFilter"))
    assert diag.unschedulable_plugins == {"MatchFilter"}


def test_find_fit_some_error() -> None:
    """TestFindFitSomeError: the pod named like node "1" fits only there."""
    fwk = build_framework(
        fake_profile(filters=["TrueFilter", "MatchFilter"]),
        instance_registry(TrueFilter(), MatchFilter()),
        table=table_of("3", "2", "1"),
    )
    feasible, diag = ScheduleOne().find_nodes_that_fit_pod(
        fwk, CycleState(), make_pod("1").uid("1").info()
    )
    assert row_names(fwk, feasible) == ["1"]
    assert explicit(diag) == dict.fromkeys(("2", "3"), (U, (ERR_REASON_FAKE,), "MatchFilter"))
    assert diag.unschedulable_plugins == {"MatchFilter"}


def test_filter_error_aborts_the_cycle() -> None:
    fwk = build_framework(
        fake_profile(filters=["FakeFilter"]),
        instance_registry(FakeFilter({"node1": Code.ERROR})),
        table=three_nodes(),
    )
    with pytest.raises(SchedulingError) as exc:
        ScheduleOne().schedule_pod(fwk, CycleState(), make_pod("p").info())
    assert str(exc.value) == 'running "FakeFilter" filter plugin: injecting failure for pod p'


def test_no_nodes() -> None:
    fwk = build_framework(fake_profile(filters=["TrueFilter"]), instance_registry(TrueFilter()))
    with pytest.raises(NoNodesAvailable) as exc:
        ScheduleOne().schedule_pod(fwk, CycleState(), make_pod("p").info())
    assert str(exc.value) == "no nodes available to schedule pods"


def test_a_single_feasible_node_is_not_scored() -> None:
    fwk = build_framework(
        fake_profile(filters=["FakeFilter"], score=["ExplodingScore"]),
        instance_registry(FakeFilter({"node1": U, "node3": UAU}), ExplodingScore()),
        table=three_nodes(),
    )
    result = ScheduleOne().schedule_pod(fwk, CycleState(), make_pod("p").info())
    assert result == ScheduleResult("node2", 3, 1, {})


def test_schedule_result_reports_the_weighted_scores_of_the_chosen_node() -> None:
    prof = profile(
        {FILTER: ["TrueFilter"], SCORE: [("NodeScore", 3), ("EqualPrioritizerPlugin", 1)]}
    )
    fwk = build_framework(
        prof,
        instance_registry(TrueFilter(), NodeScorePlugin({"node2": 10}), EqualPrioritizer()),
        table=three_nodes(),
    )
    result = ScheduleOne().schedule_pod(fwk, CycleState(), make_pod("p").info())
    assert result == ScheduleResult("node2", 3, 3, {"NodeScore": 30, "EqualPrioritizerPlugin": 1})


# --------------------------------------------------------------------------- FitError


def statuses(entries: dict[str, str], absent: Status | None = None, code: Code = U) -> NodeToStatus:
    return NodeToStatus({n: Status(code, r) for n, r in entries.items()}, absent)


PRE_MSG = "Node(s) failed PreFilter plugin FalsePreFilter"
POST_MSG = "Error running PostFilter plugin FailedPostFilter"
F1 = "Node(s) failed Filter plugin FalseFilter-1"
F2 = "Node(s) failed Filter plugin FalseFilter-2"


@pytest.mark.parametrize(
    ("num_all_nodes", "diagnosis", "want"),
    [
        pytest.param(
            3,
            Diagnosis(
                statuses({"node1": PRE_MSG, "node2": PRE_MSG, "node3": PRE_MSG}),
                pre_filter_msg=PRE_MSG,
            ),
            f"0/3 nodes are available: {PRE_MSG}.",
            id="TestFitError_Error/nodes failed Prefilter plugin",
        ),
        pytest.param(
            3,
            Diagnosis(
                statuses({"node1": PRE_MSG, "node2": PRE_MSG, "node3": PRE_MSG}),
                pre_filter_msg=PRE_MSG,
                post_filter_msg=POST_MSG,
            ),
            f"0/3 nodes are available: {PRE_MSG}. {POST_MSG}",
            id="TestFitError_Error/nodes failed Prefilter plugin and the preemption also failed",
        ),
        pytest.param(
            3,
            Diagnosis(statuses({"node1": F1, "node2": F1, "node3": F1})),
            f"0/3 nodes are available: 3 {F1}.",
            id="TestFitError_Error/nodes failed one Filter plugin with an empty PostFilterMsg",
        ),
        pytest.param(
            3,
            Diagnosis(statuses({"node1": F1, "node2": F1, "node3": F1}), post_filter_msg=POST_MSG),
            f"0/3 nodes are available: 3 {F1}. {POST_MSG}",
            id="TestFitError_Error/nodes failed one Filter plugin with a non-empty PostFilterMsg",
        ),
        pytest.param(
            3,
            Diagnosis(statuses({"node1": F1, "node2": F1, "node3": F2})),
            f"0/3 nodes are available: 1 {F2}, 2 {F1}.",
            id="TestFitError_Error/nodes failed two Filter plugins with an empty PostFilterMsg",
        ),
        pytest.param(
            3,
            Diagnosis(statuses({"node1": F1, "node2": F1, "node3": F2}), post_filter_msg=POST_MSG),
            f"0/3 nodes are available: 1 {F2}, 2 {F1}. {POST_MSG}",
            id="TestFitError_Error/nodes failed two Filter plugins with a non-empty PostFilterMsg",
        ),
        pytest.param(
            1,
            Diagnosis(statuses({"node1": "Node failed Permit plugin Permit-1"})),
            "0/1 nodes are available: 1 Node failed Permit plugin Permit-1.",
            id="TestFitError_Error/failed to Permit on node",
        ),
        pytest.param(
            1,
            Diagnosis(statuses({"node1": "Node failed Reserve plugin Reserve-1"})),
            "0/1 nodes are available: 1 Node failed Reserve plugin Reserve-1.",
            id="TestFitError_Error/failed to Reserve on node",
        ),
        pytest.param(
            12,
            Diagnosis(
                NodeToStatus(
                    {
                        **{f"a{i}": Status(U, "x") for i in range(10)},
                        "b1": Status(U, "y"),
                        "b2": Status(U, "y"),
                    }
                )
            ),
            "0/12 nodes are available: 10 x, 2 y.",
            id="entries are sorted as strings: '10 x' before '2 y'",
        ),
        pytest.param(
            5,
            Diagnosis(statuses({"n1": "Insufficient cpu"}, absent=Status(UAU, "not helpful"))),
            "0/5 nodes are available: 1 Insufficient cpu, 4 not helpful.",
            id="absent nodes add the absent status's reasons, counted NumAllNodes - explicit",
        ),
        pytest.param(
            3,
            Diagnosis(statuses({"n1": "Insufficient cpu"})),
            "0/3 nodes are available: 1 Insufficient cpu.",
            id="the default absent status has no reasons and adds nothing",
        ),
        pytest.param(
            2,
            Diagnosis(
                NodeToStatus(
                    {
                        "n1": Status(U, "Insufficient cpu", "Insufficient memory"),
                        "n2": Status(U, "Insufficient memory"),
                    }
                )
            ),
            "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory.",
            id="every reason of a multi-reason status is counted",
        ),
        pytest.param(
            0,
            Diagnosis(NodeToStatus()),
            "0/0 nodes are available:",
            id="no reasons at all: no separator and no period",
        ),
    ],
)
def test_fit_error_message(num_all_nodes: int, diagnosis: Diagnosis, want: str) -> None:
    err = FitError(make_pod("p").obj(), num_all_nodes, diagnosis)
    assert str(err) == want


# --------------------------------------------------------------------------- select_host


def seeded(seed: int) -> Framework:
    """A framework whose random source is ``random.Random(seed)``."""
    return build_framework(fake_profile(), {}, seed=seed)


@pytest.mark.parametrize("seed", range(6))
def test_select_host_breaks_ties_with_the_seeded_rng(seed: int) -> None:
    totals = np.array([5, 9, 9, 3, 9], dtype=np.int64)
    got, ties = select_host(totals, seeded(seed))
    assert got == [1, 2, 4][random.Random(seed).randrange(3)]
    assert ties.tolist() == [1, 2, 4]


def test_select_host_covers_every_tie_and_only_ties() -> None:
    totals = np.array([5, 9, 9, 3, 9], dtype=np.int64)
    picks = {select_host(totals, seeded(seed))[0] for seed in range(60)}
    assert picks == {1, 2, 4}


def test_select_host_unique_maximum_does_not_draw() -> None:
    fwk = seeded(3)
    before = fwk.rng.getstate()
    got, ties = select_host(np.array([1, 7, 2], dtype=np.int64), fwk)
    assert got == 1 and ties.tolist() == [1]
    assert fwk.rng.getstate() == before


# --------------------------------------------------------------------------- vector == exact

GPU = "example.com/gpu"
TAINTS = (
    Taint("dedicated", "gpu", NO_SCHEDULE),
    Taint("dedicated", "db", NO_SCHEDULE),
    Taint("spot", "", PREFER_NO_SCHEDULE),
    Taint("maint", "", NO_EXECUTE),
)
IMAGES = ("nginx", "redis:7", "registry.io/app:v1")
CPUS = ("", "100m", "250m", "500m", "1", "2")
MEMS = ("", "64Mi", "256Mi", "1Gi")
PORTS = (0, 0, 80, 8080)


@dataclass
class ClusterCase:
    nodes: list[Node]
    bound: list[Pod]
    pending: list[Pod]
    nominated: list[tuple[Pod, str]]


def _requests(draw: st.DrawFn, gpu: bool) -> dict[str, str | int]:
    req: dict[str, str | int] = {}
    cpu, mem = draw(st.sampled_from(CPUS)), draw(st.sampled_from(MEMS))
    if cpu:
        req["cpu"] = cpu
    if mem:
        req["memory"] = mem
    if gpu and draw(st.integers(0, 3)) == 0:
        req[GPU] = draw(st.integers(1, 2))
    return req


def _pod(draw: st.DrawFn, name: str, node_names: list[str], pending: bool) -> Pod:
    b = make_pod(name).priority(draw(st.sampled_from((0, 10, 100))))
    req = _requests(draw, gpu=True)
    image = draw(st.sampled_from(("", *IMAGES)))
    if req or image:
        b.req_map(req, image=image)
    port = draw(st.sampled_from(PORTS))
    if port:
        b.host_port(port, host_ip=draw(st.sampled_from(("", "", "10.0.0.1"))))
    if not pending:
        return b.obj()
    if draw(st.integers(0, 3)) == 0:
        b.node_selector(disk="ssd")
    kind = draw(st.integers(0, 7))
    if kind == 1:
        b.node_affinity_in(
            LABEL_ZONE, *draw(st.lists(st.sampled_from("abc"), min_size=1, max_size=2))
        )
    elif kind == 2:
        b.node_affinity_not_in(LABEL_ZONE, "c")
    elif kind == 3:
        b.node_affinity_term(NodeSelectorRequirement("tier", "Gt", ("2",)))
    elif kind == 4:
        b.node_affinity_term(NodeSelectorRequirement("tier", "Exists"))
    elif kind == 5:
        names = draw(st.lists(st.sampled_from([*node_names, "ghost"]), min_size=1, max_size=3))
        b.node_affinity_term(fields=(NodeSelectorRequirement("metadata.name", "In", tuple(names)),))
    if draw(st.booleans()):
        b.preferred_node_affinity(
            draw(st.integers(1, 100)), NodeSelectorRequirement("disk", "In", ("ssd",))
        )
    for key, op, value, effect in draw(
        st.lists(
            st.sampled_from(
                (
                    ("dedicated", "Equal", "gpu", NO_SCHEDULE),
                    ("maint", "Exists", "", NO_EXECUTE),
                    ("", "Exists", "", ""),
                    ("dedicated", "Exists", "", ""),
                    ("spot", "Exists", "", PREFER_NO_SCHEDULE),
                )
            ),
            max_size=2,
            unique=True,
        )
    ):
        b.toleration(key, value, effect, op)
    b.nominated(draw(st.sampled_from(["", "", *node_names, "ghost"])))
    return b.obj()


def diag_sig(d: Diagnosis) -> tuple[object, ...]:
    a = d.node_to_status.absent
    return (
        sorted((n, int(s.code), s.reasons, s.plugin) for n, s in d.node_to_status),
        (int(a.code), a.reasons, a.plugin),
        sorted(d.unschedulable_plugins),
        sorted(d.pending_plugins),
        d.pre_filter_msg,
    )


def outcome(alg: ScheduleOne, fwk: Framework, pod: Pod) -> tuple[object, ...]:
    try:
        r = alg.schedule_pod(fwk, CycleState(), PodInfo(pod))
    except FitError as fit:
        return ("fit", str(fit), fit.num_all_nodes, diag_sig(fit.diagnosis))
    except NoNodesAvailable:
        return ("none",)
    except (SchedulingError, ScoreError) as err:
        return ("error", type(err).__name__, str(err))
    return ("ok", r.suggested_host, r.evaluated_nodes, r.feasible_nodes, sorted(r.scores.items()))


def feasible_sig(alg: ScheduleOne, fwk: Framework, pod: Pod) -> tuple[object, ...]:
    try:
        rows, d = alg.find_nodes_that_fit_pod(fwk, CycleState(), PodInfo(pod))
    except SchedulingError as err:
        return ("error", str(err))
    return (row_names(fwk, rows), diag_sig(d))


def frameworks(
    case: ClusterCase, with_score: bool, nominator: Nominator
) -> tuple[Cache, Framework, Framework]:
    cache = Cache()
    for n in case.nodes:
        cache.add_node(n)
    for p in case.bound:
        cache.add_pod(p)
    prof = in_tree_profile(with_score=with_score)
    registry = in_tree_registry()
    vec = build_framework(prof, registry, table=cache.table, nominator=nominator, seed=11)
    exact = build_framework(prof, registry, table=cache.table, nominator=nominator, seed=11)
    exact.per_node = True
    return cache, vec, exact


def nominator_of(case: ClusterCase) -> FakeNominator:
    nominator = FakeNominator()
    for pod, node in case.nominated:
        nominator.nominate(pod, node)
    return nominator


def _nominated_cluster() -> ClusterCase:
    """n0 is empty and scores best, but a high-priority pod nominated to n0 fills it,
    so the low pod must go to the half-used n1."""
    nodes = [make_node(f"n{i}").capacity(cpu="2", memory="4Gi", pods=10).obj() for i in range(2)]
    used = make_pod("used").req(cpu="1").node("n1").obj()
    nominee = make_pod("nominee").priority(100).req(cpu="2").obj()
    low = make_pod("low").priority(0).req(cpu="1").obj()
    return ClusterCase(nodes, [used], [low], [(nominee, "n0")])


def test_vectorised_path_honours_nominated_pods() -> None:
    case = _nominated_cluster()
    nominator = nominator_of(case)
    _, vec, exact = frameworks(case, True, nominator)
    pod = case.pending[0]
    got_v, got_e = outcome(ScheduleOne(), vec, pod), outcome(ScheduleOne(), exact, pod)
    assert got_e[:2] == ("ok", "n1")
    assert got_v == got_e


def _random_node(rng: random.Random, i: int) -> Node:
    """A node of a large cluster; about half of them reject a typical pod (taints,
    unschedulable, labels, tiny capacity), so scans need several chunks."""
    b = make_node(f"n{i:03d}").capacity(
        cpu=rng.choice(("100m", "500m", "2", "4")),
        memory=rng.choice(("256Mi", "1Gi", "4Gi")),
        pods=rng.choice((1, 2, 10)),
    )
    zone = rng.choice(("", "a", "b", "c"))
    if zone:
        b.label(LABEL_ZONE, zone)
    if rng.random() < 0.5:
        b.label("disk", "ssd")
    if rng.random() < 0.3:
        t = rng.choice(TAINTS)
        b.taint(t.key, t.value, t.effect)
    if rng.random() < 0.15:
        b.unschedulable()
    if rng.random() < 0.3:
        b.image(300_000_000, rng.choice(IMAGES))
    return b.obj()


@st.composite
def large_clusters(draw: st.DrawFn) -> ClusterCase:
    seed = draw(st.integers(0, 2**32 - 1))
    rng = random.Random(seed)
    nodes = [_random_node(rng, i) for i in range(draw(st.integers(70, 320)))]
    names = [n.name for n in nodes]
    bound = []
    for i in range(len(nodes) // 3):
        p = make_pod(f"b{i}").req(cpu=rng.choice(("100m", "500m", "1"))).obj()
        p.node_name = rng.choice(names)
        p.phase = "Running"
        bound.append(p)
    nominated = []
    for i in range(rng.randrange(0, 12)):
        nom = make_pod(f"nom{i}").priority(rng.choice((0, 10, 100))).req(cpu="500m").obj()
        nominated.append((nom, rng.choice(names)))
    pending = [_pod(draw, f"p{i}", names, pending=True) for i in range(draw(st.integers(1, 4)))]
    return ClusterCase(nodes, bound, pending, nominated)


@pytest.mark.parametrize(
    ("with_score", "percentage"),
    [
        pytest.param(False, None, id="no Score plugins (one node to find)"),
        pytest.param(True, 1, id="default profile, 1 percent (100 nodes to find)"),
    ],
)
@settings(
    max_examples=scaled(20),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=large_clusters())
def test_vectorised_path_equals_per_node_path_on_large_clusters(
    case: ClusterCase, with_score: bool, percentage: int | None
) -> None:
    """Large enough that the vector scan needs more than one chunk and stops early."""
    cache = Cache()
    for n in case.nodes:
        cache.add_node(n)
    for p in case.bound:
        cache.add_pod(p)
    nominator = nominator_of(case)
    prof = in_tree_profile(with_score=with_score, percentage=percentage)
    registry = in_tree_registry()
    vec = build_framework(prof, registry, table=cache.table, nominator=nominator, seed=5)
    exact = build_framework(prof, registry, table=cache.table, nominator=nominator, seed=5)
    exact.per_node = True
    alg_v, alg_e = ScheduleOne(), ScheduleOne()
    start = random.Random(len(case.nodes)).randrange(len(case.nodes))
    alg_v.next_start_node_index = alg_e.next_start_node_index = start
    for pod in case.pending:
        start = alg_e.next_start_node_index
        assert feasible_sig(alg_v, vec, pod) == feasible_sig(alg_e, exact, pod)
        assert alg_v.next_start_node_index == alg_e.next_start_node_index
        alg_v.next_start_node_index = alg_e.next_start_node_index = start
        got_v, got_e = outcome(alg_v, vec, pod), outcome(alg_e, exact, pod)
        assert got_v == got_e
        assert alg_v.next_start_node_index == alg_e.next_start_node_index
        if got_e[0] == "ok":
            host = str(got_e[1])
            assumed = pod.copy()
            assumed.node_name = host
            cache.assume_pod(PodInfo(assumed), host)
