"""Runs a scenario on the simulated cluster with one kube-scheduler: the wiring.

``Simulation`` puts an engine, a cluster (the backend, with its ``RunRecord``)
and a scheduler together; ``run`` hands them to ``kubesched.driver.loop.drive``,
which owns the loop and the rule that ends a run.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from kubesched.driver.loop import DEFAULT_HORIZON, RunStats, drive
from kubesched.driver.record import RunRecord
from kubesched.framework.config import SchedulerConfig
from kubesched.runtime.framework import PluginFactory
from kubesched.scheduler.metrics import Metrics
from kubesched.scheduler.scheduler import Scheduler
from kubesched.sim.cluster import Cluster, EngineClock
from kubesched.sim.engine import Engine


@dataclass(slots=True)
class Simulation:
    """One run: an engine, a cluster and a scheduler wired together."""

    config: SchedulerConfig
    registry: dict[str, PluginFactory]
    seed: int = 0
    watch: bool = False
    engine: Engine = field(default_factory=Engine)
    metrics: Metrics = field(default_factory=Metrics)
    cluster: Cluster = field(init=False)
    scheduler: Scheduler = field(init=False)
    stats: RunStats = field(default_factory=RunStats)
    on_cycle: Callable[[int], None] | None = None
    """Progress callback, called with the simulated time after each instant."""
    cycle_cost: int = 0
    """Simulated nanoseconds one scheduling cycle takes (0: cycles are instantaneous).
    Benchmarks set it so that arrivals paced in simulated time interleave with
    scheduling as they do on a real scheduler."""
    cycle_times: list[float] | None = None
    """When a list, the wall seconds of every scheduling cycle are appended to it."""
    stop_when: Callable[[], bool] | None = None
    """Checked after every cycle: True ends the run (benchmarks' measured phase)."""

    def __post_init__(self) -> None:
        # Independent seeded streams: the cluster's (uids, generated names) and the
        # scheduler's (tie-breaks, preemption offsets) do not disturb each other.
        self.cluster = Cluster(self.engine, random.Random(f"{self.seed}/cluster"), watch=self.watch)
        self.scheduler = Scheduler(
            self.config,
            self.registry,
            clock=EngineClock(self.engine),
            rng=random.Random(f"{self.seed}/scheduler"),
            reader=self.cluster,
            writer=self.cluster,
            recorder=self.cluster.record,
            metrics=self.metrics,
        )
        self.cluster.watchers.append(self.scheduler)
        self.cluster.object_watchers.append(self.scheduler)

    @property
    def record(self) -> RunRecord:
        return self.cluster.record

    def run(self, until: int | None = None, horizon: int = DEFAULT_HORIZON) -> RunStats:
        """Drive the run until its end (``kubesched.driver.loop``)."""
        return drive(
            self.cluster,
            self.scheduler,
            self.stats,
            until=until,
            horizon=horizon,
            cycle_cost=self.cycle_cost,
            cycle_times=self.cycle_times,
            stop_when=self.stop_when,
            on_advance=self.on_cycle,
        )
