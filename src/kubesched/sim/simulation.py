"""Runs a scenario on the simulated cluster with one kube-scheduler.

The loop, at each simulated instant:

1. apply every cluster change due now (creations, deletions, completions,
   grace-period expiries), delivering the resulting watch events to the
   scheduler — so objects created at the same instant are all queued before
   the next scheduling cycle, in input order;
2. run one scheduling cycle if a pod can be popped, deliver the watch events
   it caused, and go back to 1 (a cycle takes no simulated time);
3. when no pod can be popped, run the queue's periodic flushes if one is due
   now, then move the clock to the next cluster change or flush deadline.

The run ends:

- with ``until``: at that time, always (the queue's timers keep retrying
  pending pods on upstream's schedule until then);
- without: when no cluster change is scheduled before the safety horizon, no
  pod can be popped and every pod a queue timer would still retry (backoffQ;
  the unschedulable pool through the 5-minute leftover flush) was last
  attempted after the latest cluster change
  (``Scheduler.would_retry_on_a_changed_cluster``): upstream would retry those
  pods forever, each time with the same answer;
- at the safety horizon.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from kubesched.api.types import NANOS
from kubesched.framework.config import SchedulerConfig
from kubesched.runtime.framework import PluginFactory
from kubesched.scheduler.metrics import Metrics
from kubesched.scheduler.scheduler import Scheduler
from kubesched.sim.cluster import Cluster
from kubesched.sim.engine import Engine

DEFAULT_HORIZON = 24 * 3600 * NANOS


class SimClock:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def now(self) -> int:
        return self._engine.now


@dataclass(slots=True)
class RunStats:
    cycles: int = 0
    end_time: int = 0
    stopped_by: str = "idle"
    """``idle`` (nothing left to happen), ``until``, ``horizon`` or ``done``
    (``stop_when`` said so)."""


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
            clock=SimClock(self.engine),
            rng=random.Random(f"{self.seed}/scheduler"),
            reader=self.cluster,
            writer=self.cluster,
            recorder=self.cluster,
            metrics=self.metrics,
        )
        self.cluster.watchers.append(self.scheduler)
        self.cluster.object_watchers.append(self.scheduler)

    def run(self, until: int | None = None, horizon: int = DEFAULT_HORIZON) -> RunStats:
        engine = self.engine
        cluster = self.cluster
        sched = self.scheduler
        limit = horizon if until is None else until
        stats = self.stats
        times = self.cycle_times
        clock = time.perf_counter
        while True:
            engine.run_due()
            cluster.flush()
            if times is not None:
                t0 = clock()
                ran = sched.schedule_one()
                if ran:
                    times.append(clock() - t0)
            else:
                ran = sched.schedule_one()
            if ran:
                stats.cycles += 1
                cluster.flush()
                if self.cycle_cost:
                    engine.now += self.cycle_cost
                if self.stop_when is not None and self.stop_when():
                    stats.stopped_by = "done"
                    break
                continue
            deadline = sched.next_timer_deadline()
            if deadline is not None and deadline <= engine.now:
                sched.on_timer()
                cluster.flush()
                if sched.queue.has_poppable():
                    continue
                deadline = sched.next_timer_deadline()
                if deadline is not None and deadline <= engine.now:
                    deadline = None
            nxt = engine.next_time()
            if nxt is not None and nxt > limit:
                nxt = None  # beyond the run (a CronJob's next schedule weeks away, say)
            if nxt is None:
                # No cluster change is scheduled: only the queue's timers are left.
                if until is None and not sched.would_retry_on_a_changed_cluster():
                    # Every retry they would make sees the cluster its pod saw.
                    stats.stopped_by = "idle"
                    break
                nxt = deadline
            elif deadline is not None:
                nxt = min(nxt, deadline)
            if nxt is None and until is None:
                stats.stopped_by = "idle"  # nothing at all is left to happen
                break
            if nxt is None or nxt > limit:
                engine.now = limit if until is not None else engine.now
                stats.stopped_by = "until" if until is not None else "horizon"
                break
            engine.now = nxt
            if self.on_cycle is not None:
                self.on_cycle(nxt)
        stats.end_time = engine.now
        self.metrics.pending_pods = dict(sched.pending_counts())
        return stats
