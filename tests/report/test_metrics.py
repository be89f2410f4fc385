"""``report.metrics.run_metrics`` against the document it reads, on the examples."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from kubesched.api.quantity import parse_quantity
from kubesched.report.metrics import run_metrics
from kubesched.sim.runspec import RunSpec, result_document

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(
    "example", ["preemption/seed-nginx.yaml", "preemption/pdb-steering.yaml", "basic.yaml"]
)
def test_metrics_add_up(example: str) -> None:
    doc = result_document(RunSpec(files=(str(EXAMPLES / example),)), nodes=True)
    m = run_metrics(doc)
    pods = doc["pods"]
    assert m["pods"] == len(pods)
    assert m["pending"] == sum(p["phase"] == "Pending" and p["deletedAt"] is None for p in pods)
    assert m["victims"] == sum(p["deletionReason"] == "Preempted" for p in pods)
    assert m["preemptions"] == len(doc["preemptions"])
    classes = {p["priorityClassName"] or "" for p in pods}
    for name in ("scheduled", "pending"):
        assert sum(m[f"{name}(class={c})"] for c in classes) == m[name]
    delays = sorted(p["scheduledAt"] - p["createdAt"] for p in pods if p["scheduledAt"] is not None)
    assert m["delay.p99"] == delays[math.ceil(0.99 * len(delays)) - 1]
    assert m["delay.p50"] == delays[math.ceil(0.5 * len(delays)) - 1]
    cpu = sum(float(parse_quantity(n["allocatable"]["cpu"])) for n in doc["nodes"])
    bound = sum(
        float(parse_quantity(p["requests"].get("cpu", "0")))
        for p in pods
        if p["nodeName"] and p["phase"] == "Running" and p["deletedAt"] is None
    )
    assert m["utilisation.cpu"] == pytest.approx(100 * bound / cpu)
    running = sum(
        bool(p["nodeName"]) and p["phase"] == "Running" and p["deletedAt"] is None for p in pods
    )
    slots = sum(int(n["allocatable"]["pods"]) for n in doc["nodes"])
    assert m["utilisation.pods"] == pytest.approx(100 * running / slots)
    assert [k for k in m if k.startswith("utilisation.")][:2] == [
        "utilisation.cpu",
        "utilisation.memory",
    ]


def test_no_nodes_no_utilisation() -> None:
    doc = result_document(RunSpec(files=(str(EXAMPLES / "preemption/seed-nginx.yaml"),)))
    assert not any(k.startswith("utilisation.") for k in run_metrics(doc))
