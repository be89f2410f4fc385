"""``why_preempted`` on upstream's tables (TestSelectBestCandidate, TestDryRunPreemption,
TestPostFilter):
the chosen candidate is the one preemption chose, and the criterion reported is
the one that separates it from the runner-up (each table case names it)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.types import Pod
from kubesched.explain.preemption import CRITERIA, why_preempted
from kubesched.framework.preemption import PreemptionOutcome
from kubesched.framework.results import NominatingMode, PostFilterResult
from tests.plugins.preemption_harness import (
    FakeFilter,
    PreemptionHarness,
    ScriptedRandom,
    all_unschedulable,
)
from tests.plugins.test_defaultpreemption import (
    BEST_CASES,
    DRY_RUN_CASES,
    POST_FILTER_CASES,
    VERY_LARGE,
    BestCase,
    DryRunCase,
    PostFilterCase,
    _dry_run_harness,
    node,
)

FIELDS = ("pdbViolations", "highestPriority", "prioritySum", "numVictims", "earliestStartTime")


def better(k: int, a: Any, b: Any) -> bool:
    """``a`` wins over ``b`` on criterion ``k`` (lower counts, later start)."""
    if k < 4:
        return bool(a < b)
    return (a if a is not None else float("-inf")) > (b if b is not None else float("-inf"))


def check_decision(e: dict[str, Any]) -> None:
    """The reported criterion separates the chosen candidate from the runner-up:
    equal on every earlier criterion, strictly better on that one."""
    by_node = {c["node"]: c for c in e["candidates"]}
    chosen = by_node[e["chosen"]]
    decided = e["decidedBy"]
    if decided == "only candidate":
        assert e["candidatesFound"] == 1
        return
    if decided == "random tie-break":
        same = [c for c in e["candidates"] if all(c[f] == chosen[f] for f in FIELDS)]
        assert len(same) == e["tiedCandidates"] >= 2
        return
    k = CRITERIA.index(decided)
    runner = by_node[e["runnerUp"]]
    assert runner is not chosen
    for f in FIELDS[:k]:
        assert chosen[f] == runner[f], (f, chosen, runner)
    assert better(k, chosen[FIELDS[k]], runner[FIELDS[k]])
    assert (e["chosenValue"], e["runnerUpValue"]) == (chosen[FIELDS[k]], runner[FIELDS[k]])


def outcome_of(result: PostFilterResult | None) -> PreemptionOutcome | None:
    """What DefaultPreemption told of its decision (None: no dry run ran)."""
    got = result.explanation if result is not None else None
    assert got is None or isinstance(got, PreemptionOutcome)
    return got


def explain(
    h: PreemptionHarness, preemptor: Pod, result: PostFilterResult | None
) -> dict[str, Any]:
    outcome = outcome_of(result)
    assert outcome is not None
    return why_preempted(outcome, preemptor, h.clock.now())


CRITERION_OF_CASE = {
    "a pod that fits on both nodes": "random tie-break",
    "node with min highest priority": "lowest highest-victim priority",
    "minimum sum of priorities": "smallest priority sum",
    # Upstream's name says "sum are the same": the raw sums are, but upstream adds
    # 2^31 per victim, so the sum already prefers the node with fewer victims.
    "minimum number of pods": "smallest priority sum",
    "sum of adjusted priorities": "smallest priority sum",
    # node2's victim has the highest priority and drops out first; the sum then
    # separates node1 from node3 and node4.
    "non-overlapping lowest high priority": "smallest priority sum",
    # the three cases whose victims differ in start time only where it matters
    "start time": "latest start time",
}


@pytest.mark.parametrize("exact", [True, False], ids=["per-node", "vectorised"])
@pytest.mark.parametrize("case", BEST_CASES)
def test_select_best_candidate_is_explained(
    case: BestCase, exact: bool, request: pytest.FixtureRequest
) -> None:
    nodes = [node(n, VERY_LARGE) for n in case.node_names]
    h = PreemptionHarness(nodes, case.pods, [case.pod], exact=exact, rng=ScriptedRandom([0] * 4))
    result, status = h.preempt(case.pod, all_unschedulable(case.node_names))
    assert status.is_success(), status
    e = explain(h, case.pod, result)
    assert result is not None and result.nominating_info is not None
    assert e["chosen"] == result.nominating_info.node_name
    assert e["chosen"] in case.expected
    check_decision(e)
    case_id = request.node.callspec.id
    [want] = [c for key, c in CRITERION_OF_CASE.items() if key in case_id]
    assert e["decidedBy"] == want
    victims = {c["node"]: c["victims"] for c in e["candidates"]}[e["chosen"]]
    verdicts = {p["pod"]: p["verdict"] for p in e["chosenNodePods"]}
    assert {p for p, v in verdicts.items() if v == "victim"} == set(victims)


@pytest.mark.parametrize("case", POST_FILTER_CASES)
def test_post_filter_is_explained(case: PostFilterCase) -> None:
    h = PreemptionHarness(case.nodes, case.pods, [case.pod], pdbs=case.pdbs)
    result, _ = h.preempt(case.pod, case.statuses)
    outcome = outcome_of(result)
    if outcome is None:
        return  # stopped before the dry run (not eligible, no nodes): the message says why
    e = explain(h, case.pod, result)
    chosen = (
        result.nominating_info.node_name
        if result is not None
        and result.nominating_info is not None
        and result.nominating_info.mode == NominatingMode.OVERRIDE
        else ""
    )
    if chosen:
        assert e["chosen"] == chosen
        check_decision(e)
    else:
        assert "chosen" not in e
    rejected = sum(r["nodes"] for r in e.get("dryRunRejected", []))
    assert rejected + e["candidatesFound"] <= len(case.nodes)
    assert e["candidatesFound"] == len(outcome.candidates)


@pytest.mark.parametrize("case", DRY_RUN_CASES)
def test_dry_run_preemption_is_explained(case: DryRunCase) -> None:
    """The first preemptor of each TestDryRunPreemption case: the explained
    candidates (victims, PDB violations) are the table's."""
    fake = FakeFilter(dict.fromkeys(case.node_names, case.fake_rc))
    h = _dry_run_harness(case, fake, exact=True)
    preemptor = case.test_pods[0]
    result, _ = h.preempt(preemptor, all_unschedulable(case.node_names))
    if outcome_of(result) is None:
        assert not case.expected[0]
        return
    e = explain(h, preemptor, result)
    assert e["candidatesFound"] == len(case.expected[0])
    got = {
        c["node"]: (sorted(v.split("/", 1)[1] for v in c["victims"]), c["pdbViolations"])
        for c in e.get("candidates", [])
    }
    assert got == case.expected[0]
    if got:
        check_decision(e)
