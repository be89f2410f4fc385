"""kubesched as a second scheduler of a live cluster: the wiring.

``LiveScheduler`` puts a ``LiveCluster`` (the informers' caches and the live
``Backend``), a ``LiveWriter`` (the API calls and events) and a ``Scheduler``
(the same core and plugins as the simulator) together; ``run`` hands them to
``kubesched.driver.loop.drive`` on wall-clock time until ``stop()`` (SIGTERM, a
lost lease) or ``until``. Who feeds the cluster's notifications (informers) and
who calls ``stop`` is the caller's business.

The scheduler takes only the pods whose ``spec.schedulerName`` names one of its
profiles (``Scheduler.responsible_for``); every other pod is still cached (it
uses resources, it may be a preemption victim).
"""

from __future__ import annotations

import random
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from kubesched.api.types import Time
from kubesched.driver.loop import RunStats, drive
from kubesched.framework.config import SchedulerConfig
from kubesched.live.client import KubeClient
from kubesched.live.cluster import LiveCluster, wall_clock
from kubesched.live.writer import LiveWriter
from kubesched.scheduler.config import API_VERSION, KIND, parse_config
from kubesched.scheduler.metrics import Metrics
from kubesched.scheduler.registry import in_tree_registry
from kubesched.scheduler.scheduler import Scheduler

LIVE_SCHEDULER_NAME: Final = "kubesched"
"""The profile name of live mode's default configuration."""

FOREVER: Final = 100 * 365 * 24 * 3600 * 1_000_000_000


def live_default_config() -> SchedulerConfig:
    """kube-scheduler's defaults with one profile named ``kubesched`` (live mode
    must not take the pods of the cluster's own ``default-scheduler``)."""
    return parse_config(
        {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "profiles": [{"schedulerName": LIVE_SCHEDULER_NAME}],
        },
        supported=in_tree_registry().keys(),
    )


class _Clock:
    __slots__ = ("now",)

    def __init__(self, now: Callable[[], Time]) -> None:
        self.now = now


@dataclass(slots=True)
class LiveScheduler:
    """One scheduler of a live cluster (see the module docstring)."""

    client: KubeClient
    config: SchedulerConfig
    clock: Callable[[], Time] = wall_clock
    seed: int | None = None
    """Seeds the tie-breaks and preemption offsets (None: from the OS)."""
    identity: str = field(default_factory=socket.gethostname)
    cluster: LiveCluster = field(init=False)
    writer: LiveWriter = field(init=False)
    scheduler: Scheduler = field(init=False)
    metrics: Metrics = field(default_factory=Metrics)
    stats: RunStats = field(default_factory=RunStats)

    def __post_init__(self) -> None:
        self.cluster = LiveCluster(self.clock)
        name = self.config.profiles[0].scheduler_name
        self.writer = LiveWriter(self.client, self.clock, name, f"{name}-{self.identity}")
        self.scheduler = Scheduler(
            self.config,
            in_tree_registry(),
            clock=_Clock(self.clock),
            rng=random.Random(self.seed),
            reader=self.cluster,
            writer=self.writer,
            recorder=self.writer,
            metrics=self.metrics,
        )
        self.cluster.watchers.append(self.scheduler)
        self.cluster.object_watchers.append(self.scheduler)

    def run(self, until: Time | None = None) -> RunStats:
        """Schedule until ``stop()`` or the wall clock reaches ``until``."""
        return drive(
            self.cluster,
            self.scheduler,
            self.stats,
            until=until,
            horizon=self.clock() + FOREVER,
            stop_when=lambda: self.cluster.stopping,
        )

    def stop(self) -> None:
        """End ``run`` at its next step (any thread)."""
        self.cluster.stop()
