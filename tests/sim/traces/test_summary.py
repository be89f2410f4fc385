"""The replay summary (sim/traces/summary.py) of a small run whose every number can
be worked out by hand.

The run: node ``n`` (4 CPU, 1 GPU, model T4).
- ``be-1`` (BE, 1 CPU, 1 GPU) created at 0 runs at once (run-for 100s);
- ``ls-1`` (LS, 1 CPU, 1 GPU) created at 10 finds the GPU taken and preempts
  ``be-1``, which keeps the GPU for its 30s grace period: ``ls-1`` binds at 40
  (delay 30s) and runs 50s, until 90;
- ``be-2`` (BE) asks for an A100 no node has, and gives up at 200 (delete-at);
- ``ls-2`` (LS) asks for an A100 too and is still pending at the end. Its last
  attempt was at 30; ``ls-1``'s completion at 90 is a cluster change its hints
  skip, so upstream's 5-minute leftover flush retries it at the first 30 s tick
  after 330: the run ends at 360, when that retry has seen the last change.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubesched.api.duration import SECOND
from kubesched.sim.scenario import Run, run_scenario
from kubesched.sim.traces import ImportOptions, load_trace
from kubesched.sim.traces.replay import build_scenario, horizon
from kubesched.sim.traces.summary import percentile, render_summary, summarize_run
from tests.sim.traces.data import node_row, pod_row, write_trace


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    tmp = tmp_path_factory.mktemp("summary")
    paths = write_trace(
        tmp,
        [node_row("n", cpu=4000, gpu=1, model="T4")],
        [
            pod_row("be-1", qos="BE", num_gpu=1, created=0, deleted=100),
            pod_row("ls-1", qos="LS", num_gpu=1, created=10, deleted=60),
            pod_row(
                "be-2", qos="BE", num_gpu=1, gpu_spec="A100", created=20, scheduled="", deleted=200
            ),
            pod_row("ls-2", qos="LS", num_gpu=1, gpu_spec="A100", created=30, scheduled=""),
        ],
    )
    trace = load_trace("openb", paths, ImportOptions())
    return run_scenario(build_scenario(trace), horizon=horizon(trace))


@pytest.fixture(scope="module")
def summary(run: Run) -> dict[str, Any]:
    return summarize_run(run, interval=10 * SECOND)


def test_tiers(summary: dict[str, Any]) -> None:
    assert summary["simulatedSeconds"] == 360
    assert list(summary["tiers"]) == ["openb-ls", "openb-be"]  # highest priority first
    assert summary["tiers"]["openb-ls"] == {
        "priority": 10000,
        "pods": 2,
        "scheduled": 1,
        "pendingAtEnd": 1,
        "deletedWhilePending": 0,
        "preemptions": 1,
        "victims": 0,
        "schedulingDelaySeconds": {
            "p50": 30.0,
            "p90": 30.0,
            "p99": 30.0,
            "mean": 30.0,
            "max": 30.0,
        },
    }
    assert summary["tiers"]["openb-be"] == {
        "priority": 4000,
        "pods": 2,
        "scheduled": 1,
        "pendingAtEnd": 0,
        "deletedWhilePending": 1,
        "preemptions": 0,
        "victims": 1,
        "schedulingDelaySeconds": {"p50": 0.0, "p90": 0.0, "p99": 0.0, "mean": 0.0, "max": 0.0},
    }
    total = summary["total"]
    assert (total["pods"], total["scheduled"], total["preemptions"], total["victims"]) == (
        4,
        2,
        1,
        1,
    )
    # delays [0, 30]: nearest rank p50 is the 1st value, p90 the 2nd.
    assert total["schedulingDelaySeconds"] == {
        "p50": 0.0,
        "p90": 30.0,
        "p99": 30.0,
        "mean": 15.0,
        "max": 30.0,
    }


def test_allocation_over_time(summary: dict[str, Any]) -> None:
    alloc = summary["allocation"]
    assert alloc["intervalSeconds"] == 10
    assert alloc["times"] == [10.0 * i for i in range(37)]
    # be-1 holds a GPU on [0, 40) (until its grace period ends), ls-1 on [40, 90).
    gpu = alloc["nvidia.com/gpu"]
    assert gpu["total"] == 1
    assert gpu["allocated"] == [1] * 9 + [0] * 28
    assert gpu["ratio"] == [1.0] * 9 + [0.0] * 28
    cpu = alloc["cpu"]
    assert cpu["total"] == 4000
    assert cpu["allocated"] == [1000] * 9 + [0] * 28
    assert cpu["ratio"] == [0.25] * 9 + [0.0] * 28


def test_summary_is_json_and_deterministic(run: Run, summary: dict[str, Any]) -> None:
    assert json.loads(json.dumps(summary)) == summary
    assert summarize_run(run, interval=10 * SECOND) == summary


def test_text_rendering(summary: dict[str, Any]) -> None:
    text = render_summary(summary)
    lines = text.splitlines()
    assert lines[0].split() == [
        "TIER",
        "PRIORITY",
        "PODS",
        "SCHEDULED",
        "PENDING",
        "WITHDRAWN",
        "PREEMPTIONS",
        "VICTIMS",
        "DELAY",
        "P50",
        "P90",
        "P99",
        "MAX",
    ]
    assert lines[1].split() == [
        "openb-ls",
        "10000",
        "2",
        "1",
        "1",
        "0",
        "1",
        "0",
        "30s",
        "30s",
        "30s",
        "30s",
    ]
    assert lines[2].split() == [
        "openb-be",
        "4000",
        "2",
        "1",
        "0",
        "1",
        "0",
        "1",
        "0s",
        "0s",
        "0s",
        "0s",
    ]
    assert lines[3].split() == ["total", "4", "2", "1", "1", "1", "1", "0s", "30s", "30s", "30s"]
    assert lines[4] == (
        "cpu: allocated mean 6.1%, peak 25.0% at 0s, at end 0.0% (total 4000, 37 samples every 10s)"
    )
    assert lines[5].startswith("nvidia.com/gpu: allocated mean 24.3%, peak 100.0% at 0s")


@pytest.mark.parametrize(
    ("values", "p", "expected"),
    [
        pytest.param([5.0], 50, 5.0, id="one value is every percentile"),
        pytest.param([1.0, 2.0, 3.0, 4.0], 50, 2.0, id="p50 of four is the 2nd"),
        pytest.param([1.0, 2.0, 3.0, 4.0], 90, 4.0, id="p90 of four is the 4th"),
        pytest.param([float(i) for i in range(1, 101)], 99, 99.0, id="p99 of 1..100 is 99"),
        pytest.param([float(i) for i in range(1, 101)], 0, 1.0, id="p0 is the minimum"),
    ],
)
def test_nearest_rank_percentile(values: list[float], p: float, expected: float) -> None:
    assert percentile(values, p) == expected


def test_empty_run_has_no_delays(tmp_path: Path) -> None:
    paths = write_trace(
        tmp_path, [node_row("n")], [pod_row("x", gpu_spec="A100", num_gpu=1, scheduled="")]
    )
    trace = load_trace("openb", paths, ImportOptions())
    s = summarize_run(run_scenario(build_scenario(trace), horizon=horizon(trace)))
    assert s["total"]["schedulingDelaySeconds"] is None
    assert s["total"]["pendingAtEnd"] == 1
    assert s["allocation"]["nvidia.com/gpu"]["total"] == 0
    assert "-" in render_summary(s).splitlines()[1]
