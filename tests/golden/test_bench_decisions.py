"""Every decision of small bench workloads equals the stored digest.

The examples have at most a dozen nodes, so most of their scans are short and the
vectorised fast paths are barely exercised; these runs (50-200 nodes, all four
upstream workloads, both preemptor templates, asynchronous preemption on and off)
go through the batched filter, what-if and dry-run paths thousands of times. Each
run's decisions (pod -> node, preemptions with victims, nominations, every event
message) must hash to the stored digest, generated from main e70a884 and
regenerated only on purpose (``scripts/regenerate-golden --overwrite``).

Next to the digest each run checks what upstream's rules fix whatever the digest
(so a wrong digest cannot be stored unnoticed), derived from the templates in
``bench_cases.py`` (nodes 4 CPU / 32Gi / 110 pods):

- low pods are 900m, so exactly 4 fit a node (3600m; a 5th would need 4500m);
- PreemptionBasic: a 3-CPU preemptor fits next to k low pods when
  3000 + 900k <= 4000, so it evicts 3 of the node's 4; a 3970m one needs k = 0,
  so it evicts all 4; every victim is a low (init) pod;
- PreemptionAsync: the measured 100m pods have priority 0 too and fill the
  400m left on a node, so they can be victims as well; a node has at most 400m
  free, so a 3-CPU preemptor frees at least 2600m (3 pods or more: two free at
  most 1800m) and a 3970m one at least 3570m (4 pods or more); never a churn pod;
- a node holding (or nominated for) a preemptor has no room for a second one
  (3000 + 3000 > 4000) and equal priority is never preempted, so no two
  preemptions share a node;
- a 9-CPU pod fits no 4-CPU node, and no eviction can make it fit: it is never
  bound and never preempts (upstream's Unschedulable workload).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.golden.bench_cases import CASES, HIGH_3970M, STORED, BenchCase, decisions, digest

WANT: dict[str, Any] = json.loads(STORED.read_text())

PARAMS = [
    pytest.param(case, exact, id=f"{case.id}{' --exact' if exact else ''}")
    for case in CASES
    for exact in ([False, True] if case.exact_too else [False])
]


def _bound(lines: list[str]) -> dict[str, str]:
    """pod key -> node ('-' when never bound), from the ``bind`` lines."""
    out = {}
    for line in lines:
        if line.startswith("bind "):
            _, key, node, *_ = line.split(" ")
            out[key] = node.removeprefix("node=")
    return out


def _preemptions(lines: list[str]) -> list[tuple[str, str, list[str]]]:
    """(preemptor, node, victims) of every ``preempt`` line."""
    out = []
    for line in lines:
        if line.startswith("preempt "):
            _, _, preemptor, _, node, victims, _ = line.split(" ")
            out.append((preemptor, node, victims.removeprefix("victims=").split(",")))
    return out


def check_upstream_rules(case: BenchCase, lines: list[str]) -> None:
    wl = case.workload
    bound = _bound(lines)
    measured = [k for k in bound if k.startswith("default/measured-")]
    churn = [k for k in bound if k.startswith("default/churn-")]
    preemptions = _preemptions(lines)
    assert len(measured) == wl.measured_pods
    assert sum(bound[k] != "-" for k in bound if k.startswith("default/init-")) == wl.init_pods

    nodes = [node for _, node, _ in preemptions]
    assert len(nodes) == len(set(nodes)), "two preemptions on one node"
    high = wl.churn if wl.name == "PreemptionAsync" else wl.measured_template
    least = 4 if high == HIGH_3970M else 3
    for preemptor, _, victims in preemptions:
        if wl.name == "PreemptionBasic":
            assert len(victims) == least, preemptor
            assert all(v.startswith("default/init-") for v in victims), preemptor
        else:
            assert len(victims) >= least, preemptor
            assert not any(v.startswith("default/churn-") for v in victims), preemptor

    if wl.name == "SchedulingBasic":
        assert not preemptions
        assert all(bound[k] != "-" for k in measured)
    elif wl.name == "PreemptionBasic":
        # One preemptor per node at most: with more preemptors than nodes, the
        # rest stay pending.
        placed = min(wl.measured_pods, wl.nodes)
        assert len(preemptions) == placed
        assert sum(bound[k] != "-" for k in measured) == placed
        assert {p for p, _, _ in preemptions} <= set(measured)
    elif wl.name == "PreemptionAsync":
        assert preemptions, "the churn pods must preempt"
        assert {p for p, _, _ in preemptions} <= set(churn)
        assert all(bound[k] != "-" for k in measured)
    else:  # Unschedulable
        assert not preemptions
        assert churn and all(bound[k] == "-" for k in churn)
        assert all(bound[k] != "-" for k in measured)


@pytest.mark.parametrize(("case", "exact"), PARAMS)
def test_decisions_equal_the_stored_digest(case: BenchCase, exact: bool) -> None:
    lines = decisions(case, exact=exact)
    check_upstream_rules(case, lines)
    assert digest(lines) == WANT[case.id], (
        f"{case.id}: decisions differ from tests/golden/bench_decisions.json "
        "(the line counts tell which kind changed; write both runs' records with "
        "scripts/regenerate-golden --records DIR in each tree and diff them)"
    )


def test_every_case_has_a_stored_digest() -> None:
    assert sorted(WANT) == sorted(c.id for c in CASES)
