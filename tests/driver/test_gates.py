"""``--assert`` gates (driver/gates.py): the expression form, what each
quantity counts (checked against a direct count on random results), and the
CLI's exit 3 with the output complete."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.cli.main import main
from kubesched.driver.gates import OPS, GateError, check, measure, parse
from tests.hypothesis_profiles import scaled

SEED = Path(__file__).resolve().parents[2] / "examples" / "preemption" / "seed-nginx.yaml"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("pending", "expected QUANTITY OP VALUE"),
        ("pendin == 0", 'unknown quantity "pendin"'),
        ("pending() == 0", "empty filter list"),
        ("pending(prio>=1) == 0", 'unknown filter "prio"'),
        ("pending(priority>=high) == 0", 'filter priority: "high" is not an integer'),
        ("pending(class<a) == 0", "filter class: only = and != apply"),
        ("pending == lots", '"lots" is not a number'),
        ("pending == inf", '"inf" is not a finite number'),
        ("delay.p99 <= soon", '"delay.p99 <= soon":'),
    ],
)
def test_malformed_expressions_name_what_is_wrong(text: str, error: str) -> None:
    with pytest.raises(GateError) as err:
        parse(text)
    assert error in str(err.value)


def test_the_forms() -> None:
    g = parse(" pending ( priority >= 1000 , class=high ) == 0 ")
    assert (g.name, g.op, g.value) == ("pending", "==", 0.0)
    assert [(f.key, f.op, f.value) for f in g.filters] == [
        ("priority", ">=", 1000),
        ("class", "==", "high"),
    ]
    assert parse("delay.p99 <= 1m30s").value == 90.0
    assert parse("delay.max < 2.5").value == 2.5


PODS = st.fixed_dictionaries(
    {
        "namespace": st.sampled_from(["default", "batch"]),
        "name": st.text("abc", min_size=1, max_size=3),
        "priority": st.integers(-5, 2000),
        "priorityClassName": st.sampled_from([None, "high", "low"]),
        "phase": st.sampled_from(["Pending", "Running", "Succeeded"]),
        "createdAt": st.integers(0, 100).map(float),
        "delay": st.one_of(st.none(), st.integers(0, 50).map(float)),
        "deleted": st.sampled_from([None, "Preempted", "Deleted"]),
    }
)


def _doc(raw: list[dict[str, Any]]) -> dict[str, Any]:
    pods = []
    for i, r in enumerate(raw):
        pods.append(
            {
                "namespace": r["namespace"],
                "name": f"{r['name']}-{i}",
                "priority": r["priority"],
                "priorityClassName": r["priorityClassName"],
                "phase": r["phase"],
                "createdAt": r["createdAt"],
                "scheduledAt": None if r["delay"] is None else r["createdAt"] + r["delay"],
                "deletedAt": None if r["deleted"] is None else 200.0,
                "deletionReason": r["deleted"],
            }
        )
    preemptions = [
        {"preemptor": f"{p['namespace']}/{p['name']}"} for p in pods if p["priority"] > 1000
    ]
    return {"pods": pods, "preemptions": preemptions}


@settings(max_examples=scaled(200), deadline=None)
@given(
    raw=st.lists(PODS, max_size=12),
    threshold=st.integers(-5, 2000),
    op=st.sampled_from(sorted(OPS)),
    value=st.integers(0, 12),
)
def test_counts_agree_with_a_direct_count(
    raw: list[dict[str, Any]], threshold: int, op: str, value: int
) -> None:
    doc = _doc(raw)
    chosen = [p for p in doc["pods"] if p["priority"] >= threshold]
    want = {
        "pending": sum(p["phase"] == "Pending" and p["deletedAt"] is None for p in chosen),
        "running": sum(p["phase"] == "Running" and p["deletedAt"] is None for p in chosen),
        "scheduled": sum(p["scheduledAt"] is not None for p in chosen),
        "preempted": sum(p["deletionReason"] == "Preempted" for p in chosen),
        "pods": len(chosen),
        "preemptions": sum(p["priority"] > 1000 for p in chosen),
    }
    delays = sorted(
        p["scheduledAt"] - p["createdAt"] for p in chosen if p["scheduledAt"] is not None
    )
    for name, q in (("delay.p50", 0.5), ("delay.max", 1.0)):
        want[name] = delays[max(1, math.ceil(q * len(delays))) - 1] if delays else 0.0
    for name, n in want.items():
        gate = parse(f"{name}(priority>={threshold}) {op} {value}")
        got, _ = measure(doc, gate)
        assert got == n, name
        assert bool(check(doc, [gate])) == (not OPS[op](n, value))


def run(*args: str) -> Any:
    return CliRunner().invoke(main, ["simulate", "-f", str(SEED), *args])


def test_violations_exit_3_after_the_complete_output() -> None:
    r = run(
        "-o",
        "json",
        "--assert",
        "pending(priority>=1000) == 0",
        "--assert",
        "pending == 0",
        "--assert",
        "delay.p99 <= 10s",
        "--assert",
        "preemptions(class=high-priority) <= 1",
    )
    assert r.exit_code == 3
    doc = json.loads(r.stdout)  # the document is complete
    assert doc["kind"] == "SimulationResult"
    [pending] = [p for p in doc["pods"] if p["phase"] == "Pending"]
    assert r.stderr.splitlines() == [
        f"assertion failed: pending == 0: got 1 (default/{pending['name']})",
        "assertion failed: delay.p99 <= 10s: got 30s",
    ]


def test_gates_that_hold_exit_0_and_bad_ones_exit_2() -> None:
    ok = run("--assert", "preempted == 1", "--assert", "delay.max <= 30s")
    assert ok.exit_code == 0, ok.output
    bad = run("--assert", "pending(class<x) == 0")
    assert bad.exit_code == 2
    assert bad.stderr.strip() == (
        'error: --assert "pending(class<x) == 0": filter class: only = and != apply'
    )
    assert bad.stdout == ""
