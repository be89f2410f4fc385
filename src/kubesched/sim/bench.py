"""``kubesched bench``: upstream scheduler_perf workloads on the simulated cluster.

Templates and workloads are upstream's (test/integration/scheduler_perf/:
``templates/node-default.yaml``, ``pod-default.yaml``, ``pod-low-priority.yaml``,
``pod-high-priority-large-cpu.yaml``; ``default_preemption/`` and ``misc/``
``performance-config.yaml``), as the constants and ``WORKLOADS`` below spell out.
``preemptor_template`` chooses PreemptionBasic's and PreemptionAsync's preemptor:
``default-preemption`` (``default_preemption/templates/pod-high-priority.yaml`` at
kubernetes/kubernetes 121460defea7: 3970m, evicting all four low pods of a node)
or ``legacy-3cpu`` (``templates/pod-high-priority.yaml``: 3 CPU, evicting three).
Churn pods arrive every 200 ms of simulated time during the measured phase.

A run has an init phase (not measured) and a measured phase: measured pods are
created at once and the phase ends when all are scheduled (or nothing is left
to do). ``throughput`` = measured pods scheduled / wall seconds of the measured
phase, as upstream's SchedulingThroughput average. For the churn workloads each
scheduling cycle costs ``CYCLE_COST`` of simulated time, so that arrivals paced
in simulated time interleave with scheduling as on a real scheduler.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from kubesched.api.types import NANOS, Container, Node, Pod, PodSpec
from kubesched.explain.recorder import ExplanationRecorder
from kubesched.scheduler.config import default_config
from kubesched.scheduler.registry import in_tree_registry
from kubesched.sim.simulation import Simulation

MI: Final = 2**20
GI: Final = 2**30
CHURN_INTERVAL: Final = NANOS // 5
"""200 ms: upstream's churn interval for PreemptionAsync and Unschedulable."""
CYCLE_COST: Final = NANOS // 1000
"""1 ms of simulated time per scheduling cycle in the churn workloads."""

PAUSE: Final = "registry.k8s.io/pause:3.10"
PAUSE_3_10_2: Final = "registry.k8s.io/pause:3.10.2"


def _pause(cpu_milli: int, memory: int, grace: int | None = None, image: str = PAUSE) -> PodSpec:
    c = Container("pause", image=image, requests={"cpu": cpu_milli, "memory": memory})
    return PodSpec(containers=(c,), termination_grace_period_seconds=grace)


Template = tuple[PodSpec, int]
"""A pod template: its spec and its priority."""

POD_DEFAULT: Final = _pause(100, 500 * MI)
POD_LOW_PRIORITY: Final = _pause(900, 500 * MI, grace=0)
POD_HIGH_PRIORITY_LARGE_CPU: Final = _pause(9000, 500 * MI)
POD_HIGH_PRIORITY: Final = _pause(3970, 500 * MI, grace=0, image=PAUSE_3_10_2)
"""default_preemption/templates/pod-high-priority.yaml (limits = requests: only
requests count for scheduling)."""
POD_HIGH_PRIORITY_LEGACY: Final = _pause(3000, 500 * MI)
"""templates/pod-high-priority.yaml as kubesched ran it until the default changed."""

DEFAULT_PREEMPTOR: Final = "default-preemption"
LEGACY_PREEMPTOR: Final = "legacy-3cpu"
PREEMPTOR_TEMPLATES: Final[dict[str, Template]] = {
    DEFAULT_PREEMPTOR: (POD_HIGH_PRIORITY, 10000),
    LEGACY_PREEMPTOR: (POD_HIGH_PRIORITY_LEGACY, 10),
}
PREEMPTOR: Final = "preemptor"
"""In ``WORKLOADS``: the place of the preemptor template."""


@dataclass(frozen=True, slots=True)
class Workload:
    name: str
    nodes: int
    init_pods: int
    measured_pods: int
    init_template: Template
    measured_template: Template
    churn: Template | None = None
    preemptor_template: str | None = None
    """The preemptor template's name (None: the workload has no preemptor)."""


_Slot = Template | str
# name -> (init template, measured template, churn template, default sizes of the
# upstream 5000Nodes variant); PREEMPTOR marks where the preemptor template goes.
WORKLOADS: Final[dict[str, tuple[_Slot, _Slot, _Slot | None, tuple[int, int, int]]]] = {
    "SchedulingBasic": ((POD_DEFAULT, 0), (POD_DEFAULT, 0), None, (5000, 1000, 1000)),
    "PreemptionBasic": ((POD_LOW_PRIORITY, 0), PREEMPTOR, None, (5000, 20000, 5000)),
    "PreemptionAsync": ((POD_LOW_PRIORITY, 0), (POD_DEFAULT, 0), PREEMPTOR, (5000, 20000, 5000)),
    "Unschedulable": (
        (POD_DEFAULT, 0),
        (POD_DEFAULT, 0),
        (POD_HIGH_PRIORITY_LARGE_CPU, 10),
        (5000, 100, 1000),
    ),
}


def has_preemptor(name: str) -> bool:
    """The workload's pods include the preemptor template."""
    return PREEMPTOR in WORKLOADS[name][:3]


def workload(
    name: str,
    nodes: int | None = None,
    init_pods: int | None = None,
    pods: int | None = None,
    preemptor_template: str | None = None,
) -> Workload:
    """A workload by upstream name, with the 5000Nodes variant's sizes as defaults and
    ``DEFAULT_PREEMPTOR`` unless ``preemptor_template`` names another (ValueError for a
    workload without a preemptor, or an unknown name)."""
    try:
        init_t, measured_t, churn, (dn, di, dp) = WORKLOADS[name]
    except KeyError:
        known = ", ".join(WORKLOADS)
        raise ValueError(f"unknown workload {name!r} (known: {known})") from None
    chosen: str | None = None
    if has_preemptor(name):
        chosen = DEFAULT_PREEMPTOR if preemptor_template is None else preemptor_template
        if chosen not in PREEMPTOR_TEMPLATES:
            known = ", ".join(PREEMPTOR_TEMPLATES)
            raise ValueError(f"unknown preemptor template {chosen!r} (known: {known})")
    elif preemptor_template is not None:
        with_one = ", ".join(w for w in WORKLOADS if has_preemptor(w))
        raise ValueError(f"{name} has no preemptor (only {with_one} have one)")

    def resolve(slot: _Slot) -> Template:
        if isinstance(slot, str):
            assert chosen is not None
            return PREEMPTOR_TEMPLATES[chosen]
        return slot

    return Workload(
        name,
        dn if nodes is None else nodes,
        di if init_pods is None else init_pods,
        dp if pods is None else pods,
        resolve(init_t),
        resolve(measured_t),
        None if churn is None else resolve(churn),
        chosen,
    )


@dataclass(slots=True)
class BenchResult:
    workload: str
    nodes: int
    init_pods: int
    measured_pods: int
    scheduled: int
    wall_seconds: float
    throughput: float
    peak_rss_mib: float
    cycle_p50_ms: float
    cycle_p99_ms: float
    cycles: int
    preemptions: int
    churn_pods: int
    extra: dict[str, object] = field(default_factory=dict)
    preemptor_template: str | None = None

    def as_dict(self) -> dict[str, object]:
        """The ``-o json`` fields (``preemptorTemplate`` only for workloads with one)."""
        template = (
            {}
            if self.preemptor_template is None
            else {"preemptorTemplate": self.preemptor_template}
        )
        return {
            "workload": self.workload,
            "nodes": self.nodes,
            "initPods": self.init_pods,
            "measuredPods": self.measured_pods,
            "scheduled": self.scheduled,
            "wallSeconds": round(self.wall_seconds, 3),
            "throughput": round(self.throughput, 1),
            "peakRSSMiB": round(self.peak_rss_mib, 1),
            "cycleP50Ms": round(self.cycle_p50_ms, 3),
            "cycleP99Ms": round(self.cycle_p99_ms, 3),
            "cycles": self.cycles,
            "preemptions": self.preemptions,
            "churnPods": self.churn_pods,
            **template,
            **self.extra,
        }


def _percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    k = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[k]


def _node(i: int) -> Node:
    return Node(
        f"scheduler-perf-{i}",
        allocatable={"cpu": 4000, "memory": 32 * GI, "pods": 110},
    )


def run(
    wl: Workload,
    *,
    seed: int = 0,
    per_node: bool = False,
    progress: Callable[[int, int], None] | None = None,
    explain: bool = False,
) -> BenchResult:
    """Run one workload; ``progress(done, total)`` is called during the measured
    phase; ``explain`` records every attempt's explanation (its cost)."""
    registry = dict(in_tree_registry())
    sim = Simulation(default_config(supported=registry.keys()), registry, seed=seed)
    recorder = None
    if explain:
        recorder = ExplanationRecorder.attach(sim.scheduler)
    if per_node:
        for fwk in sim.scheduler.profiles.values():
            fwk.per_node = True
    cluster = sim.cluster
    for i in range(wl.nodes):
        cluster.create_node(_node(i))
    spec, prio = wl.init_template
    for i in range(wl.init_pods):
        cluster.create_pod(Pod(f"init-{i}", spec=spec, priority=prio))
    sim.run()

    spec, prio = wl.measured_template
    measured: list[str] = []
    for i in range(wl.measured_pods):
        p = Pod(f"measured-{i}", spec=spec, priority=prio)
        cluster.create_pod(p)
        measured.append(p.key)
    churned = [0]
    done = [False]
    if wl.churn is not None:
        cspec, cprio = wl.churn
        sim.cycle_cost = CYCLE_COST

        def churn() -> None:
            if done[0]:
                return
            cluster.create_pod(Pod(f"churn-{churned[0]}", spec=cspec, priority=cprio))
            churned[0] += 1
            sim.engine.after(CHURN_INTERVAL, churn)

        sim.engine.after(0, churn)

    pods = cluster.pods
    scheduled_count = [0]
    total = len(measured)
    pending = set(measured)
    # Keys bound since the last check: a pending pod bound now was bound since then
    # (it was not bound at that check), so only these need looking at.
    bound: list[str] = []
    cluster.bound_log = bound

    def all_scheduled() -> bool:
        # Checked after every cycle: count bound measured pods incrementally.
        if not pending:
            return True
        if sim.stats.cycles % 64 == 0 or len(pending) < 64:
            for key in bound:
                if key in pending and (p := pods.get(key)) is not None and p.node_name:
                    pending.discard(key)
            bound.clear()
            scheduled_count[0] = total - len(pending)
            if progress is not None:
                progress(scheduled_count[0], total)
        if not pending:
            done[0] = True
            return True
        return False

    sim.stop_when = all_scheduled
    cycle_times: list[float] = []
    sim.cycle_times = cycle_times
    cycles_before = sim.stats.cycles
    t0 = time.perf_counter()
    sim.run()
    wall = time.perf_counter() - t0
    done[0] = True
    cluster.bound_log = None
    scheduled = sum(1 for k in measured if (q := pods.get(k)) is not None and bool(q.node_name))
    cycle_times.sort()
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return BenchResult(
        wl.name,
        wl.nodes,
        wl.init_pods,
        wl.measured_pods,
        scheduled,
        wall,
        scheduled / wall if wall > 0 else 0.0,
        rss_kib / 1024,
        _percentile(cycle_times, 0.5) * 1000,
        _percentile(cycle_times, 0.99) * 1000,
        sim.stats.cycles - cycles_before,
        len(sim.record.preemptions),
        churned[0],
        extra={} if recorder is None else {"explainedPods": len(recorder.pods)},
        preemptor_template=wl.preemptor_template,
    )
