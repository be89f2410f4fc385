"""Small ``kubesched bench`` workloads whose every decision is pinned by a digest.

Each case runs ``kubesched.sim.bench.run`` (what ``kubesched bench`` runs) on an
explicit workload, then writes the run's decisions in
``benchmarks/preemption_perf.py``'s record format (one ``bind`` line per pod that
ever existed, one ``preempt`` line per preemption with its victims, one
``nominated`` line per pod still nominated, one ``event`` line per event with its
message) and hashes them. The stored digests live in
``tests/golden/bench_decisions.json``.

The pod templates are spelled out here rather than taken from ``sim/bench.py``'s
defaults, so the digests pin the scheduler's decisions and not the bench's
choice of template: ``legacy-3cpu`` is upstream's shared
``templates/pod-high-priority.yaml`` (priority 10, 3 CPU, today's bench default)
and ``upstream-3970m`` is ``default_preemption/templates/pod-high-priority.yaml``
(3970m, evicts all four low pods of a node).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.preemption_perf import record_lines

from kubesched.api.types import Container, PodSpec
from kubesched.scheduler.registry import in_tree_registry
from kubesched.sim import bench
from kubesched.sim.simulation import Simulation

STORED = Path(__file__).resolve().parent / "bench_decisions.json"

MI = 2**20


def _pause(cpu_milli: int, grace: int | None = None) -> PodSpec:
    c = Container(
        "pause",
        image="registry.k8s.io/pause:3.10",
        requests={"cpu": cpu_milli, "memory": 500 * MI},
    )
    return PodSpec(containers=(c,), termination_grace_period_seconds=grace)


# (spec, priority), as upstream's scheduler_perf templates.
DEFAULT = (_pause(100), 0)
LOW = (_pause(900, grace=0), 0)
HIGH_3CPU = (_pause(3000), 10)
HIGH_3970M = (_pause(3970, grace=0), 10000)
HIGH_LARGE_CPU = (_pause(9000), 10)


@dataclass(frozen=True, slots=True)
class BenchCase:
    id: str
    workload: bench.Workload
    exact_too: bool
    """Also run with ``--exact`` (per-node paths only, ~7x slower) and require the
    same digest; kept to the cheaper cases to hold the module under ~20 s."""
    feature_gates: Mapping[str, bool] = field(default_factory=dict)


def _wl(
    name: str,
    nodes: int,
    init: int,
    pods: int,
    init_t: tuple[PodSpec, int],
    measured_t: tuple[PodSpec, int],
    churn: tuple[PodSpec, int] | None = None,
) -> bench.Workload:
    return bench.Workload(name, nodes, init, pods, init_t, measured_t, churn)


ASYNC_OFF = {"SchedulerAsyncPreemption": False}

CASES: tuple[BenchCase, ...] = (
    BenchCase(
        "SchedulingBasic 200/200/400", _wl("SchedulingBasic", 200, 200, 400, DEFAULT, DEFAULT), True
    ),
    BenchCase(
        "PreemptionBasic 100/400/100 legacy-3cpu",
        _wl("PreemptionBasic", 100, 400, 100, LOW, HIGH_3CPU),
        True,
    ),
    BenchCase(
        "PreemptionBasic 100/400/100 upstream-3970m",
        _wl("PreemptionBasic", 100, 400, 100, LOW, HIGH_3970M),
        True,
    ),
    BenchCase(
        "PreemptionBasic 100/400/100 legacy-3cpu SchedulerAsyncPreemption=false",
        _wl("PreemptionBasic", 100, 400, 100, LOW, HIGH_3CPU),
        False,
        ASYNC_OFF,
    ),
    BenchCase(
        "PreemptionBasic 50/200/100 legacy-3cpu overloaded",
        _wl("PreemptionBasic", 50, 200, 100, LOW, HIGH_3CPU),
        True,
    ),
    BenchCase(
        "PreemptionAsync 100/400/300 legacy-3cpu",
        _wl("PreemptionAsync", 100, 400, 300, LOW, DEFAULT, HIGH_3CPU),
        True,
    ),
    BenchCase(
        "PreemptionAsync 200/800/600 legacy-3cpu",
        _wl("PreemptionAsync", 200, 800, 600, LOW, DEFAULT, HIGH_3CPU),
        False,
    ),
    BenchCase(
        "PreemptionAsync 200/800/600 upstream-3970m",
        _wl("PreemptionAsync", 200, 800, 600, LOW, DEFAULT, HIGH_3970M),
        False,
    ),
    BenchCase(
        "PreemptionAsync 200/800/600 legacy-3cpu SchedulerAsyncPreemption=false",
        _wl("PreemptionAsync", 200, 800, 600, LOW, DEFAULT, HIGH_3CPU),
        False,
        ASYNC_OFF,
    ),
    BenchCase(
        "Unschedulable 100/400/300",
        _wl("Unschedulable", 100, 400, 300, DEFAULT, DEFAULT, HIGH_LARGE_CPU),
        True,
    ),
    BenchCase(
        "Unschedulable 200/800/800",
        _wl("Unschedulable", 200, 800, 800, DEFAULT, DEFAULT, HIGH_LARGE_CPU),
        False,
    ),
)


@contextmanager
def _recording(feature_gates: Mapping[str, bool]) -> Iterator[list[Simulation]]:
    """Make ``bench.run`` build a Simulation we keep hold of (to read its cluster
    afterwards, as ``benchmarks/preemption_perf.py`` does) and, when asked, the
    in-tree registry with the given feature gates."""
    kept: list[Simulation] = []

    class Kept(Simulation):
        def __post_init__(self) -> None:
            super().__post_init__()
            kept.append(self)

    original_sim, original_registry = bench.Simulation, bench.in_tree_registry
    bench.Simulation = Kept  # type: ignore[misc]
    bench.in_tree_registry = lambda: in_tree_registry(feature_gates)  # type: ignore[assignment]
    try:
        yield kept
    finally:
        bench.Simulation = original_sim  # type: ignore[misc]
        bench.in_tree_registry = original_registry  # type: ignore[assignment]


def decisions(case: BenchCase, *, exact: bool) -> list[str]:
    """Every decision of one run, as preemption_perf's record lines."""
    with _recording(case.feature_gates) as kept:
        bench.run(case.workload, seed=0, per_node=exact)
    return record_lines(kept[-1])


def digest(lines: list[str]) -> dict[str, Any]:
    """sha256 of the record text (as ``--record`` writes it) and the line count of
    each kind (bind, preempt, nominated, event), which tells where a changed digest
    changed."""
    text = "\n".join(lines) + "\n"
    kinds = Counter(line.split(" ", 1)[0] for line in lines)
    return {
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
        "lines": dict(sorted(kinds.items())),
    }
