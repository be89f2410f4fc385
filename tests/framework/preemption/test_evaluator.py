"""The preemption Evaluator against upstream's tables
(pkg/scheduler/framework/preemption/preemption_test.go; TestNodesWherePreemptionMightHelp
as of commit 3e34da6e2a6d908922ad28bda84cb021d22e2b1e, the rest as recent).

The Evaluator is driven with small fake policies shaped like upstream's
``FakePostFilterPlugin`` / ``FakePreemptionScorePostFilterPlugin`` and the
fake API of ``tests/plugins/preemption_harness.py``. Expected values follow the
upstream rules (upstream-behaviour spec §5, R5.2, R5.4, R5.8–R5.10,
and §7. Where kubesched differs from upstream the test is marked
``xfail(strict=True, reason="BUG: ...")`` until fixed: it states upstream's behaviour.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.types import Pod, PodCondition, PodDisruptionBudget
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.preemption import (
    Candidate,
    CandidateList,
    Evaluator,
    VictimOrder,
    Victims,
)
from kubesched.framework.preemption.candidates import DryRun, rotated
from kubesched.framework.results import NodeToStatus, PostFilterResult
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from tests.builders import make_pod
from tests.hypothesis_profiles import scaled
from tests.plugins.preemption_harness import (
    HIGH,
    LARGE,
    LOW,
    MID,
    VERY_LARGE,
    ErrorOnLabelPlugin,
    PreemptionHarness,
    go_aggregate,
    node,
)

DISRUPTION_TARGET = PodCondition(
    "DisruptionTarget",
    "True",
    "PreemptionByScheduler",
    "default-scheduler: preempting to accommodate a higher priority pod",
)


def pod(
    name: str,
    prio: int = MID,
    *,
    on: str = "",
    uid: str = "",
    containers: int = 0,
    start: int | None = None,
    nominated: str = "",
) -> Pod:
    b = make_pod(name).uid(uid or name).priority(prio)
    for _ in range(containers):
        b.req()
    if on:
        b.node(on)
    if start is not None:
        b.start_time(start)
    if nominated:
        b.nominated(nominated)
    return b.obj()


# ---------------------------------------------------------------------------- fake policies


class FakePolicy:
    """FakePostFilterPlugin: the first pod of every node is its victim, with a fixed
    number of PDB violations; offset 0 and every node a candidate slot. Records the
    nodes it is asked about, in order."""

    def __init__(
        self,
        num_violating: int = 0,
        score_funcs: Callable[[dict[str, Victims]], list[Callable[[str], int]]] | None = None,
    ) -> None:
        self.num_violating = num_violating
        self.score_funcs = score_funcs
        self.visited: list[str] = []

    def pod_eligible_to_preempt_others(
        self, pod: PodInfo, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        return True, ""

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: PodInfo,
        node: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[PodInfo], int, Status]:
        self.visited.append(node.name)
        return [node.pods[0]], self.num_violating, SUCCESS

    def offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return 0, num_nodes

    def ordered_score_funcs(self, victims: dict[str, Victims]) -> list[Callable[[str], int]] | None:
        return None if self.score_funcs is None else self.score_funcs(victims)

    def victim_order(self) -> VictimOrder | None:
        return None  # its own victim selection: the dry run visits node by node


def fewest_containers(victims: dict[str, Victims]) -> list[Callable[[str], int]]:
    """FakePreemptionScorePostFilterPlugin's only score: fewer containers (incl. init)
    among the victims is better."""

    def score(node: str) -> int:
        return -sum(
            len(p.pod.spec.containers) + len(p.pod.spec.init_containers) for p in victims[node].pods
        )

    return [score]


def evaluator(
    h: PreemptionHarness, policy: FakePolicy, *, async_preemption: bool = True
) -> Evaluator:
    return Evaluator("FakePostFilter", h.fwk, policy, async_preemption=async_preemption)


# ============================================================ TestNodesWherePreemptionMightHelp

NODE_NAMES = ["node1", "node2", "node3", "node4"]
U, UAU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        pytest.param(
            {
                "node1": (UAU, "node(s) didn't match Pod's node affinity/selector"),
                "node2": (UAU, "node(s) didn't match the requested node name"),
                "node3": (UAU, "node(s) had untolerated taint(s)"),
                "node4": (UAU, "node(s) didn't match pod affinity rules"),
            },
            set(),
            id="TestNodesWherePreemptionMightHelp/No node should be attempted",
        ),
        pytest.param(
            {
                "node1": (U, "node(s) didn't match pod anti-affinity rules"),
                "node2": (UAU, "node(s) didn't match the requested node name"),
                "node3": (UAU, "node(s) were unschedulable"),
                "node4": (U, "Unschedulable"),
            },
            {"node1", "node4"},
            id="TestNodesWherePreemptionMightHelp/ErrReasonAntiAffinityRulesNotMatch should be "
            "tried as it indicates that the pod is unschedulable due to inter-pod anti-affinity",
        ),
        pytest.param(
            {
                "node1": (UAU, "node(s) didn't match pod affinity rules"),
                "node2": (U, "node(s) didn't match pod anti-affinity rules"),
                "node3": (U, "Unschedulable"),
                "node4": (U, "Unschedulable"),
            },
            {"node2", "node3", "node4"},
            id="TestNodesWherePreemptionMightHelp/ErrReasonAffinityRulesNotMatch should not be "
            "tried as it indicates that the pod is unschedulable due to inter-pod affinity, but "
            "ErrReasonAntiAffinityRulesNotMatch should be tried",
        ),
        pytest.param(
            {
                "node1": (UAU, "node(s) had no available disk"),
                "node2": (U, "Insufficient memory"),
                "node3": (U, "Unschedulable"),
                "node4": (U, "Unschedulable"),
            },
            {"node2", "node3", "node4"},
            id="TestNodesWherePreemptionMightHelp/Mix of failed predicates works fine",
        ),
        pytest.param(
            {
                "node1": (UAU, "node(s) had unknown conditions"),
                "node2": (U, "Unschedulable"),
                "node3": (U, "Unschedulable"),
                "node4": (U, "Unschedulable"),
            },
            {"node2", "node3", "node4"},
            id="TestNodesWherePreemptionMightHelp/Node condition errors should be considered "
            "unresolvable",
        ),
        pytest.param(
            {
                "node1": (UAU, "node(s) had no available volume zone"),
                "node2": (UAU, "node(s) didn't match PersistentVolume's node affinity"),
                "node3": (UAU, "node(s) didn't find available persistent volumes to bind"),
                "node4": (U, "Unschedulable"),
            },
            {"node4"},
            id="TestNodesWherePreemptionMightHelp/ErrVolume... errors should not be tried as it "
            "indicates that the pod is unschedulable due to no matching volumes for pod on node",
        ),
        pytest.param(
            {
                "node1": (U, "node(s) didn't match pod topology spread constraints"),
                "node2": (UAU, "node(s) didn't match the requested node name"),
                "node3": (U, "node(s) didn't match pod topology spread constraints"),
                "node4": (U, "Unschedulable"),
            },
            {"node1", "node3", "node4"},
            id="TestNodesWherePreemptionMightHelp/ErrReasonConstraintsNotMatch should be tried as "
            "it indicates that the pod is unschedulable due to topology spread constraints",
        ),
        pytest.param(
            {"node1": (U, ""), "node2": (UAU, ""), "node3": (U, ""), "node4": (UAU, "")},
            {"node1", "node3"},
            id="TestNodesWherePreemptionMightHelp/UnschedulableAndUnresolvable status should be "
            "skipped but Unschedulable should be tried",
        ),
        pytest.param(
            {
                "node1": (U, ""),
                "node2": (
                    UAU,
                    "node(s) didn't match pod topology spread constraints (missing required label)",
                ),
                "node3": (U, ""),
                "node4": (UAU, ""),
            },
            {"node1", "node3"},
            id="TestNodesWherePreemptionMightHelp/ErrReasonNodeLabelNotMatch should not be tried "
            "as it indicates that the pod is unschedulable due to node doesn't have the required "
            "label",
        ),
    ],
)
def test_nodes_where_preemption_might_help(
    statuses: dict[str, tuple[Code, str]], expected: set[str]
) -> None:
    """Only the code decides (R5.2.2/R5.2.3); the reasons are upstream's, several from
    plugins kubesched lacks (volumes, inter-pod affinity, topology spread), which does
    not matter here. Checked on NodeToStatus and on what the Evaluator then visits."""
    m = NodeToStatus(
        {n: Status(code, r) if r else Status(code) for n, (code, r) in statuses.items()}
    )
    assert set(m.nodes_for_status_code(NODE_NAMES, Code.UNSCHEDULABLE)) == expected

    nodes = [node(n, VERY_LARGE) for n in NODE_NAMES]
    victims = [pod(f"v{i}", LOW, on=n) for i, n in enumerate(NODE_NAMES)]
    preemptor = pod("p", HIGH)
    h = PreemptionHarness(nodes, victims, [preemptor])
    policy = FakePolicy()
    evaluator(h, policy).find_candidates(h.state(preemptor), PodInfo(preemptor), m)
    assert set(policy.visited) == expected


def test_potential_nodes_keep_snapshot_order() -> None:
    """Upstream iterates a Go map here (random); kubesched uses snapshot order."""
    m = NodeToStatus({n: Status(Code.UNSCHEDULABLE) for n in reversed(NODE_NAMES)})
    assert m.nodes_for_status_code(NODE_NAMES, Code.UNSCHEDULABLE) == NODE_NAMES


# ====================================================================== TestDryRunPreemption


@pytest.mark.parametrize(
    ("num_violating", "expected"),
    [
        pytest.param(
            0,
            {"node1": (["p1"], 0), "node2": (["p2"], 0)},
            id="TestDryRunPreemption/no pdb violation",
        ),
        pytest.param(
            1,
            {"node1": (["p1"], 1), "node2": (["p2"], 1)},
            id="TestDryRunPreemption/pdb violation on each node",
        ),
    ],
)
def test_dry_run_preemption(num_violating: int, expected: dict[str, tuple[list[str], int]]) -> None:
    nodes = [node("node1", VERY_LARGE), node("node2", VERY_LARGE)]
    init = [pod("p1", on="node1"), pod("p2", on="node2")]
    preemptor = pod("p", HIGH)
    h = PreemptionHarness(nodes, init, [preemptor])
    policy = FakePolicy(num_violating)
    ev = evaluator(h, policy)
    got, statuses, errs = ev.dry_run_preemption(
        h.state(preemptor), PodInfo(preemptor), h.infos(), [], 0, 2
    )
    assert {
        c.name: ([v.pod.name for v in c.victims.pods], c.victims.num_pdb_violations) for c in got
    } == expected
    assert len(statuses) == 0 and errs == []
    assert policy.visited == ["node1", "node2"]


class ScriptedPolicy(FakePolicy):
    """Per node: victims and violations, or a failing status."""

    def __init__(self, script: dict[str, tuple[int, int] | Status]) -> None:
        super().__init__()
        self.script = script

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: PodInfo,
        node: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[PodInfo], int, Status]:
        self.visited.append(node.name)
        entry = self.script[node.name]
        if isinstance(entry, Status):
            return [], 0, entry
        n_victims, n_violating = entry
        return node.pods[:n_victims], n_violating, SUCCESS


@pytest.mark.parametrize(
    ("script", "offset", "num", "visited", "candidates"),
    [
        pytest.param(
            {"n1": (1, 0), "n2": (1, 0), "n3": (1, 0)},
            1,
            2,
            ["n2", "n3"],
            ["n2", "n3"],
            id="R5.4.2 nodes are visited from the offset and the scan stops at numCandidates",
        ),
        pytest.param(
            {"n1": (1, 0), "n2": (1, 0), "n3": (1, 0)},
            2,
            2,
            ["n3", "n1"],
            ["n3", "n1"],
            id="R5.4.2 the visit wraps around",
        ),
        pytest.param(
            {"n1": (1, 1), "n2": (1, 1), "n3": (1, 1)},
            0,
            1,
            ["n1", "n2", "n3"],
            ["n1"],
            id="R5.4.5 only violating candidates: no early stop, overflow adds are dropped",
        ),
        pytest.param(
            {"n1": (1, 1), "n2": (1, 0), "n3": (1, 0)},
            0,
            1,
            ["n1", "n2"],
            ["n2", "n1"],
            id="R5.4.4 non-violating candidates come first; the stop needs one of them",
        ),
        pytest.param(
            {
                "n1": Status(Code.UNSCHEDULABLE, "Insufficient cpu"),
                "n2": (0, 0),
                "n3": (1, 0),
            },
            0,
            3,
            ["n1", "n2", "n3"],
            ["n3"],
            id="R5.4.3 a success without victims is not a candidate",
        ),
    ],
)
def test_dry_run_bounded_lists_and_early_stop(
    script: dict[str, tuple[int, int] | Status],
    offset: int,
    num: int,
    visited: list[str],
    candidates: list[str],
) -> None:
    names = sorted(script)
    h = PreemptionHarness(
        [node(n, VERY_LARGE) for n in names], [pod(f"v-{n}", LOW, on=n) for n in names]
    )
    policy = ScriptedPolicy(script)
    preemptor = pod("p", HIGH)
    got, _, _ = evaluator(h, policy).dry_run_preemption(
        CycleState(), PodInfo(preemptor), h.infos(), [], offset, num
    )
    assert policy.visited == visited
    assert [c.name for c in got] == candidates


def test_dry_run_statuses_for_failing_nodes() -> None:
    """R5.4.3/R5.4.4: explicit statuses only for visited failing nodes; a success with
    no victim becomes Error 'expected at least one victim pod on node ...'; Error
    statuses are also returned as errors."""
    script: dict[str, tuple[int, int] | Status] = {
        "n1": Status(Code.UNSCHEDULABLE, "Insufficient cpu"),
        "n2": (0, 0),
        "n3": Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "No preemption victims found for incoming pod"
        ),
    }
    names = sorted(script)
    h = PreemptionHarness([node(n) for n in names], [pod(f"v-{n}", LOW, on=n) for n in names])
    got, statuses, errs = evaluator(h, ScriptedPolicy(script)).dry_run_preemption(
        CycleState(), PodInfo(pod("p", HIGH)), h.infos(), [], 0, 3
    )
    assert got == []
    assert {n: (s.code, s.message()) for n, s in statuses} == {
        "n1": (Code.UNSCHEDULABLE, "Insufficient cpu"),
        "n2": (Code.ERROR, 'expected at least one victim pod on node "n2"'),
        "n3": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "No preemption victims found for incoming pod"),
    }
    assert errs == ['expected at least one victim pod on node "n2"']


@pytest.mark.parametrize(
    ("capacity", "adds", "size", "kept"),
    [
        pytest.param(2, 1, 1, 1, id="R5.4.1 below capacity"),
        pytest.param(2, 2, 2, 2, id="R5.4.1 at capacity"),
        pytest.param(2, 5, 2, 2, id="R5.4.1 overflow adds are dropped, size stays at capacity"),
        pytest.param(0, 3, 0, 0, id="R5.4.1 capacity zero keeps nothing"),
    ],
)
def test_candidate_list(capacity: int, adds: int, size: int, kept: int) -> None:
    lst = CandidateList(capacity)
    for i in range(adds):
        lst.add(Candidate(f"n{i}", Victims([])))
    assert lst.size() == size
    assert [c.name for c in lst.parts if isinstance(c, Candidate)] == [f"n{i}" for i in range(kept)]


# ====================================================================== TestSelectCandidate


def test_select_candidate_custom_score_funcs() -> None:
    """TestSelectCandidate/pod has different number of containers on each node: the
    policy's OrderedScoreFuncs replace the default criteria (R5.8.3) — every candidate
    has one PDB violation, so the defaults alone would not pick node2."""
    nodes = [node(n, VERY_LARGE) for n in ("node1", "node2", "node3")]
    pods = [
        pod("p1.1", on="node1", containers=2),
        pod("p2.1", on="node2", containers=1),
        pod("p3.1", on="node3", containers=3),
    ]
    preemptor = pod("p", HIGH)
    h = PreemptionHarness(nodes, pods, [preemptor])
    ev = evaluator(h, FakePolicy(1, fewest_containers))
    candidates, _, _ = ev.dry_run_preemption(
        h.state(preemptor), PodInfo(preemptor), h.infos(), [], 0, 3
    )
    best = ev.select_candidate(candidates)
    assert best is not None and best.name == "node2"


def test_select_candidate_single_candidate_is_returned_without_scoring() -> None:
    """R5.8.1: one candidate is returned as is: no score function, no random draw."""
    calls: list[str] = []

    def funcs(v: dict[str, Victims]) -> list[Callable[[str], int]]:
        calls.append("scored")
        return []

    h = PreemptionHarness([node("n1")])
    rng_state = h.rng.getstate()
    c = Candidate("n1", Victims([PodInfo(pod("v", LOW))]))
    assert evaluator(h, FakePolicy(0, funcs)).select_candidate([c]) is c
    assert evaluator(h, FakePolicy(0, funcs)).select_candidate([]) is None
    assert calls == []
    assert h.rng.getstate() == rng_state


# ====================================================================== TestPrepareCandidate

PREEMPTOR = "preemptor"


def _victim(name: str, prio: int = MID, uid: str = "", with_condition: bool = False) -> Pod:
    p = pod(name, prio, on="node1", uid=uid or name, containers=1)
    if with_condition:
        p.conditions = [DISRUPTION_TARGET]
    return p


def _terminating(name: str) -> Pod:
    p = _victim(name)
    p.deletion_timestamp = -100
    return p


def _prepare(
    victims: list[Pod],
    in_api: list[Pod],
    *,
    async_preemption: bool,
    fail: dict[tuple[str, str], Exception] | None = None,
    node_name: str = "node1",
) -> tuple[PreemptionHarness, Evaluator, Status]:
    preemptor = pod(PREEMPTOR, HIGH, containers=1)
    h = PreemptionHarness([node("node1", VERY_LARGE)], in_api, [preemptor])
    h.api.fail.update(fail or {})
    ev = evaluator(h, FakePolicy(), async_preemption=async_preemption)
    c = Candidate(node_name, Victims([PodInfo(v) for v in victims]))
    status = ev.prepare_candidate(c, PodInfo(preemptor))
    return h, ev, status


ASYNC = pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])


@ASYNC
@pytest.mark.parametrize(
    ("victims", "in_api", "deleted", "events"),
    [
        pytest.param([], [_victim("victim1")], [], [], id="TestPrepareCandidate/no victims"),
        pytest.param(
            [_victim("victim1")],
            [_victim("victim1")],
            ["victim1"],
            ["victim1"],
            id="TestPrepareCandidate/one victim without condition",
        ),
        pytest.param(
            [_terminating("victim1-with-deletion-timestamp")],
            [_terminating("victim1-with-deletion-timestamp")],
            [],
            [],
            id="TestPrepareCandidate/one victim, but victim is already being deleted",
        ),
        pytest.param(
            [_victim("not-found-victim", uid="victim1")],
            [],
            [],
            [],
            id="TestPrepareCandidate/one victim, but victim is already deleted",
        ),
        pytest.param(
            [_victim("victim1", with_condition=True)],
            [_victim("victim1", with_condition=True)],
            ["victim1"],
            ["victim1"],
            id="TestPrepareCandidate/one victim with same condition",
        ),
        pytest.param(
            [_victim("victim1", with_condition=True)],
            [],
            [],
            [],
            id="TestPrepareCandidate/one victim, not-found victim error is ignored when patching",
        ),
        pytest.param(
            [_victim("victim1")],
            [],
            [],
            [],
            id="TestPrepareCandidate/one victim, not-found victim error is ignored when deleting",
        ),
    ],
)
def test_prepare_candidate(
    victims: list[Pod],
    in_api: list[Pod],
    deleted: list[str],
    events: list[str],
    async_preemption: bool,
) -> None:
    h, ev, status = _prepare(victims, in_api, async_preemption=async_preemption)
    assert status == SUCCESS
    assert [n for n in h.api.names("delete") if n in h.api.terminating()] == deleted
    assert h.api.terminating() - {
        v.name for v in in_api if v.deletion_timestamp is not None
    } == set(deleted)
    for name in deleted:
        cond = h.api.pods[f"default/{name}"].condition("DisruptionTarget")
        assert cond is not None
        assert (cond.status, cond.reason, cond.message) == (
            DISRUPTION_TARGET.status,
            DISRUPTION_TARGET.reason,
            DISRUPTION_TARGET.message,
        )
    # R7.2: an event per victim actually deleted, none for victims already gone.
    assert [(e.regarding, e.reason, e.message, e.related) for e in h.api.events] == [
        (
            f"default/{n}",
            "Preempted",
            f"Preempted by pod {PREEMPTOR} on node node1",
            f"default/{PREEMPTOR}",
        )
        for n in events
    ]
    # A victim already terminating costs no API call at all.
    assert all(
        name not in {v.name for v in victims if v.deletion_timestamp is not None}
        for _, name in h.api.calls
    )
    assert ev.preempting == set() and ev.last_victims_pending == {}
    assert h.activated == []


FAIL_DELETE = {("delete", "fail-victim"): RuntimeError("delete pod failed")}
FAIL_PATCH = {("patch", "fail-victim"): RuntimeError("patch pod status failed")}


@pytest.mark.parametrize(
    ("victims", "fail", "message"),
    [
        pytest.param(
            [_victim("fail-victim", uid="victim1", with_condition=True)],
            FAIL_DELETE,
            "delete pod failed",
            id="TestPrepareCandidate/one victim, but pod deletion failed",
        ),
        pytest.param(
            [_victim("fail-victim", uid="victim1")],
            FAIL_PATCH,
            "patch pod status failed",
            id="TestPrepareCandidate/one victim, but patch pod failed",
        ),
        pytest.param(
            [_victim("fail-victim", uid="victim1"), _victim("victim2", 50000)],
            FAIL_PATCH,
            "patch pod status failed",
            id="TestPrepareCandidate/two victims without condition, one passes successfully and "
            "the second fails",
        ),
    ],
)
def test_prepare_candidate_api_error_sync(
    victims: list[Pod], fail: dict[tuple[str, str], Exception], message: str
) -> None:
    _, _, status = _prepare(victims, victims, async_preemption=False, fail=fail)
    assert (status.code, status.message()) == (Code.ERROR, message)


@pytest.mark.parametrize(
    ("victims", "fail", "deleted"),
    [
        pytest.param(
            [_victim("fail-victim", uid="victim1", with_condition=True)],
            FAIL_DELETE,
            [],
            id="TestPrepareCandidate/one victim, but pod deletion failed (async)",
        ),
        pytest.param(
            [_victim("fail-victim", uid="victim1"), _victim("victim2", 50000)],
            FAIL_PATCH,
            [],
            id="TestPrepareCandidate/two victims without condition, one passes successfully and "
            "the second fails (async: the last victim is not attempted)",
        ),
    ],
)
def test_prepare_candidate_api_error_async(
    victims: list[Pod], fail: dict[tuple[str, str], Exception], deleted: list[str]
) -> None:
    h, ev, status = _prepare(victims, victims, async_preemption=True, fail=fail)
    assert status == SUCCESS  # the goroutine's failure never reaches Preempt
    assert sorted(h.api.terminating()) == deleted
    assert h.activated == [PREEMPTOR]
    assert ev.preempting == set()


# ============================================== TestPrepareCandidateAsyncSetsPreemptingSets


@pytest.mark.parametrize(
    ("victims", "last"),
    [
        pytest.param([], None, id="TestPrepareCandidateAsyncSetsPreemptingSets/no victims"),
        pytest.param(
            ["victim1"], "victim1", id="TestPrepareCandidateAsyncSetsPreemptingSets/one victim"
        ),
        pytest.param(
            ["victim1", "victim2"],
            "victim2",
            id="TestPrepareCandidateAsyncSetsPreemptingSets/two victims",
        ),
    ],
)
def test_prepare_candidate_async_sets_preempting_sets(victims: list[str], last: str | None) -> None:
    pods = [_victim(n) for n in victims]
    preemptor = pod(PREEMPTOR, HIGH, containers=1)
    h = PreemptionHarness([node("node1", VERY_LARGE)], pods, [preemptor])
    ev = evaluator(h, FakePolicy(), async_preemption=True)
    seen: list[tuple[str, bool, tuple[str, str, str] | None]] = []
    original = ev.preempt_pod

    def spy(c: Candidate, p: PodInfo, victim: PodInfo) -> None:
        seen.append(
            (victim.pod.name, p.pod.uid in ev.preempting, ev.last_victims_pending.get(p.pod.uid))
        )
        original(c, p, victim)

    ev.preempt_pod = spy  # type: ignore[method-assign,assignment]
    assert ev.preempting == set() and ev.last_victims_pending == {}
    ev.prepare_candidate(
        Candidate("node1", Victims([PodInfo(p) for p in pods])), PodInfo(preemptor)
    )
    want = [(n, True, ("default", n, n) if n == last else None) for n in victims]
    assert seen == want
    assert ev.preempting == set() and ev.last_victims_pending == {}


# ================================================================= TestIsPodRunningPreemption


def _lister_pod(name: str, terminating: bool = False) -> Pod:
    p = pod(name, MID, on="node")
    if terminating:
        p.deletion_timestamp = 0
    return p


@pytest.mark.parametrize(
    ("preempting", "last", "in_lister", "expected"),
    [
        pytest.param(
            set(), {}, [], False, id="TestIsPodRunningPreemption/preemptor not in preemptingSet"
        ),
        pytest.param(
            set(),
            {"preemptor": ("default", "victim1", "victim1")},
            [],
            False,
            id="TestIsPodRunningPreemption/preemptor not in preemptingSet, lastVictimSet not empty",
        ),
        pytest.param(
            {"preemptor"},
            {"otherPod": ("default", "victim1", "victim1")},
            [],
            True,
            id="TestIsPodRunningPreemption/preemptor in preemptingSet, no lastVictim for preemptor",
        ),
        pytest.param(
            {"preemptor"},
            {"preemptor": ("default", "victim1", "victim1")},
            [],
            False,
            id="TestIsPodRunningPreemption/preemptor in preemptingSet, victim in lastVictimSet, "
            "not in PodLister",
        ),
        pytest.param(
            {"preemptor"},
            {"preemptor": ("default", "victim1", "victim1")},
            [_lister_pod("victim1"), _lister_pod("victim2")],
            True,
            id="TestIsPodRunningPreemption/preemptor in preemptingSet, victim in lastVictimSet and "
            "in PodLister",
        ),
        pytest.param(
            {"preemptor"},
            {"preemptor": ("default", "victim-deleted", "victim-deleted")},
            [_lister_pod("victim1"), _lister_pod("victim-deleted", terminating=True)],
            False,
            id="TestIsPodRunningPreemption/preemptor in preemptingSet, victim in lastVictimSet and "
            "in PodLister with deletion timestamp",
        ),
    ],
)
def test_is_pod_running_preemption(
    preempting: set[str],
    last: dict[str, tuple[str, str, str]],
    in_lister: list[Pod],
    expected: bool,
) -> None:
    h = PreemptionHarness([node("node")], in_lister)
    ev = evaluator(h, FakePolicy())
    ev.preempting = set(preempting)
    ev.last_victims_pending = dict(last)
    assert ev.is_pod_running_preemption("preemptor") is expected


# =================================================================== TestAsyncPreemptionFailure


@pytest.mark.parametrize(
    "victims",
    [
        pytest.param(["victim1"], id="TestAsyncPreemptionFailure/Success with a single victim"),
        pytest.param(
            ["victim1", "victim2", "victim3"],
            id="TestAsyncPreemptionFailure/Success with three victims",
        ),
    ],
)
def test_async_preemption_success(victims: list[str]) -> None:
    pods = [_victim(n) for n in victims]
    h, ev, status = _prepare(pods, pods, async_preemption=True)
    assert status == SUCCESS
    assert h.api.names("delete") == victims  # the last victim is preempted last
    assert h.activated == []
    assert ev.preempting == set()


@pytest.mark.parametrize(
    ("victims", "last_attempted"),
    [
        pytest.param(
            ["fail-victim"], True, id="TestAsyncPreemptionFailure/Failure with a single victim"
        ),
        pytest.param(
            ["fail-victim", "victim2", "victim3"],
            False,
            id="TestAsyncPreemptionFailure/Failure in first of three victims",
        ),
        pytest.param(
            ["victim1", "fail-victim", "victim3"],
            False,
            id="TestAsyncPreemptionFailure/Failure in second of three victims",
        ),
        pytest.param(
            ["fail-victim1", "fail-victim2", "victim3"],
            False,
            id="TestAsyncPreemptionFailure/Failure in first two of three victims",
        ),
        pytest.param(
            ["victim1", "victim2", "fail-victim"],
            True,
            id="TestAsyncPreemptionFailure/Failure in third of three victims",
        ),
    ],
)
def test_async_preemption_failure(victims: list[str], last_attempted: bool) -> None:
    pods = [_victim(n) for n in victims]
    fail: dict[tuple[str, str], Exception] = {
        ("delete", n): RuntimeError("delete pod failed") for n in victims if n.startswith("fail")
    }
    h, ev, status = _prepare(pods, pods, async_preemption=True, fail=fail)
    assert status == SUCCESS
    assert (victims[-1] in h.api.names("delete")) is last_attempted
    assert h.activated == [PREEMPTOR]
    assert ev.preempting == set()


SKIP_EXTENDERS = pytest.mark.skip(reason="kubesched has no scheduler extenders (R5.7)")


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, id=f"TestCallExtenders/{n}", marks=SKIP_EXTENDERS)
        for n in (
            "no extenders",
            "one extender supports preemption",
            "one extender with return no victims",
            "one extender does not support preemption",
            "one extender with no return victims and is ignorable",
            "one extender returns error and is ignorable",
            "one extender returns error and is not ignorable",
            "one extender with empty victims input",
        )
    ],
)
def test_call_extenders(name: str) -> None:
    raise AssertionError("skipped")


# ======================================================= lower-priority nominations (R5.9.4)


@ASYNC
def test_lower_priority_nominations_are_cleared(async_preemption: bool) -> None:
    """Only nominees of strictly lower priority lose their nomination, and only those
    whose status still carries one are patched (TestRemoveNominatedNodeName)."""
    victims = [_victim("victim1")]
    nominees = [
        pod("lower", LOW, nominated="node1"),
        pod("lower-cleared", LOW),  # nominated in memory, status already empty
        pod("equal", HIGH, nominated="node1"),
        pod("higher", HIGH + 1, nominated="node1"),
    ]
    preemptor = pod(PREEMPTOR, HIGH)
    h = PreemptionHarness([node("node1", VERY_LARGE)], victims, [preemptor, *nominees])
    for n in nominees:
        h.nominator.nominate(n, "node1")
    ev = evaluator(h, FakePolicy(), async_preemption=async_preemption)
    ev.prepare_candidate(
        Candidate("node1", Victims([PodInfo(v) for v in victims])), PodInfo(preemptor)
    )
    nnn = {n.name: h.api.pods[f"default/{n.name}"].nominated_node_name for n in nominees}
    assert nnn == {"lower": "", "lower-cleared": "", "equal": "node1", "higher": "node1"}
    patched_nominees = [n for v, n in h.api.calls if v == "patch" and n != "victim1"]
    assert patched_nominees == ["lower"]
    # Sync clears after the victims are deleted, async (in its goroutine) before.
    order = [n for _, n in h.api.calls]
    assert (order.index("lower") < order.index("victim1")) is async_preemption


@ASYNC
def test_nominations_when_every_victim_is_already_terminating(async_preemption: bool) -> None:
    """R5.9.2: async with no victim left to delete returns at once and does NOT clear
    lower-priority nominations; sync still clears them."""
    victims = [_terminating("victim1")]
    preemptor = pod(PREEMPTOR, HIGH)
    lower = pod("lower", LOW, nominated="node1")
    h = PreemptionHarness([node("node1", VERY_LARGE)], victims, [preemptor, lower])
    h.nominator.nominate(lower, "node1")
    ev = evaluator(h, FakePolicy(), async_preemption=async_preemption)
    status = ev.prepare_candidate(
        Candidate("node1", Victims([PodInfo(v) for v in victims])), PodInfo(preemptor)
    )
    assert status == SUCCESS
    assert h.api.names("delete") == []
    assert h.api.pods["default/lower"].nominated_node_name == ("node1" if async_preemption else "")


@ASYNC
def test_preemption_victims_metric(async_preemption: bool) -> None:
    """scheduler_preemption_victims observes the chosen candidate's victim count."""
    victims = [_victim("a"), _victim("b"), _terminating("c")]
    h, _, _ = _prepare(victims, victims, async_preemption=async_preemption)
    hist = h.metrics.preemption_victims_histogram
    assert (hist.count, hist.sum) == (1, 3)


def test_no_victims_metric_when_async_has_nothing_to_delete() -> None:
    victims = [_terminating("c")]
    h, _, _ = _prepare(victims, victims, async_preemption=True)
    assert h.metrics.preemption_victims_histogram.count == 0


# ================================================================= Preempt: results and errors


def test_preempt_pod_missing_from_the_lister_is_an_error() -> None:
    h = PreemptionHarness([node("n1")])
    ghost = pod("p", HIGH)
    res, status = evaluator(h, FakePolicy()).preempt(CycleState(), PodInfo(ghost), NodeToStatus())
    assert res is None
    assert status.code == Code.ERROR


def test_preempt_pod_missing_from_the_lister_message() -> None:
    h = PreemptionHarness([node("n1")])
    _, status = evaluator(h, FakePolicy()).preempt(
        CycleState(), PodInfo(pod("p", HIGH)), NodeToStatus()
    )
    assert status.message() == 'pod "p" not found'


def test_preempt_without_nodes_is_an_error() -> None:
    preemptor = pod("p", HIGH)
    h = PreemptionHarness([], others=[preemptor])
    res, status = evaluator(h, FakePolicy()).preempt(
        CycleState(), PodInfo(preemptor), NodeToStatus()
    )
    assert res is None
    assert (status.code, status.message()) == (Code.ERROR, "no nodes available")


def test_preempt_reads_the_latest_pod() -> None:
    """R5.0.2: the preemptor is re-read from the lister (its nominatedNodeName may be newer)."""
    stale = pod("p", HIGH)
    fresh = pod("p", HIGH, nominated="n1")
    victim = _victim("v", LOW)
    victim.node_name = "n1"
    victim.deletion_timestamp = 0
    victim.conditions = [DISRUPTION_TARGET]
    h = PreemptionHarness([node("n1", VERY_LARGE)], [victim], [fresh])
    res, status = h.plugin.evaluator.preempt(
        CycleState(), PodInfo(stale), NodeToStatus({"n1": Status(Code.UNSCHEDULABLE)})
    )
    assert res is None
    assert status.message() == "not eligible due to a terminating pod on the nominated node."


def test_preempt_no_candidate_result_clears_the_nomination() -> None:
    """R5.10.1: no candidate -> NominatedNode("") (ModeOverride) and the FitError text."""
    preemptor = pod("p", HIGH, nominated="n1")
    h = PreemptionHarness([node("n1", VERY_LARGE)], [pod("x", HIGH, on="n1")], [preemptor])
    res, status = h.preempt(preemptor, NodeToStatus({"n1": Status(Code.UNSCHEDULABLE)}))
    assert res == PostFilterResult.nominated("")
    assert (status.code, status.message()) == (
        Code.UNSCHEDULABLE,
        "0/1 nodes are available: 1 No preemption victims found for incoming pod.",
    )


def _error_nodes(per_node: bool) -> tuple[PreemptionHarness, Pod]:
    preemptor = pod("p", HIGH)
    nodes = [node(n, LARGE, error="true") for n in ("node1", "node2")]
    h = PreemptionHarness(
        nodes,
        [pod("v1", LOW, on="node1"), pod("v2", LOW, on="node2")],
        [preemptor],
        pre_filter=("NodeResourcesFit", "test-plugin"),
        plugins={"test-plugin": ErrorOnLabelPlugin(per_node=per_node)},
    )
    return h, preemptor


def test_preempt_same_error_on_every_node_is_reported_once() -> None:
    """R5.4.6 with utilerrors.NewAggregate: identical messages collapse into one."""
    h, preemptor = _error_nodes(per_node=False)
    res, status = h.preempt(
        preemptor, NodeToStatus({n: Status(Code.UNSCHEDULABLE) for n in ("node1", "node2")})
    )
    assert res is None
    assert (status.code, status.message()) == (
        Code.ERROR,
        'running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p',
    )


def test_preempt_distinct_errors_are_aggregated() -> None:
    h, preemptor = _error_nodes(per_node=True)
    _, status = h.preempt(
        preemptor, NodeToStatus({n: Status(Code.UNSCHEDULABLE) for n in ("node1", "node2")})
    )
    msgs = [
        f'running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p on {n}'
        for n in ("node1", "node2")
    ]
    assert status.code == Code.ERROR
    assert status.message() in (go_aggregate(msgs), go_aggregate(msgs[::-1]))


# --------------------------------------------------------------------------- batches


class _FakeBatch:
    """A VictimBatch with only what ``_DryRun.take_batch`` reads (no failures)."""

    def __init__(self, candidate: list[bool], violating: list[bool]) -> None:
        self.candidate = np.array(candidate, dtype=np.bool_)
        self.violating = np.array(violating, dtype=np.bool_) & self.candidate
        self.fail_index = np.zeros(len(candidate), dtype=np.int64)
        self.statuses = [Status(Code.UNSCHEDULABLE, "no")]


@settings(max_examples=scaled(300), deadline=None)
@given(
    num=st.integers(1, 6),
    batches=st.lists(
        st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=8),
        min_size=1,
        max_size=4,
    ),
    pdb=st.booleans(),
)
def test_take_batch_equals_taking_rows_one_by_one(
    num: int, batches: list[list[tuple[bool, bool]]], pdb: bool
) -> None:
    """The batched stop rule (both forms: no violating candidate in the batch, or
    some) takes the same rows into the same lists and stops at the same row as
    ``take_one`` row by row."""
    batched, single = DryRun(num), DryRun(num)
    names = tuple(f"n{i}" for i in range(sum(len(b) for b in batches)))
    start = 0
    for spec in batches:
        if batched.done:
            break
        batch = _FakeBatch([c for c, _ in spec], [pdb and v for _, v in spec])
        rows = np.arange(start, start + len(spec), dtype=np.int64)
        end = batched.take_batch(names, rows, batch)  # type: ignore[arg-type]
        taken = 0
        for k, (c, v) in enumerate(spec):
            if single.done:
                break
            victims = [PodInfo(make_pod(f"v{start + k}").obj())] if c else []
            ok = SUCCESS if c else Status(Code.UNSCHEDULABLE, "no")
            single.take_one(names[start + k], (victims, int(pdb and v), ok))
            taken += 1
        assert end == taken
        start += len(spec)
    assert batched.done == single.done
    for got, want in (
        (batched.non_violating, single.non_violating),
        (batched.violating, single.violating),
    ):
        assert got.added == want.added
        kept = [names[int(r)] for part in got.parts for r in part[2]]  # type: ignore[index]
        assert kept == [c.name for c in want.parts]  # type: ignore[union-attr]


@settings(max_examples=scaled(300), deadline=None)
@given(data=st.data(), n=st.integers(1, 12))
def test_rotated_slices_the_rotation(data: st.DataObject, n: int) -> None:
    rows = np.arange(100, 100 + n, dtype=np.int64)
    shift = data.draw(st.integers(0, n - 1))
    a = data.draw(st.integers(0, n - 1))
    b = data.draw(st.integers(a + 1, 2 * n))
    got = rotated(rows, shift, a, b)
    assert got.tolist() == np.roll(rows, -shift)[a:b].tolist()
    got[:] = -1  # a copy: the source is untouched
    assert rows.tolist() == list(range(100, 100 + n))
