"""The explanations match the decisions actually taken, on random clusters.

Each world of ``tests/runtime/paths_world`` is scheduled end to end with the
``ExplanationRecorder`` attached; then, for every pod:

- recording changes nothing: the document without ``explanations`` equals the
  run without the recorder;
- one attempt per ``Scheduled`` / ``FailedScheduling`` event, in the same
  order, with the event's message and node; the queue timeline has a move
  into activeQ before each attempt and a requeue after each failed one;
- a failed attempt's groups add up to the FitError message's histogram (the
  numbers before each reason), the dominant reason is a largest group, and
  each group names min(3, its nodes) of the world's nodes;
- a nomination is the node of the preemption recorded at that moment, the
  explained candidate's victims and PDB violations are that preemption's, and
  the criterion reported separates the chosen candidate from the runner-up.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kubesched.framework.config import Profile
from tests.explain.test_preemption import check_decision
from tests.hypothesis_profiles import scaled
from tests.runtime.paths_world import World, guard_world, profiles, run_world, worlds
from tests.scheduler.harness import in_tree_profile

ASSIGNED = re.compile(r"^Successfully assigned (\S+) to (\S+)$")


def test_explanations_match_the_decisions() -> None:
    seen: Counter[str] = Counter()

    @settings(
        max_examples=scaled(60),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(world=worlds(), prof=profiles(), seed=st.integers(0, 3))
    @example(world=guard_world(), prof=in_tree_profile(), seed=0)
    def check(world: World, prof: Profile, seed: int) -> None:
        doc = run_world(world, prof, seed, exact=False, explain=True)
        explanations = doc.pop("explanations")
        assert doc == run_world(world, prof, seed, exact=False)
        check_document(doc, explanations, {n.name for n in world.nodes}, seen)

    check()
    for what in (
        "scheduled",
        "failed",
        "nominated",
        "sampled",
        "queue active",
        "queue unschedulable",
    ):
        assert seen[what], f"no run had a {what} attempt"
    decided = [k for k in seen if k.startswith("decided by") and k != "decided by only candidate"]
    assert decided, f"no preemption had two candidates: {seen}"


def check_document(
    doc: dict[str, Any], explanations: list[dict[str, Any]], nodes: set[str], seen: Counter[str]
) -> None:
    attempts: dict[str, list[dict[str, Any]]] = {}
    for e in explanations:
        key = f"{e['namespace']}/{e['name']}"
        assert key not in attempts  # the worlds' pod names are unique
        assert e["attempts"] == len(e["history"])  # few attempts: all kept
        attempts[key] = e["history"]
        check_queue(e, seen)
    events: dict[str, list[dict[str, Any]]] = {}
    for ev in doc["events"]:
        if ev["reason"] in ("Scheduled", "FailedScheduling"):
            events.setdefault(ev["object"], []).append(ev)
    assert set(events) == set(attempts)
    for pod, history in attempts.items():
        evs = events[pod]
        assert len(evs) == len(history), pod
        for i, (a, ev) in enumerate(zip(history, evs, strict=True)):
            assert a["attempt"] == i + 1
            assert a["time"] == ev["time"]
            if a["result"] == "Scheduled":
                seen["scheduled"] += 1
                assert ev["reason"] == "Scheduled"
                m = ASSIGNED.match(ev["message"])
                assert m is not None and m.group(1) == pod and m.group(2) == a["node"]
                assert 1 <= a["feasibleNodes"] <= a["evaluatedNodes"]
            else:
                assert ev["reason"] == "FailedScheduling"
                assert a["message"][:1000] == ev["message"][:1000]
                check_failed(a, nodes, seen)
                if "nominatedNode" in a:
                    seen["nominated"] += 1
                    [record] = [
                        p
                        for p in doc["preemptions"]
                        if p["preemptor"] == pod and p["time"] == a["time"]
                    ]
                    assert record["node"] == a["nominatedNode"]
                    check_preemption(a["preemption"], record, seen)


def check_queue(e: dict[str, Any], seen: Counter[str]) -> None:
    """The queue timeline agrees with the attempts: a move into activeQ before
    each attempt, one ScheduleAttemptFailure requeue after each failed one, in
    time order."""
    moves = e["queue"]
    assert e["queueMoves"] == len(moves)
    times = [m["time"] for m in moves]
    assert times == sorted(times)
    failed = sum(a["result"] != "Scheduled" for a in e["history"])
    assert sum(m["queue"] == "active" for m in moves) >= e["attempts"]
    assert sum(m["event"] == "ScheduleAttemptFailure" for m in moves) == failed
    for prev, m in zip([None, *moves], moves, strict=False):
        assert ("waitingFor" in m) == (m["queue"] in ("unschedulable", "gated"))
        seen[f"queue {m['queue']}"] += 1
        if "hint" in m:
            seen["hint"] += 1
            # a rejector's hint moved it: one the pod was waiting for
            if prev is not None and "waitingFor" in prev:
                assert m["hint"] in prev["waitingFor"]


def check_preemption(e: dict[str, Any], record: dict[str, Any], seen: Counter[str]) -> None:
    """The explained choice is the preemption that happened, and its criterion
    separates the chosen candidate from the runner-up."""
    assert e["chosen"] == record["node"]
    [chosen] = [c for c in e["candidates"] if c["node"] == e["chosen"]]
    assert sorted(chosen["victims"]) == record["victims"]
    assert chosen["pdbViolations"] == record["numPDBViolations"]
    victims = {p["pod"] for p in e["chosenNodePods"] if p["verdict"] == "victim"}
    assert victims == set(record["victims"])
    violating = [
        p for p in e["chosenNodePods"] if p["verdict"] == "victim" and p.get("violatesPDB")
    ]
    assert len(violating) == record["numPDBViolations"]
    seen["pdb violation"] += len(violating)
    check_decision(e)
    seen[f"decided by {e['decidedBy']}"] += 1


def check_failed(a: dict[str, Any], nodes: set[str], seen: Counter[str]) -> None:
    if "reasons" not in a:
        return  # not a FitError (an error, or a rejection outside Filter)
    seen["failed"] += 1
    assert a["otherReasons"] == 0  # the worlds have few reasons
    n = a["numAllNodes"]
    if "preFilter" not in a:
        hist = Counter[str]()
        for g in a["reasons"]:
            hist[g["reason"]] += g["nodes"]
        want = sorted(f"{c} {r}" for r, c in hist.items())
        prefix = f"0/{n} nodes are available: " + ", ".join(want) + "."
        assert a["message"].startswith(prefix), (a["message"], prefix)
    if a["reasons"]:
        top = max(g["nodes"] for g in a["reasons"])
        assert a["dominantReason"] in {g["reason"] for g in a["reasons"] if g["nodes"] == top}
    for g in a["reasons"]:
        assert len(g["sampleNodes"]) == min(3, g["nodes"])
        assert set(g["sampleNodes"]) <= nodes
        seen["sampled"] += bool(g["sampleNodes"])
    assert a["preemptionMayHelp"] + a["preemptionCannotHelp"] <= n
